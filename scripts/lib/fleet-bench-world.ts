/**
 * The world of `bench:fleet` for one fleet size, all real peers on 127.0.0.1: a throwaway
 * PostgreSQL cluster with N homes in the hub registry, Mosquitto with the password and ACL files
 * the hub renders from it (per-gateway users and ACLs), the sandbox API counting requests by route,
 * one hub instance as a child process (the built `wattshift hub`), a relay in front of its webhook
 * that notes when each call arrives, and the gateways as light MQTT clients in child processes.
 * Everything started is stopped, and every temp dir removed, by `stop()`, also after a failure.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { systemClock } from '../../src/clock.js';
import { defaultFleetPrefix } from '../../src/fleet/wire.js';
import { mosquittoFiles, mosquittoPasswordHash } from '../../src/hub/broker-auth.js';
import { migrate } from '../../src/hub/migrations.js';
import { createRegistryStore } from '../../src/hub/registry-store.js';
import { silentLogger } from '../../src/log.js';
import { createSparkClient, type SparkClient } from '../../src/spark/client.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { startFleetBroker, type FleetBroker } from '../../test/helpers/fleet-broker.js';
import { freePort } from '../../test/helpers/mosquitto.js';
import { startPostgres, type PostgresCluster } from '../../test/helpers/postgres.js';
import { spawnDaemon, type DaemonProcess } from './daemon-process.js';
import type { SwarmGateway, SwarmReply, SwarmRequest } from './fleet-swarm.js';
import { startTcpRelay, type TcpRelay } from './tcp-relay.js';

export const benchAreas = ['NO1', 'NO2', 'NO3', 'NO4', 'NO5'] as const;
const webhookSecret = 'bench-fleet-hook';
const hubUser = { username: 'hub', password: 'bench-hub-pw' };
/** One password for every bench gateway: one hash to compute, while each still has its own user and ACL. */
const gatewayPassword = 'bench-gateway-pw';
const gatewaysPerSwarm = 2500;

export interface Swarm {
  child: ChildProcess;
  request(message: SwarmRequest, expect: SwarmReply['type']): Promise<SwarmReply>;
}

export interface FleetBenchWorld {
  homes: (SwarmGateway & { resourceId: string })[];
  sandbox: Sandbox;
  spark: SparkClient;
  broker: FleetBroker;
  hub: DaemonProcess;
  /** The hub's whole log (removed with the rest at stop). */
  hubLogPath: string;
  swarms: Swarm[];
  pool: pg.Pool;
  /** Wall-clock times at which a webhook call started to arrive at the hub. */
  webhookArrivals: number[];
  /** Sandbox responses by `METHOD pattern`, counted since the hub started. */
  apiCalls: Map<string, number>;
  provisionMs: number;
  connectMs: number;
  stop(): Promise<void>;
}

const wallMs = (): number => performance.timeOrigin + performance.now();

