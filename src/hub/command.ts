/**
 * The work of `wattshift hub` (see src/cli/hub.ts), loaded only when that command runs, so the
 * daemon never loads PostgreSQL's client.
 */
import { writeFileSync } from 'node:fs';
import pg from 'pg';
import { systemClock } from '../clock.js';
import { createLogger } from '../log.js';
import { runDaemon } from '../cli/daemon.js';
import type { CliIo } from '../cli/types.js';
import { mosquittoFiles, mosquittoPasswordHash } from './broker-auth.js';
import { loadHubConfig, type HubConfig } from './config.js';
import { startHub, type Hub } from './hub.js';
import { migrate } from './migrations.js';
import { createRegistryStore } from './registry-store.js';

/** Writes the Mosquitto files of the registry; returns the number of gateways let in. */
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

/** Runs one hub instance until a signal; returns the exit code. */
export async function runHub(configPath: string, io: CliIo): Promise<number> {
  const { config, secrets } = loadHubConfig(configPath, io.env);
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
}

/** `broker-files`: writes both files and says what it wrote. */
export async function runBrokerFiles(configPath: string, paths: { passwd: string; acl: string }, io: CliIo): Promise<void> {
  const { config } = loadHubConfig(configPath, io.env);
  const count = await writeBrokerFiles(config, paths);
  io.stdout(`wrote ${paths.passwd} and ${paths.acl}: the hub and ${count} gateway(s); reload the broker (SIGHUP) to apply`);
}
