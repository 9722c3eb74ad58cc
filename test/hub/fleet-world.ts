/**
 * A small fleet for hub tests, all real peers: a throwaway PostgreSQL cluster, the sandbox API,
 * a Mosquitto broker with the password and ACL files the hub renders from its registry, and two
 * gateways (gw-a: location loc-a with resource res-a in NO1; gw-b: loc-b with res-b in NO2).
 */
import mqtt, { type MqttClient } from 'mqtt';
import pg from 'pg';
import { systemClock } from '../../src/clock.js';
import { defaultFleetPrefix } from '../../src/fleet/wire.js';
import { mosquittoFiles, mosquittoPasswordHash } from '../../src/hub/broker-auth.js';
import { parseHubConfig, type HubConfig } from '../../src/hub/config.js';
import { startHub, type Hub } from '../../src/hub/hub.js';
import { migrate } from '../../src/hub/migrations.js';
import { createRegistryStore, type RegistryStore } from '../../src/hub/registry-store.js';
import { createLogger, type Logger } from '../../src/log.js';
import type { Clock } from '../../src/ports.js';
import { createSparkClient, type SparkClient } from '../../src/spark/client.js';
import { fleetTopics } from '../../src/fleet/wire.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { startFleetBroker, type FleetBroker } from '../helpers/fleet-broker.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';

export const prefix = defaultFleetPrefix;
export const webhookSecret = 'fleet-hook-secret';
const hubUser = { username: 'hub', password: 'hub-broker-pw' };
export const gateways = {
  a: {
    gatewayId: 'gw-a',
    username: 'gw-a-user',
    password: 'gw-a-pw',
    locationId: 'loc-a',
    userId: 'user-a',
    resourceId: 'res-a',
    meterPointId: '707057500000000001',
    priceArea: 'NO1',
  },
  b: {
    gatewayId: 'gw-b',
    username: 'gw-b-user',
    password: 'gw-b-pw',
    locationId: 'loc-b',
    userId: 'user-b',
    resourceId: 'res-b',
    meterPointId: '707057500000000002',
    priceArea: 'NO2',
  },
} as const;

export interface LogLine {
  level: string;
  code?: string;
  msg: string;
  [key: string]: unknown;
}

export interface FleetWorld {
  pg: PostgresCluster;
  databaseUrl: string;
  pool: pg.Pool;
  registry: RegistryStore;
  sandbox: Sandbox;
  broker: FleetBroker;
  logs: LogLine[];
  logger: Logger;
  hubConfig(overrides?: Record<string, unknown>): HubConfig;
  startHub(instanceId: string, overrides?: Record<string, unknown>, clock?: Clock): Promise<Hub>;
  /** The broker files as the registry says now. */
  brokerFiles(): Promise<{ passwd: string; acl: string }>;
  stop(): Promise<void>;
}