function startSwarm(): Swarm {
  const file = join(dirname(fileURLToPath(import.meta.url)), 'fleet-swarm.ts');
  const child = fork(file, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting: { type: SwarmReply['type']; resolve: (r: SwarmReply) => void; reject: (e: Error) => void }[] = [];
  child.on('message', (reply: SwarmReply) => {
    if (reply.type === 'failed') return void waiting.splice(0).forEach((w) => w.reject(new Error(`gateway swarm: ${reply.message}`)));
    const i = waiting.findIndex((w) => w.type === reply.type);
    if (i >= 0) waiting.splice(i, 1)[0]!.resolve(reply);
  });
  child.on('exit', (code) => waiting.splice(0).forEach((w) => w.reject(new Error(`gateway swarm exited with ${code}`))));
  return {
    child,
    request: (message, type) =>
      new Promise((resolve, reject) => {
        waiting.push({ type, resolve, reject });
        child.send(message);
      }),
  };
}

export async function startFleetBenchWorld(gatewayCount: number): Promise<FleetBenchWorld> {
  const stops: (() => Promise<unknown>)[] = [];
  // One cleanup, however many ask (Ctrl-C while the run also ends): each waits for all of it.
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      for (const s of stops.splice(0).reverse()) await s().catch((err: unknown) => console.error(`cleanup: ${String(err)}`));
    })());
  try {
    const dir = mkdtempSync(join(tmpdir(), 'wattshift-bench-fleet-'));
    stops.push(async () => rmSync(dir, { recursive: true, force: true }));
    const cluster: PostgresCluster = await startPostgres();
    stops.push(() => cluster.stop());
    const databaseUrl = await cluster.createDatabase('hub');
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 8 });
    stops.push(() => pool.end());
    await migrate(pool);
    const registry = createRegistryStore(pool);

    // Provisioning through the registry's own upserts, straight into the database: the API path
    // (five calls a home against the sandbox) adds nothing the delivery measurement needs.
    const provisionStarted = wallMs();
    const hash = mosquittoPasswordHash(gatewayPassword);
    const homes = Array.from({ length: gatewayCount }, (_, i) => {
      const n = String(i + 1).padStart(6, '0');
      return {
        gatewayId: `gw-${n}`,
        username: `gw-${n}`,
        password: gatewayPassword,
        locationId: `loc-${n}`,
        resourceId: `res-${n}-tank`,
        priceArea: benchAreas[i % benchAreas.length]!,
      };
    });
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = next++; i < homes.length; i = next++) {
          const h = homes[i]!;
          await registry.upsertGateway({ gatewayId: h.gatewayId, brokerUsername: h.username, brokerPasswordHash: hash, priceArea: h.priceArea });
          await registry.upsertLocation(
            {
              locationId: h.locationId,
              userId: `user-${h.gatewayId}`,
              priceArea: h.priceArea,
              meterPointId: `7070575${String(i).padStart(11, '0')}`,
              gatewayId: h.gatewayId,
            },
            [h.resourceId],
          );
        }
      }),
    );
    const provisionMs = wallMs() - provisionStarted;

    const files = mosquittoFiles({
      prefix: defaultFleetPrefix,
      hub: { username: hubUser.username, passwordHash: mosquittoPasswordHash(hubUser.password) },
      gateways: await registry.gateways(),
      locations: await registry.locations(),
    });
    const broker = await startFleetBroker(files);
    stops.push(() => broker.stop());

    const sandbox = await startSandbox({
      bodyLimitBytes: 64 * 1024 * 1024,
      webhookTimeoutMs: 120_000,
      webhookRetryDelaysMs: [5_000, 10_000, 20_000],
    });
    stops.push(() => sandbox.close());
    const credentials = sandbox.credentials[0]!;
    const spark = createSparkClient({
      baseUrl: sandbox.baseUrl,
      authUrl: sandbox.authUrl,
      clientId: credentials.clientId,
      clientSecret: credentials.clientSecret,
      clock: systemClock,
      logger: silentLogger(),
      timeoutsMs: { connect: 120_000, headers: 120_000, body: 120_000 },
      maxResponseBytes: 64 * 1024 * 1024,
    });
    stops.push(() => spark.close());

    const hubPort = await freePort();
    const webhookArrivals: number[] = [];
    // A request on a kept-alive connection starts with its request line.
    const relay: TcpRelay = await startTcpRelay('127.0.0.1', hubPort, {
      onClientData: (chunk) => void (chunk.subarray(0, 5).toString('latin1') === 'POST ' && webhookArrivals.push(wallMs())),
    });
    stops.push(() => relay.close());
    await spark.createWebhook({ webhookUrl: `http://127.0.0.1:${relay.port}/spark/notify`, webhookSecret, notificationTypes: ['PriceCurveCreated'] });

    const configPath = join(dir, 'hub.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        version: 1,
        instanceId: 'bench-hub',
        spark: {
          baseUrl: sandbox.baseUrl,
          authUrl: sandbox.authUrl,
          forecastUrl: sandbox.forecastUrl,
          clientId: credentials.clientId,
          clientSecret: credentials.clientSecret,
          requestTimeoutMs: 120_000,
        },
        database: { url: databaseUrl, poolSize: 4 },
        broker: { url: broker.hubUrl, username: hubUser.username, password: hubUser.password },
        webhook: { host: '127.0.0.1', port: hubPort, secret: webhookSecret, maxBodyBytes: 10_485_760 },
        // Faster than the defaults (300 s, hourly) so a run of minutes sees several of each.
        events: { pollIntervalS: 10 },
        advice: { cron: '* * * * *', timezone: 'UTC' },
      }),
      { mode: 0o600 },
    );
    const apiCalls = new Map<string, number>();
    const hubLogPath = join(dir, 'hub.log');
    const hub = spawnDaemon({ configPath, command: 'hub', logPath: hubLogPath });
    stops.push(() => hub.stop());
    sandbox.onResponse((r) => {
      const route = `${r.method} ${r.pattern ?? r.path}`;
      // The benchmark's own calls (it creates the events) are not the hub's.
      if (!r.path.includes('/simulation/')) apiCalls.set(route, (apiCalls.get(route) ?? 0) + 1);
    });
    await hub.ready;

    const connectStarted = wallMs();
    const swarms = Array.from({ length: Math.ceil(gatewayCount / gatewaysPerSwarm) }, () => startSwarm());
    stops.push(async () => {
      await Promise.all(
        swarms.map(
          (s) =>
            new Promise<void>((resolve) => {
              // Gone already (a Ctrl-C reaches the whole process group): its 'exit' has been and gone.
              if (s.child.exitCode !== null || s.child.signalCode !== null) return resolve();
              const timer = setTimeout(() => s.child.kill('SIGKILL'), 15_000);
              s.child.once('exit', () => (clearTimeout(timer), resolve()));
              if (s.child.connected) s.child.send({ type: 'stop' } satisfies SwarmRequest);
              else s.child.kill('SIGTERM');
            }),
        ),
      );
    });
    await Promise.all(
      swarms.map((s, i) =>
        s.request(
          {
            type: 'start',
            brokerUrl: broker.url,
            prefix: defaultFleetPrefix,
            gateways: homes.slice(i * gatewaysPerSwarm, (i + 1) * gatewaysPerSwarm),
          },
          'ready',
        ),
      ),
    );
    const connectMs = wallMs() - connectStarted;
    return { homes, sandbox, spark, broker, hub, hubLogPath, swarms, pool, webhookArrivals, apiCalls, provisionMs, connectMs, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
