/**
 * `wattshift hub`: the partner-side fleet service (see src/hub/). `wattshift hub --config FILE`
 * runs one instance until SIGTERM/SIGINT; `wattshift hub broker-files --config FILE --passwd P
 * --acl A` writes the Mosquitto password and ACL files from the hub registry (then reload the
 * broker with SIGHUP).
 */
import { writeFileSync } from 'node:fs';
import pg from 'pg';
import { systemClock } from '../clock.js';
import { createLogger } from '../log.js';
import { mosquittoFiles, mosquittoPasswordHash } from '../hub/broker-auth.js';
import { loadHubConfig, type HubConfig } from '../hub/config.js';
import { startHub, type Hub } from '../hub/hub.js';
import { migrate } from '../hub/migrations.js';
import { createRegistryStore } from '../hub/registry-store.js';
import { runDaemon } from './daemon.js';
import { exitCodes } from './exit-codes.js';
import type { CliCommand, CliIo } from './types.js';

async function writeBrokerFiles(config: HubConfig, paths: { passwd: string; acl: string }): Promise<number> {
  const pool = new pg.Pool({ connectionString: config.database.url, max: 1 });
  try {
    await migrate(pool);
    const registry = createRegistryStore(pool);
    const gateways = await registry.gateways();
    const files = mosquittoFiles({
      prefix: config.broker.topicPrefix,
      hub: { username: config.broker.username, passwordHash: mosquittoPasswordHash(config.broker.password) },
      gateways,
      locations: await registry.locations(),
    });
    writeFileSync(paths.passwd, files.passwd, { mode: 0o600 });
    writeFileSync(paths.acl, files.acl, { mode: 0o600 });
    return gateways.filter((g) => !g.revoked).length;
  } finally {
    await pool.end();
  }
}

function usage(io: CliIo, why: string): number {
  io.stderr(`wattshift hub: ${why}`);
  io.stderr(`usage: wattshift hub ${hubCommand.usage}`);
  return exitCodes.usage;
}

export const hubCommand: CliCommand = {
  name: 'hub',
  summary: 'run the partner-side fleet hub (API credentials, event fan-out, report outbox) for gateways in fleet mode',
  usage: '--config FILE | broker-files --config FILE --passwd FILE --acl FILE',
  options: { config: { type: 'string', short: 'c' }, passwd: { type: 'string' }, acl: { type: 'string' } },
  allowPositionals: true,
  help: [
    'Several instances may run on one PostgreSQL database and one MQTT 5 broker.',
    'broker-files writes the Mosquitto password and ACL files of every gateway that is not revoked.',
  ],
  async run(args, io) {
    const configPath = args.values.config;
    if (typeof configPath !== 'string') return usage(io, '--config FILE is required');
    const [sub, ...rest] = args.positionals;
    if (rest.length > 0 || (sub !== undefined && sub !== 'broker-files')) return usage(io, `unknown argument ${sub ?? ''}`);
    const { config, secrets } = loadHubConfig(configPath, io.env);
    if (sub === 'broker-files') {
      const { passwd, acl } = args.values;
      if (typeof passwd !== 'string' || typeof acl !== 'string') return usage(io, 'broker-files needs --passwd FILE and --acl FILE');
      const count = await writeBrokerFiles(config, { passwd, acl });
      io.stdout(`wrote ${passwd} and ${acl}: the hub and ${count} gateway(s); reload the broker (SIGHUP) to apply`);
      return exitCodes.ok;
    }
    const logger = createLogger({ secrets });
    let hub: Hub | undefined;
    return runDaemon(
      {
        start: async () => {
          hub = await startHub(config, { clock: systemClock, logger });
        },
        stop: async () => hub?.stop(),
      },
      { logger, signals: io.signals },
    );
  },
};
