/**
 * `wattshift hub`: the partner-side fleet service (see src/hub/). `wattshift hub --config FILE`
 * runs one instance until SIGTERM/SIGINT; `provision --csv FILE` creates homes (src/hub/provision.ts);
 * `wattshift hub broker-files --config FILE --passwd P
 * --acl A` writes the Mosquitto password and ACL files from the hub registry (then reload the
 * broker with SIGHUP). The work is in hub-run.ts, in the hub's own bundle (wired in registry.ts through parts.ts).
 */
import type { CommandInfo } from './types.js';

export const hubCommand: CommandInfo = {
  name: 'hub',
  summary: 'run the partner-side fleet hub (API credentials, event fan-out, report outbox) for gateways in fleet mode',
  usage: '--config FILE | provision --config FILE --csv FILE | broker-files --config FILE --passwd FILE --acl FILE',
  options: { config: { type: 'string', short: 'c' }, passwd: { type: 'string' }, acl: { type: 'string' }, csv: { type: 'string' } },
  allowPositionals: true,
  help: [
    'Several instances may run on one PostgreSQL database and one MQTT 5 broker.',
    'provision creates the homes of a CSV (header gatewayId,userId,locationId,priceArea,meterPointId,resources;',
    'resources as id:Type;id:Type) in the API and the registry, and prints new gateway credentials.',
    'broker-files writes the Mosquitto password and ACL files of every gateway that is not revoked.',
  ],
};
