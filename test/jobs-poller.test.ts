/**
 * The event poller with the real Spark client against the sandbox, through a TCP relay that can
 * cut the API off (an outage), a real store and the real intake.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { createLogger } from '../src/log.js';
import { openStore, type Store } from '../src/store/index.js';
import { startSandbox, type Sandbox } from '../src/sandbox/server.js';
import { createSparkClient, type SparkClient } from '../src/spark/client.js';
import { createEventIntake } from '../src/jobs/event-intake.js';
import type { Identity } from '../src/spark/event-normalise.js';
import { startEventPoller } from '../src/upstream/event-poller.js';
import { until } from './helpers/until.js';

// Tuesday 2025-11-04 09:00 UTC (10:00 Oslo): the daily curve check is hours away.
const t0 = Date.UTC(2025, 10, 4, 9);
const intervalMs = 5 * 60_000;
const me: Identity = { userId: 'user-1', locationId: 'home-1', resources: new Map([['res-tank', 'tank']]), meterPointIds: [] };

interface Relay {
  port: number;
  down: boolean;
  /** Goes down, cutting the connections already open. */
  cut(): void;
  close(): Promise<void>;
}
async function startRelay(targetPort: number): Promise<Relay> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((inbound) => {
    if (relay.down) return void inbound.destroy();
    const outbound = connect(targetPort, '127.0.0.1');
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const relay: Relay = {
    port: (server.address() as AddressInfo).port,
    down: false,
    cut: () => {
      relay.down = true;
      for (const s of sockets) s.destroy();
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return relay;
}

let dir: string;
let store: Store;
let sb: Sandbox;
let relay: Relay;
let client: SparkClient;
let admin: SparkClient;
let clock: ManualClock;
let acted: string[];
let pageCalls: number;
let poller: ReturnType<typeof startEventPoller> | undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ws-poller-'));
  clock = new ManualClock(t0);
  store = openStore({ path: join(dir, 'db.sqlite'), clock });
  sb = await startSandbox({ clock, autoTick: false, seed: 3 });
  relay = await startRelay(Number(new URL(sb.baseUrl).port));
  const via = (url: string) => url.replace(`:${new URL(sb.baseUrl).port}`, `:${relay.port}`);
  const creds = sb.credentials[0]!;
  const common = {
    clientId: creds.clientId,
    clientSecret: creds.clientSecret,
    clock,
    logger: createLogger({ level: 'silent' }),
    retry: { attempts: 1 },
  };
  client = createSparkClient({ ...common, baseUrl: via(sb.baseUrl), authUrl: via(sb.authUrl) });
  admin = createSparkClient({ ...common, baseUrl: sb.baseUrl, authUrl: sb.authUrl });
  acted = [];
  pageCalls = 0;
  sb.onResponse((r) => {
    if (r.method === 'GET' && r.pattern === '/events') pageCalls++;
  });
});

afterEach(async () => {
  await poller?.stop();
  poller = undefined;
  await client.close();
  await admin.close();
  await relay.close();
  await sb.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

function start() {
  const logger = createLogger({ level: 'silent' });
  const intake = createEventIntake({ store, identity: () => me, clock, logger, onEvent: (e) => acted.push(e.id) });
  poller = startEventPoller({ source: client, intake, isKnown: (id) => store.hasEvent(id), clock, logger, intervalMs, timeZone: 'Europe/Oslo' });
  return poller;
}

const curveFor = (resourceId: string, locationId: string) =>
  admin.simulatePriceCurve({
    targets: [{ resourceId, locationId }],
    priceCurveDelta: { resolution: '01:00:00', currency: 'NOK', energyUnit: 'kWh', points: [{ price: -0.5, timestamp: '2025-11-05T02:00:00Z' }] },
  });

/** One poll: advance to the next tick and wait until it has succeeded (or failed). */
async function pollOnce(p: ReturnType<typeof startEventPoller>): Promise<void> {
  const before = p.health();
  await clock.advance(intervalMs);
  const at = clock.nowMs();
  await until(
    () => {
      const h = p.health();
      return h.lastSuccessMs === at || (h.lastError !== null && h.lastError.atMs === at && h.lastError !== before.lastError);
    },
    'poll done',
    { settleTurns: 5 },
  );
}

describe('event poller against the sandbox', () => {
  it('hands each new event to the intake once and stores events for others as ignored', async () => {
    const mine = [await curveFor('res-tank', 'home-1'), await curveFor('res-tank', 'home-1')];
    const other = await curveFor('res-x', 'home-9');
    const p = start();
    await until(() => p.health().lastSuccessMs === t0, 'first poll', { settleTurns: 5 });
    expect(acted.sort()).toEqual(mine.map((e) => e.id).sort());
    expect(store.getEvent(other.id)?.state).toBe('ignored');
    await pollOnce(p);
    await pollOnce(p);
    expect(acted).toHaveLength(2);
    const third = await curveFor('res-tank', 'home-1');
    await pollOnce(p);
    expect(acted).toHaveLength(3);
    expect(acted[2]).toBe(third.id);
    expect(store.listEvents()).toHaveLength(4);
  });

  it('stops paging at known events', async () => {
    for (let i = 0; i < 230; i++) await curveFor('res-x', 'home-9');
    const p = start();
    await until(() => p.health().lastSuccessMs === t0, 'first poll', { settleTurns: 5 });
    expect(pageCalls).toBe(3); // 100 + 100 + 30
    expect(store.listEvents()).toHaveLength(230);
    pageCalls = 0;
    await pollOnce(p);
    expect(pageCalls).toBe(1); // newest page all known
    for (let i = 0; i < 5; i++) await curveFor('res-x', 'home-9');
    await curveFor('res-tank', 'home-1');
    pageCalls = 0;
    await pollOnce(p);
    expect(pageCalls).toBe(2); // page 1 mixes new and known, page 2 all known
    expect(store.listEvents()).toHaveLength(236);
    expect(acted).toHaveLength(1);
  });

  it('an API outage sets health not ok; it recovers and catches up', async () => {
    const p = start();
    await until(() => p.health().lastSuccessMs === t0, 'first poll', { settleTurns: 5 });
    expect(p.health()).toMatchObject({ ok: true, lastError: null });
    relay.cut();
    const during = await curveFor('res-tank', 'home-1');
    await pollOnce(p);
    const h = p.health();
    expect(h.ok).toBe(false);
    expect(h.lastError?.code).toBe('API_UNAVAILABLE');
    expect(h.lastSuccessMs).toBe(t0);
    expect(acted).toEqual([]);
    relay.down = false;
    // After a failure the loop waits min(interval, 60 s).
    await clock.advance(60_000);
    await until(() => p.health().ok, 'recovered', { settleTurns: 5 });
    expect(acted).toEqual([during.id]);
    expect(p.health().lastSuccessMs).toBe(clock.nowMs());
  });
});
