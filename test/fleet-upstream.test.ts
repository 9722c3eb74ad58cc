/**
 * The fleet upstream against a real in-process aedes broker (MQTT 3.1.1: aedes has no MQTT 5),
 * with the real report outbox on a SQLite file and the hub played by the test over the wire
 * topics (our own port): reports are accepted only on their receipt, a missing receipt resends
 * the same key, a rejection is final, events go to the intake, bad messages are dropped.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { createLogger } from '../src/log.js';
import { openStore, type Store } from '../src/store/index.js';
import { startReportOutbox } from '../src/jobs/report-outbox.js';
import { fleetUpstreamSchema } from '../src/config/schema-upstream.js';
import { createFleetUpstream } from '../src/upstream/fleet.js';
import { defaultConfig } from '../src/config/load.js';
import { fleetTopics, type FleetReport } from '../src/fleet/wire.js';
import type { Upstream } from '../src/upstream/port.js';
import type { EventIntake } from '../src/upstream/port.js';
import { startAedes, type TestBroker } from './helpers/aedes.js';
import { until } from './helpers/until.js';

const t0 = Date.UTC(2026, 0, 14, 12);
const topics = fleetTopics();
const pollMs = 60_000;

let dir: string;
let store: Store;
let broker: TestBroker;
let hub: MqttClient;
let clock: ManualClock;
let lines: Record<string, unknown>[];
let upstream: Upstream;
let outbox: ReturnType<typeof startReportOutbox> | undefined;
/** What the hub saw on the report topic, in order. */
let reports: FleetReport[];
let accepted: unknown[];

const logger = () =>
  createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });

function fleetCfg() {
  return fleetUpstreamSchema.parse({
    mode: 'fleet',
    brokerUrl: broker.url,
    gatewayId: 'gw-1',
    username: 'gw-1',
    password: 'pw',
    locationId: 'home-1',
    protocolVersion: 4,
    receiptTimeoutS: 30,
  });
}

const publishJson = (topic: string, body: unknown, retain = false) =>
  hub.publishAsync(topic, typeof body === 'string' ? body : JSON.stringify(body), { qos: 1, retain });
const receipt = (key: string, status: 'accepted' | 'rejected', extra: Record<string, unknown> = {}) =>
  publishJson(topics.receipts('gw-1'), { v: 1, idempotencyKey: key, status, atMs: t0, ...extra });

function enqueue(eventId: string) {
  store.saveEvent({ eventId, createdAtMs: t0, receivedAtMs: t0, rawJson: '{}' });
  const body = {
    eventId,
    payloads: [
      { payloadType: 'ResourceLPCAcknowledgement', acknowledgedTargets: [{ meterPointId: 'mp', locationId: 'home-1', resourceId: 'res-ev' }] },
    ],
  };
  return store.enqueueReport({ idempotencyKey: `${eventId}:lpcAck`, eventId, kind: 'lpcAck', body, nowMs: t0 }).report;
}

function startOutbox() {
  outbox = startReportOutbox({
    outbox: store,
    sender: upstream.reports,
    clock,
    logger: logger(),
    pollMs,
    backoff: { baseMs: 60_000, maxMs: 3_600_000 },
    random: () => 0.5,
  });
}

async function startEvents() {
  const intake: EventIntake = { accept: (raw) => (accepted.push(raw), { outcome: 'new' }) };
  return upstream.startEvents({ intake, isKnownEvent: () => false, pricesChanged: () => undefined, onRefused: () => undefined });
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ws-fleet-'));
  clock = new ManualClock(t0);
  store = openStore({ path: join(dir, 'db.sqlite'), clock });
  lines = [];
  reports = [];
  accepted = [];
  broker = await startAedes();
  hub = await mqtt.connectAsync(broker.url, { clientId: 'hub-test' });
  hub.on('message', (topic, payload) => {
    if (topic === topics.reports('gw-1')) reports.push(JSON.parse(payload.toString()) as FleetReport);
  });
  await hub.subscribeAsync([topics.reports('gw-1'), topics.sync('gw-1')], { qos: 1 });
  upstream = createFleetUpstream(defaultConfig(), fleetCfg(), { clock, logger: logger(), reconnectPeriodMs: 200 });
  await upstream.open();
});

