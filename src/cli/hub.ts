/**
 * `wattshift hub`: the partner-side fleet service (see src/hub/). `wattshift hub --config FILE`
 * runs one instance until SIGTERM/SIGINT; `provision --csv FILE` creates homes (src/hub/provision.ts);
 * `wattshift hub broker-files --config FILE --passwd P
 * --acl A` writes the Mosquitto password and ACL files from the hub registry (then reload the
 * broker with SIGHUP).
 */
import { exitCodes } from './exit-codes.js';
import type { CliCommand, CliIo } from './types.js';

function usage(io: CliIo, why: string): number {
  io.stderr(`wattshift hub: ${why}`);
  io.stderr(`usage: wattshift hub ${hubCommand.usage}`);
  return exitCodes.usage;
}

export const hubCommand: CliCommand = {
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
  async run(args, io) {
    const configPath = args.values.config;
    if (typeof configPath !== 'string') return usage(io, '--config FILE is required');
    const [sub, ...rest] = args.positionals;
    if (rest.length > 0 || (sub !== undefined && sub !== 'broker-files' && sub !== 'provision')) return usage(io, `unknown argument ${sub ?? ''}`);
    // Loaded on demand: `wattshift run` never loads the hub or PostgreSQL's client.
    const { runBrokerFiles, runHub, runProvision } = await import('./hub-run.js');
    if (sub === 'provision') {
      const csv = args.values.csv;
      if (typeof csv !== 'string') return usage(io, 'provision needs --csv FILE');
      await runProvision(configPath, csv, io);
      return exitCodes.ok;
    }
    if (sub === 'broker-files') {
      const { passwd, acl } = args.values;
      if (typeof passwd !== 'string' || typeof acl !== 'string') return usage(io, 'broker-files needs --passwd FILE and --acl FILE');
      await runBrokerFiles(configPath, { passwd, acl }, io);
      return exitCodes.ok;
    }
    return runHub(configPath, io);
  },
};
