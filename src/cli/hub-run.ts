/**
 * The work of `wattshift hub` (see hub.ts beside it), in the hub's own bundle: the gateway never
 * loads the hub or PostgreSQL's client.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import { simClockFromEnv, systemClock } from '../clock.js';
import { createLogger } from '../log.js';
import { runDaemon } from './daemon.js';
import { exitCodes } from './exit-codes.js';
import { hubCommand } from './hub.js';
import type { CliIo, CommandArgs } from './types.js';
import { mosquittoFiles, mosquittoPasswordHash } from '../hub/broker-auth.js';
import { loadHubConfig, type HubConfig } from '../hub/config.js';
import { startHub, type Hub } from '../hub/hub.js';
import { migrate } from '../hub/migrations.js';
import { createRegistryStore } from '../hub/registry-store.js';
import { parseHomesCsv, provisionHomes } from '../hub/provision.js';
import { createSparkClient } from '../spark/client.js';

function usage(io: CliIo, why: string): number {
  io.stderr(`wattshift hub: ${why}`);
  io.stderr(`usage: wattshift hub ${hubCommand.usage}`);
  return exitCodes.usage;
}

/** Runs `work` on the migrated registry with one connection. */
async function withRegistry<T>(config: HubConfig, work: (registry: ReturnType<typeof createRegistryStore>) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: config.database.url, max: 1 });
  try {
    await migrate(pool);
    return await work(createRegistryStore(pool));
  } finally {
    await pool.end();
  }
}

/** The Mosquitto files of the registry as it is now. */
async function brokerFiles(config: HubConfig, registry: ReturnType<typeof createRegistryStore>) {
  return mosquittoFiles({
    prefix: config.broker.topicPrefix,
    hub: { username: config.broker.username, passwordHash: mosquittoPasswordHash(config.broker.password) },
    gateways: await registry.gateways(),
    locations: await registry.locations(),
  });
}

/** Runs one hub instance until a signal; returns the exit code. */
export async function runHub(configPath: string, io: CliIo): Promise<number> {
  const { config, secrets } = loadHubConfig(configPath, io.env);
  const logger = createLogger({ secrets });
  // Simulated time for the end-to-end fault tests only (as `wattshift run`); production never sets it.
  const sim = simClockFromEnv(io.env);
  if (sim) logger.warn({ speed: sim.speed }, 'running on a simulated clock (WATTSHIFT_SIM_CLOCK)');
  let hub: Hub | undefined;
  return runDaemon(
    {
      start: async () => {
        hub = await startHub(config, { clock: sim?.clock ?? systemClock, logger });
      },
      stop: async () => hub?.stop(),
    },
    { logger, signals: io.signals },
  );
}

/** `broker-files`: writes both files and says what it wrote. */
export async function runBrokerFiles(configPath: string, paths: { passwd: string; acl: string }, io: CliIo): Promise<void> {
  const { config } = loadHubConfig(configPath, io.env);
  const count = await withRegistry(config, async (registry) => {
    const files = await brokerFiles(config, registry);
    writeFileSync(paths.passwd, files.passwd, { mode: 0o600 });
    writeFileSync(paths.acl, files.acl, { mode: 0o600 });
    return (await registry.gateways()).filter((g) => !g.revoked).length;
  });
  io.stdout(`wrote ${paths.passwd} and ${paths.acl}: the hub and ${count} gateway(s); reload the broker (SIGHUP) to apply`);
}

/** `provision --csv FILE`: the homes of the CSV in the API and the registry; prints new credentials and the broker files. */
export async function runProvision(configPath: string, csvPath: string, io: CliIo): Promise<void> {
  const { config } = loadHubConfig(configPath, io.env);
  const homes = parseHomesCsv(readFileSync(csvPath, 'utf8'));
  const spark = createSparkClient({ ...config.spark, clock: systemClock, logger: createLogger({ level: 'warn' }) });
  try {
    const { result, files } = await withRegistry(config, async (registry) => {
      const result = await provisionHomes(homes, { spark, registry });
      return { result, files: await brokerFiles(config, registry) };
    });
    for (const c of result.changes) io.stdout(c);
    io.stdout(`${homes.length} home(s) provisioned, ${result.changes.length} change(s)`);
    for (const c of result.newCredentials)
      io.stdout(`gateway ${c.gatewayId}: broker user ${c.username}, password ${c.password} (shown once; put it in the gateway's config)`);
    io.stdout('# Mosquitto password file:');
    for (const line of files.passwd.trimEnd().split('\n')) io.stdout(line);
    io.stdout('# Mosquitto ACL file:');
    for (const line of files.acl.trimEnd().split('\n')) io.stdout(line);
  } finally {
    await spark.close();
  }
}

/** `wattshift hub [provision|broker-files]`: checks the arguments and runs the one asked for. */
export async function runHubCommand(args: CommandArgs, io: CliIo): Promise<number> {
  const configPath = args.values.config;
  if (typeof configPath !== 'string') return usage(io, '--config FILE is required');
  const [sub, ...rest] = args.positionals;
  if (rest.length > 0 || (sub !== undefined && sub !== 'broker-files' && sub !== 'provision')) return usage(io, `unknown argument ${sub ?? ''}`);
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
}