afterEach(async () => {
  await outbox?.stop();
  outbox = undefined;
  await upstream.close();
  await hub.endAsync(true);
  await broker.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('fleet upstream: reports', () => {
  it('publishes the report with the outbox key and marks it accepted only when the receipt comes; a duplicate receipt changes nothing', async () => {
    const row = enqueue('ev-1');
    startOutbox();
    await until(() => reports.length === 1, 'report published', { timeoutMs: 10_000, everyMs: 10 });
    expect(reports[0]).toMatchObject({ v: 1, idempotencyKey: 'ev-1:lpcAck', report: { eventId: 'ev-1' } });
    // Published, but no receipt yet: still in flight, not accepted.
    await new Promise((r) => setTimeout(r, 200));
    expect(store.getReport(row.id)?.state).toBe('sending');

    await receipt('ev-1:lpcAck', 'accepted', { reportId: 'api-77' });
    await until(() => store.getReport(row.id)?.state === 'accepted', 'accepted on receipt', { timeoutMs: 10_000, everyMs: 10 });
    expect(store.getReport(row.id)).toMatchObject({ remoteId: 'api-77', attempts: 1 });

    await receipt('ev-1:lpcAck', 'accepted', { reportId: 'api-77' });
    await new Promise((r) => setTimeout(r, 200));
    expect(store.getReport(row.id)).toMatchObject({ state: 'accepted', remoteId: 'api-77', attempts: 1 });
    expect(reports).toHaveLength(1);
    expect(lines.filter((l) => l.msg === 'report accepted')).toHaveLength(1);
  });

  it('no receipt within the timeout: retried with the outbox backoff under the same key, accepted on the second receipt', async () => {
    const row = enqueue('ev-2');
    startOutbox();
    await until(() => reports.length === 1, 'first send', { timeoutMs: 10_000, everyMs: 10 });
    await clock.advance(30_000);
    await until(() => store.getReport(row.id)?.state === 'pending', 'back to pending', { timeoutMs: 10_000, everyMs: 10 });
    expect(store.getReport(row.id)?.lastError).toContain('FLEET_RECEIPT_TIMEOUT');
    expect(lines.some((l) => l.code === 'FLEET_RECEIPT_TIMEOUT' && l.key === 'ev-2:lpcAck')).toBe(true);
    // The backoff's first step (60 s × 1.0 at random 0.5), then the same key again.
    await clock.advance(60_000);
    await until(() => reports.length === 2, 'resent', { timeoutMs: 10_000, everyMs: 10 });
    expect(reports[1]!.idempotencyKey).toBe('ev-2:lpcAck');
    await receipt('ev-2:lpcAck', 'accepted');
    await until(() => store.getReport(row.id)?.state === 'accepted', 'accepted', { timeoutMs: 10_000, everyMs: 10 });
    expect(store.getReport(row.id)?.attempts).toBe(2);
  });

  it("a rejected receipt makes a rejected row with the hub's reason, logged, never sent again", async () => {
    const row = enqueue('ev-3');
    startOutbox();
    await until(() => reports.length === 1, 'sent', { timeoutMs: 10_000, everyMs: 10 });
    await receipt('ev-3:lpcAck', 'rejected', { reason: "resource res-9 is not this gateway's" });
    await until(() => store.getReport(row.id)?.state === 'rejected', 'rejected', { timeoutMs: 10_000, everyMs: 10 });
    expect(store.getReport(row.id)?.lastError).toContain("resource res-9 is not this gateway's");
    expect(lines.some((l) => l.code === 'REPORT_REJECTED' && String(l.reason).includes('res-9'))).toBe(true);
    await clock.advance(10 * pollMs);
    await new Promise((r) => setTimeout(r, 200));
    expect(reports).toHaveLength(1);
  });

  it('a receipt that came after its wait timed out settles the next send at once', async () => {
    const row = enqueue('ev-4');
    startOutbox();
    await until(() => reports.length === 1, 'sent', { timeoutMs: 10_000, everyMs: 10 });
    await clock.advance(30_000);
    await until(() => store.getReport(row.id)?.state === 'pending', 'timed out', { timeoutMs: 10_000, everyMs: 10 });
    await receipt('ev-4:lpcAck', 'accepted', { reportId: 'api-4' });
    await new Promise((r) => setTimeout(r, 200));
    await clock.advance(60_000);
    await until(() => store.getReport(row.id)?.state === 'accepted', 'accepted from the kept receipt', { timeoutMs: 10_000, everyMs: 10 });
    expect(store.getReport(row.id)?.remoteId).toBe('api-4');
  });

  it('with the broker down a send fails at once as FLEET_BROKER_DOWN and is retried; health says so', async () => {
    await startEvents();
    await broker.stop();
    await until(() => !upstream.health().ok, 'down', { timeoutMs: 10_000, everyMs: 10 });
    expect(upstream.health().lastError?.code).toBe('FLEET_BROKER_DOWN');
    expect(lines.some((l) => l.code === 'FLEET_BROKER_DOWN' && l.level === 'warn')).toBe(true);
    const row = enqueue('ev-5');
    startOutbox();
    await until(() => store.getReport(row.id)?.attempts === 1 && store.getReport(row.id)?.state === 'pending', 'retry', {
      timeoutMs: 10_000,
      everyMs: 10,
    });
    expect(store.getReport(row.id)?.lastError).toContain('FLEET_BROKER_DOWN');
    await broker.start();
    await until(() => upstream.health().ok, 'up again', { timeoutMs: 10_000, everyMs: 10 });
  });
});

describe('fleet upstream: events, advice and bad messages', () => {
  const event = (id: string) => ({
    v: 1,
    receivedAtMs: t0,
    event: {
      id,
      createdAt: '2026-01-14T11:00:00Z',
      payload: {
        payloadType: 'LocationLPC',
        targets: [{ locationId: 'home-1', resolution: '01:00:00', points: [{ timestamp: '2026-01-14T14:00:00Z', maxPowerInKiloWatts: 1 }] }],
      },
    },
  });

  it('asks the hub for open events at start, and hands each event to the intake (those before the intake existed too)', async () => {
    const syncs: unknown[] = [];
    hub.on('message', (topic, payload) => topic === topics.sync('gw-1') && syncs.push(JSON.parse(payload.toString())));
    await until(() => syncs.length === 1, 'sync at start', { timeoutMs: 10_000, everyMs: 10 });
    expect(syncs[0]).toEqual({ v: 1, requestedAtMs: t0 });
    await publishJson(topics.events('home-1'), event('lpc-early'));
    await new Promise((r) => setTimeout(r, 200));
    expect(accepted).toEqual([]);
    await startEvents();
    await publishJson(topics.events('home-1'), event('lpc-late'));
    await until(() => accepted.length === 2, 'both events', { timeoutMs: 10_000, everyMs: 10 });
    expect(accepted.map((e) => (e as { id: string }).id)).toEqual(['lpc-early', 'lpc-late']);
  });

  it("serves the area's retained advice as prices; without advice yet the price source fails with FLEET_NO_ADVICE", async () => {
    await expect(upstream.prices.advice({ area: 'NO1' })).rejects.toMatchObject({ code: 'FLEET_NO_ADVICE' });
    expect(upstream.prices.forecast).toBeUndefined();
    const advice = {
      priceArea: 'NO1',
      priceUnits: { currency: 'EUR', energyUnit: 'kWh' },
      forecastAdvice: [{ from: '2026-01-14T12:00:00Z', to: '2026-01-14T17:00:00Z', averagePrice: 0.1, type: 'Good' }],
    };
    let woken = 0;
    await upstream.startEvents({
      intake: { accept: () => ({ outcome: 'new' }) },
      isKnownEvent: () => false,
      pricesChanged: () => void woken++,
      onRefused: () => undefined,
    });
    await publishJson(topics.advice('NO1'), { v: 1, fetchedAtMs: t0, advice }, true);
    await until(() => woken === 1, 'price refresh woken', { timeoutMs: 10_000, everyMs: 10 });
    await expect(upstream.prices.advice({ area: 'NO1' })).resolves.toMatchObject({ priceArea: 'NO1', forecastAdvice: [{ type: 'Good' }] });
  });

  it('drops and logs malformed wire messages with FLEET_MESSAGE_INVALID and goes on', async () => {
    const refused: string[] = [];
    await upstream.startEvents({
      intake: { accept: (raw) => (accepted.push(raw), { outcome: 'new' }) },
      isKnownEvent: () => false,
      pricesChanged: () => undefined,
      onRefused: (_input, code) => void refused.push(code),
    });
    await publishJson(topics.events('home-1'), 'not json {');
    await publishJson(topics.events('home-1'), { v: 2, receivedAtMs: t0, event: { id: 'x' } });
    await publishJson(topics.advice('NO1'), { v: 1, fetchedAtMs: -1, advice: {} });
    await publishJson(topics.receipts('gw-1'), { v: 1, idempotencyKey: '', status: 'maybe', atMs: t0 });
    await publishJson(topics.events('home-1'), event('lpc-good'));
    await until(() => accepted.length === 1, 'the good event still arrives', { timeoutMs: 10_000, everyMs: 10 });
    expect(refused).toEqual(['FLEET_MESSAGE_INVALID', 'FLEET_MESSAGE_INVALID', 'FLEET_MESSAGE_INVALID', 'FLEET_MESSAGE_INVALID']);
    expect(lines.filter((l) => l.code === 'FLEET_MESSAGE_INVALID').map((l) => l.topic)).toEqual([
      topics.events('home-1'),
      topics.events('home-1'),
      topics.advice('NO1'),
      topics.receipts('gw-1'),
    ]);
    expect(upstream.health().ok).toBe(true);
  });
});
