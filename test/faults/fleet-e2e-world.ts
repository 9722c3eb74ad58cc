/**
 * A small fleet on one accelerated timeline, every peer real: a throwaway PostgreSQL cluster,
 * Mosquitto with the password and ACL files the hub renders from its registry (persistent, so a
 * restart keeps the gateways' sessions), the sandbox API (world A's; its webhook calls hub-1),
 * two in-process hub instances sharing the database, and two homes (worlds A and B: each its own
 * simulated tank and charger) whose daemons run as their own processes in fleet mode with only
 * their broker logins. The homes are provisioned as `wattshift hub provision` does.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { Clock } from '../../src/ports.js';
import { localAt } from '../../src/demo/environment.js';
import { defaultFleetPrefix } from '../../src/fleet/wire.js';
import { mosquittoFiles, mosquittoPasswordHash } from '../../src/hub/broker-auth.js';
import { parseHubConfig, type HubConfig } from '../../src/hub/config.js';
import { startHub, type Hub } from '../../src/hub/hub.js';
import { migrate } from '../../src/hub/migrations.js';
import { parseHomesCsv, provisionHomes } from '../../src/hub/provision.js';
import { createRegistryStore, type RegistryStore } from '../../src/hub/registry-store.js';
import { createLogger } from '../../src/log.js';
import type { AcceptedReport } from '../../src/sandbox/state.js';
import type { DirectConfigInput } from '../../src/config/schema.js';
import { spawnDaemon, startWorld, waitUntilSim, writeConfig, type DaemonProcess, type World } from '../helpers/daemon-harness.js';
import { startFleetBroker, type FleetBroker } from '../helpers/fleet-broker.js';
import { freePort } from '../helpers/mosquitto.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';
import { faultOverrides, januaryDay, until } from './common.js';
import { spawnChildHub, type ChildHub } from './fleet-e2e-hub.js';

export const hourMs = 3_600_000;
const webhookSecret = 'fleet-e2e-hook-secret';
const hubBroker = { username: 'hub', password: 'hub-broker-pw' };

export interface HomeSpec {
  readonly key: 'a' | 'b';
  readonly gatewayId: string;
  readonly userId: string;
  readonly locationId: string;
  readonly meterPointId: string;
  /** Device id → resource id. */
  readonly resources: { readonly tank: string; readonly car: string };
}

export const homeSpecs: Record<'a' | 'b', HomeSpec> = {
  a: {
    key: 'a',
    gatewayId: 'gw-a',
    userId: 'user-a',
    locationId: 'loc-a',
    meterPointId: '707057500000000011',
    resources: { tank: 'res-a-tank', car: 'res-a-car' },
  },
  b: {
    key: 'b',
    gatewayId: 'gw-b',
    userId: 'user-b',
    locationId: 'loc-b',
    meterPointId: '707057500000000012',
    resources: { tank: 'res-b-tank', car: 'res-b-car' },
  },
};

export interface FleetHome extends HomeSpec {
  readonly world: World;
  /** Every daemon process started for this home, the running one last. */
  readonly daemons: DaemonProcess[];
  /** Starts the home's daemon (again) and waits until it runs. */
  start(): Promise<DaemonProcess>;
  /** Stops the running daemon with SIGTERM; resolves with its exit code. */
  stop(): Promise<number | null>;
  /** The daemon's `/healthz`: its status and the failing jobs with their error codes. */
  health(): Promise<{ status: number; failing: { job: string; error?: { code: string } }[] }>;
  /** The daemon's `/api/view` plan slots from now on. */
  planSlots(): Promise<{ startMs: number; deltaPerKwh: number; devices: { tank?: { powerKw: number }; car?: { powerKw: number } } }[]>;
}

export interface HubLogLine {
  level: number | string;
  msg: string;
  code?: string;
  [key: string]: unknown;
}

export interface FleetE2e {
  readonly speed: number;
  readonly clock: Clock;
  readonly homes: { a: FleetHome; b: FleetHome };
  readonly broker: FleetBroker;
  readonly pool: pg.Pool;
  readonly registry: RegistryStore;
  /** In-process hub instances by id. */
  readonly hubs: Map<string, Hub>;
  /** hub-2 when it runs as its own process. */
  readonly childHub: ChildHub | undefined;
  readonly hubLogs: HubLogLine[];
  /** World A: its sandbox is the partner's API, its client (the partner's credentials) makes events. */
  readonly api: World;
  startHub(instanceId: string): Promise<Hub>;
  /** Reports the API accepted for the homes, with the home each is about. */
  accepted(): (AcceptedReport & { home: 'a' | 'b' | '?'; kind: 'ack' | 'usage' })[];
  /** Waits in real time until the shared clock reads `ms`. */
  waitUntilSim(ms: number): Promise<void>;
  /** The start of the `n`-th whole hour after now. */
  hourFromNow(n: number): number;
  close(): Promise<void>;
}