export async function startFleetWorld(): Promise<FleetWorld> {
  const cluster = await startPostgres();
  const databaseUrl = await cluster.createDatabase('hub');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  await migrate(pool);
  const registry = createRegistryStore(pool);
  for (const g of Object.values(gateways)) {
    await registry.upsertGateway({
      gatewayId: g.gatewayId,
      brokerUsername: g.username,
      brokerPasswordHash: mosquittoPasswordHash(g.password),
      priceArea: g.priceArea,
    });
    await registry.upsertLocation(
      { locationId: g.locationId, userId: g.userId, priceArea: g.priceArea, meterPointId: g.meterPointId, gatewayId: g.gatewayId },
      [g.resourceId],
    );
  }
  const hubHash = mosquittoPasswordHash(hubUser.password);
  const brokerFiles = async () =>
    mosquittoFiles({
      prefix,
      hub: { username: hubUser.username, passwordHash: hubHash },
      gateways: await registry.gateways(),
      locations: await registry.locations(),
    });
  const broker = await startFleetBroker(await brokerFiles());
  // Bodies of a few MB: events that target many homes.
  const sandbox = await startSandbox({ webhookRetryDelaysMs: [200, 400, 800], webhookTimeoutMs: 2000, bodyLimitBytes: 8 * 1024 * 1024 });
  const logs: LogLine[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (l: string) => void logs.push(JSON.parse(l) as LogLine) } });
  const credentials = sandbox.credentials[0]!;
  const hubConfig = (overrides: Record<string, unknown> = {}): HubConfig =>
    parseHubConfig({
      version: 1,
      spark: {
        baseUrl: sandbox.baseUrl,
        authUrl: sandbox.authUrl,
        forecastUrl: sandbox.forecastUrl,
        clientId: credentials.clientId,
        clientSecret: credentials.clientSecret,
      },
      database: { url: databaseUrl, poolSize: 4 },
      broker: { url: broker.hubUrl, username: hubUser.username, password: hubUser.password },
      webhook: { port: 0, secret: webhookSecret },
      events: { pollIntervalS: 3600 },
      outbox: { leaseS: 2, idleS: 1, retryMinS: 1, retryMaxS: 2 },
      ...overrides,
    }).config;
  const hubs: Hub[] = [];
  return {
    pg: cluster,
    databaseUrl,
    pool,
    registry,
    sandbox,
    broker,
    logs,
    logger,
    hubConfig,
    async startHub(instanceId, overrides = {}, clock = systemClock) {
      const hub = await startHub(hubConfig({ instanceId, ...overrides }), { clock, logger: logger.child({ hub: instanceId }) });
      hubs.push(hub);
      return hub;
    },
    brokerFiles,
    async stop() {
      for (const h of hubs) await h.stop();
      await sandbox.close();
      await broker.stop();
      await pool.end();
      await cluster.stop();
    },
  };
}

export interface GatewayClient {
  client: MqttClient;
  messages: { topic: string; payload: unknown; retain: boolean }[];
  waitFor(predicate: (m: { topic: string; payload: unknown }) => boolean, timeoutMs?: number): Promise<{ topic: string; payload: unknown }>;
  close(): Promise<void>;
}

/** A light gateway: an MQTT 5 client with its broker credentials that records what it receives. */
export async function connectGateway(world: FleetWorld, g: { username: string; password: string }): Promise<GatewayClient> {
  const client = await mqtt.connectAsync(world.broker.url, {
    protocolVersion: 5,
    username: g.username,
    password: g.password,
    reconnectPeriod: 0,
    connectTimeout: 5000,
  });
  const messages: GatewayClient['messages'] = [];
  client.on('message', (topic, payload, packet) =>
    messages.push({ topic, payload: JSON.parse(payload.toString('utf8')) as unknown, retain: packet.retain }),
  );
  return {
    client,
    messages,
    async waitFor(predicate, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = messages.find(predicate);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no such message within ${timeoutMs} ms; got ${JSON.stringify(messages.map((m) => m.topic))}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => client.endAsync(),
  };
}

/** Waits until `check` returns a value other than undefined. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The world with two hub instances, a partner API client and both gateways connected. */
export interface FleetScene {
  world: FleetWorld;
  hub1: Hub;
  hub2: Hub;
  spark: SparkClient;
  gwA: GatewayClient;
  gwB: GatewayClient;
  stop(): Promise<void>;
}

export async function startFleetScene(): Promise<FleetScene> {
  const world = await startFleetWorld();
  const hub1 = await world.startHub('hub-1');
  const hub2 = await world.startHub('hub-2');
  const c = world.sandbox.credentials[0]!;
  const spark = createSparkClient({
    baseUrl: world.sandbox.baseUrl,
    authUrl: world.sandbox.authUrl,
    clientId: c.clientId,
    clientSecret: c.clientSecret,
    clock: systemClock,
    logger: world.logger,
  });
  const gwA = await connectGateway(world, gateways.a);
  const gwB = await connectGateway(world, gateways.b);
  const topics = fleetTopics(prefix);
  await gwA.client.subscribeAsync(topics.receipts(gateways.a.gatewayId), { qos: 1 });
  await gwB.client.subscribeAsync(topics.receipts(gateways.b.gatewayId), { qos: 1 });
  return {
    world,
    hub1,
    hub2,
    spark,
    gwA,
    gwB,
    async stop() {
      await gwA.close();
      await gwB.close().catch(() => undefined);
      await spark.close();
      await world.stop();
    },
  };
}