export function homeOf(report: AcceptedReport): 'a' | 'b' | '?' {
  const text = JSON.stringify(report.payloads.map((p) => ({ ...(p.raw as object), resourceId: p.resourceId, locationId: p.locationId })));
  const a = text.includes('"loc-a"') || text.includes('"res-a-');
  const b = text.includes('"loc-b"') || text.includes('"res-b-');
  return a === b ? '?' : a ? 'a' : 'b';
}

export { until };

export async function startFleetE2e(
  name: string,
  options: {
    speed: number;
    startLocal?: [number, number];
    /** hub-2 as its own process on the world's clock, its API calls through a fault proxy (default: in this process). */
    childHub?: boolean;
  },
): Promise<FleetE2e> {
  const stops: (() => Promise<unknown>)[] = [];
  const close = async (): Promise<void> => {
    for (const s of stops.splice(0).reverse()) await s().catch(() => undefined);
  };
  try {
    // PostgreSQL first: its initdb takes seconds, which the accelerated clock would make hours.
    const cluster: PostgresCluster = await startPostgres();
    stops.push(() => cluster.stop());
    const databaseUrl = await cluster.createDatabase('hub');
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 3 });
    pool.on('error', () => undefined);
    stops.push(() => pool.end());
    await migrate(pool);
    const registry = createRegistryStore(pool);

    const [hh, mm] = options.startLocal ?? [8, 0];
    const startMs = localAt(januaryDay, 0, hh, mm);
    const realOriginMs = Date.now();
    const worldOf = (key: string) =>
      // The partner's API tokens live a simulated day: an hour is a second or two of wall time here.
      startWorld({ speed: options.speed, startMs, realOriginMs, dataDir: tempDir(`wattshift-fault-${name}-${key}-`), tokenTtlSeconds: 24 * 3600 });
    const [worldA, worldB] = await Promise.all([worldOf('a'), worldOf('b')]);
    stops.push(
      () => worldA.close(),
      () => worldB.close(),
    );
    const api = worldA;
    const clock = api.clock;

    // The homes, as `wattshift hub provision` makes them: in the API and in the registry.
    const csv = [
      'gatewayId,userId,locationId,priceArea,meterPointId,resources',
      ...Object.values(homeSpecs).map(
        (h) => `${h.gatewayId},${h.userId},${h.locationId},NO4,${h.meterPointId},${h.resources.tank}:HotWaterTank;${h.resources.car}:Charger`,
      ),
    ].join('\n');
    const { newCredentials } = await provisionHomes(parseHomesCsv(csv), { spark: api.spark, registry });
    const hubHash = mosquittoPasswordHash(hubBroker.password);
    const broker = await startFleetBroker(
      mosquittoFiles({
        prefix: defaultFleetPrefix,
        hub: { username: hubBroker.username, passwordHash: hubHash },
        gateways: await registry.gateways(),
        locations: await registry.locations(),
      }),
      { persistence: true },
    );
    stops.push(() => broker.stop());

    const hubLogs: HubLogLine[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (l: string) => void hubLogs.push(JSON.parse(l) as HubLogLine) } });
    const credentials = api.env.sandbox.credentials[0]!;
    const hubConfig = (instanceId: string): HubConfig =>
      parseHubConfig({
        version: 1,
        instanceId,
        spark: {
          baseUrl: api.env.sandbox.baseUrl,
          authUrl: api.env.sandbox.authUrl,
          forecastUrl: api.env.sandbox.forecastUrl,
          clientId: credentials.clientId,
          clientSecret: credentials.clientSecret,
        },
        database: { url: databaseUrl, poolSize: 3 },
        broker: { url: broker.hubUrl, ...hubBroker },
        webhook: { port: 0, secret: webhookSecret },
        // The poll is the safety net behind the webhook; an hour of simulated time is seconds here.
        events: { pollIntervalS: 3600 },
        // Prices every six simulated hours: hourly would re-plan both homes every second or two.
        advice: { cron: '7 */6 * * *' },
        outbox: { leaseS: 5, idleS: 1, retryMinS: 1, retryMaxS: 2 },
        // Retention compares the events' end times with the database's clock, which is real time
        // (late 2026) while these events are in a simulated January 2026: with the default 90 days
        // the first simulated night (03:23 UTC) deleted every event, and the hub then refused the
        // reports on them as FLEET_REPORT_FORBIDDEN ("did not target this gateway"). Ten years
        // keeps them; test/hub/hub-retention.test.ts covers retention itself.
        retention: { keepDays: 3650 },
      }).config;
    const hubs = new Map<string, Hub>();
    const startOneHub = async (instanceId: string): Promise<Hub> => {
      const hub = await startHub(hubConfig(instanceId), { clock, logger: logger.child({ hub: instanceId }) });
      hubs.set(instanceId, hub);
      stops.push(() => hub.stop());
      return hub;
    };
    const hub1 = await startOneHub('hub-1');
    let childHub: ChildHub | undefined;
    if (options.childHub) {
      const child = await spawnChildHub(worldA, hubConfig('hub-2'), worldA.dataDir);
      childHub = child;
      stops.push(async () => {
        child.kill();
        await child.exited;
        await child.proxy.close();
      });
    } else {
      await startOneHub('hub-2');
    }
    await api.spark.createWebhook({
      webhookUrl: hub1.webhookUrl,
      webhookSecret,
      notificationTypes: ['LocationLPCRequested', 'ResourceLPCRequested', 'PriceCurveCreated'],
    });

    const makeHome = async (spec: HomeSpec, world: World): Promise<FleetHome> => {
      const login = newCredentials.find((c) => c.gatewayId === spec.gatewayId)!;
      const { clientId: _id, clientSecret: _secret, ...spark } = world.config.spark;
      world.config = {
        ...world.config,
        spark: { ...spark, userId: spec.userId, locationId: spec.locationId, meterPointIds: [spec.meterPointId] },
        devices: world.config.devices?.map((d) => (d.kind === 'meter' ? d : { ...d, resourceId: spec.resources[d.id as 'tank' | 'car'] })),
      } as DirectConfigInput;
      writeFileSync(join(world.dataDir, 'fleet-password'), `${login.password}\n`, { mode: 0o600 });
      // A fresh port at every start: one picked long before may have become a connection's own.
      const writeHomeConfig = (port: number): string =>
        writeConfig(world, {
          ...faultOverrides,
          http: { enabled: true, host: '127.0.0.1', port },
          upstream: {
            mode: 'fleet',
            brokerUrl: broker.url,
            gatewayId: spec.gatewayId,
            username: login.username,
            password: { file: 'fleet-password' },
            locationId: spec.locationId,
            sessionExpiryHours: 168,
            // Simulated seconds: an hour is two wall seconds at 2000×, enough for the hub's upload.
            receiptTimeoutS: 3600,
          },
        });
      let httpPort = 0;
      const daemons: DaemonProcess[] = [];
      const get = async <T>(path: string): Promise<{ status: number; body: T }> => {
        const res = await fetch(`http://127.0.0.1:${httpPort}${path}`);
        return { status: res.status, body: (await res.json()) as T };
      };
      return {
        ...spec,
        world,
        daemons,
        async start() {
          httpPort = await freePort();
          const d = spawnDaemon(world, { configPath: writeHomeConfig(httpPort) });
          daemons.push(d);
          await d.waitForLog((l) => l.msg === 'running', 90_000);
          return d;
        },
        async stop() {
          const d = daemons.at(-1);
          if (!d || d.child.exitCode !== null || d.child.signalCode !== null) return null;
          d.kill('SIGTERM');
          return (await d.exited).code;
        },
        async health() {
          const { status, body } = await get<{ failing: { job: string; error?: { code: string } }[] }>('/healthz');
          return { status, failing: body.failing };
        },
        async planSlots() {
          const { body } = await get<{ plan: { slots: Awaited<ReturnType<FleetHome['planSlots']>> } | null }>('/api/view');
          return body.plan?.slots ?? [];
        },
      };
    };
    const homes = { a: await makeHome(homeSpecs.a, worldA), b: await makeHome(homeSpecs.b, worldB) };
    stops.push(async () => {
      for (const h of Object.values(homes)) {
        for (const d of h.daemons) d.kill('SIGKILL');
        await Promise.all(h.daemons.map((d) => d.exited));
      }
    });
    await Promise.all([homes.a.start(), homes.b.start()]);

    return {
      speed: options.speed,
      clock,
      homes,
      broker,
      pool,
      registry,
      hubs,
      childHub,
      hubLogs,
      api,
      startHub: startOneHub,
      accepted: () =>
        api.env.sandbox.acceptedReports(String(credentials.clientId)).map((r) => ({
          ...r,
          home: homeOf(r),
          kind: r.payloads.some((p) => p.payloadType.endsWith('LPCAcknowledgement')) ? ('ack' as const) : ('usage' as const),
        })),
      waitUntilSim: (ms) => waitUntilSim(api, ms),
      hourFromNow: (n) => Math.ceil(clock.nowMs() / hourMs) * hourMs + n * hourMs,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
