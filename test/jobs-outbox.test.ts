/**
 * The report outbox with a real SQLite store and the real Spark client talking HTTP to a local
 * stub API: order, outcomes, backoff on the clock, exactly-once after outages and restarts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { createLogger } from '../src/log.js';
import { openStore, type Store } from '../src/store/index.js';
import { createSparkClient, type SparkClient } from '../src/spark/client.js';
import { backoffMs } from '../src/timing/backoff.js';
import { startReportOutbox } from '../src/jobs/report-outbox.js';
import { monthEndDeadlineMs, reportDeadlineMs } from '../src/spark/report-rules.js';
import { json, startStub, type StubReply, type StubServer } from './fixtures/spark/stub-server.js';
import { until } from './helpers/until.js';

const t0 = Date.UTC(2025, 10, 3, 12);
const backoff = { baseMs: 60_000, maxMs: 3_600_000 };
const half = () => 0.5;
const pollMs = 60_000;

let dir: string;
let store: Store;
let stub: StubServer;
let client: SparkClient;
let clock: ManualClock;
let lines: Record<string, unknown>[];
let outbox: ReturnType<typeof startReportOutbox> | undefined;
/** What the stub answers to POST /reports, per call. */
let answer: (eventId: string, n: number) => StubReply;

const posts = (): string[] =>
  stub
    .apiRequests()
    .filter((r) => r.method === 'POST' && r.path.endsWith('/reports'))
    .map((r) => (JSON.parse(r.body) as { eventId: string }).eventId);

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ws-outbox-'));
  clock = new ManualClock(t0);
  store = openStore({ path: join(dir, 'db.sqlite'), clock });
  lines = [];
  let n = 0;
  answer = (eventId) => json({ id: `remote-${eventId}`, eventId });
  stub = await startStub((req) => answer((JSON.parse(req.body) as { eventId: string }).eventId, ++n));
  client = createSparkClient({
    baseUrl: `${stub.url}/energy-coordination/v1`,
    authUrl: stub.url,
    clientId: 'c',
    clientSecret: 's',
    clock,
    logger: createLogger({ level: 'silent' }),
    retry: { attempts: 1 },
    timeoutsMs: { headers: 2000, body: 2000 },
  });
});

afterEach(async () => {
  await outbox?.stop();
  outbox = undefined;
  await client.close();
  await stub.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

function enqueue(eventId: string, opts: { nowMs?: number; nextAttemptMs?: number; deadlineMs?: number | null } = {}) {
  store.saveEvent({ eventId, createdAtMs: t0, receivedAtMs: t0, rawJson: '{}' });
  const body = {
    eventId,
    payloads: [
      { payloadType: 'ResourceLPCAcknowledgement', acknowledgedTargets: [{ meterPointId: 'mp', locationId: 'home-1', resourceId: 'res-ev' }] },
    ],
  };
  return store.enqueueReport({ idempotencyKey: `${eventId}:lpcAck`, eventId, kind: 'lpcAck', body, nowMs: opts.nowMs ?? t0, ...opts }).report;
}

function start(extra: { deadlineWarningMs?: number } = {}) {
  outbox = startReportOutbox({
    outbox: store,
    sender: { postReport: (body, signal) => client.postReport(body as never, { signal }) },
    clock,
    logger: createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } }),
    pollMs,
    backoff,
    random: half,
    ...extra,
  });
  return outbox;
}

/** Waits (real time, bounded) until the loop is idle with `check` true. */
const stateOf = (id: number) => store.getReport(id)?.state;

describe('report outbox', () => {
  it('sends due reports oldest first and keeps the remote id', async () => {
    const a = enqueue('ev-a', { nowMs: t0 - 2000 });
    const b = enqueue('ev-b', { nowMs: t0 - 1000 });
    const later = enqueue('ev-later', { nextAttemptMs: t0 + 10 * pollMs });
    start();
    await until(() => stateOf(b.id) === 'accepted', 'b accepted', { settleTurns: 5 });
    expect(posts()).toEqual(['ev-a', 'ev-b']);
    expect(store.getReport(a.id)).toMatchObject({ state: 'accepted', remoteId: 'remote-ev-a', attempts: 1 });
    expect(stateOf(later.id)).toBe('pending');
    expect(outbox?.health()).toEqual({ ok: true, lastError: null, deadlineWarning: false });
    await clock.advance(10 * pollMs);
    await until(() => stateOf(later.id) === 'accepted', 'later accepted', { settleTurns: 5 });
    expect(posts()).toEqual(['ev-a', 'ev-b', 'ev-later']);
  });

  it('409 counts as accepted; a 4xx rejection is final with its reason kept', async () => {
    answer = (eventId) => (eventId === 'ev-409' ? { status: 409 } : json({ title: 'Bad report', detail: 'timestamp is outside the event' }, 400));
    const c = enqueue('ev-409');
    const r = enqueue('ev-400');
    start();
    await until(() => stateOf(r.id) === 'rejected', 'rejected', { settleTurns: 5 });
    expect(store.getReport(c.id)).toMatchObject({ state: 'accepted', remoteId: null });
    expect(store.getReport(r.id)?.lastError).toContain('timestamp is outside the event');
    expect(outbox?.health()).toMatchObject({ ok: false, lastError: { code: 'API_REJECTED', atMs: t0 } });
    expect(lines.some((l) => l.code === 'REPORT_REJECTED' && String(l.reason).includes('outside the event'))).toBe(true);
    // Nothing is sent again.
    await clock.advance(5 * pollMs);
    await until(() => true, 'idle', { settleTurns: 5 });
    expect(posts()).toEqual(['ev-409', 'ev-400']);
  });

  it.each([
    ['500', (): StubReply => json({ title: 'oops' }, 500)],
    ['503', (): StubReply => ({ status: 503 })],
    ['429 with Retry-After', (): StubReply => ({ status: 429, headers: { 'retry-after': '3600' } })],
  ])('retries after %s with backoff on the clock, then sends each report exactly once', async (_name, failure) => {
    let down = true;
    answer = (eventId) => (down ? failure() : json({ id: `remote-${eventId}` }));
    const a = enqueue('ev-a', { nowMs: t0 - 1 });
    const b = enqueue('ev-b');
    start();
    await until(() => store.getReport(b.id)?.attempts === 1 && stateOf(b.id) === 'pending', 'both failed once', { settleTurns: 5 });
    const first = t0 + backoffMs(1, backoff, half);
    expect(store.getReport(a.id)).toMatchObject({ state: 'pending', attempts: 1, nextAttemptMs: first });
    expect(store.getReport(a.id)?.lastError).toMatch(/^API_UNAVAILABLE: /);
    expect(outbox?.health()).toMatchObject({ ok: false, lastError: { code: 'API_UNAVAILABLE' } });
    // Not before the backoff: the poll at t0+60 s finds nothing due.
    await clock.advance(first - t0 - 1);
    await until(() => true, 'idle', { settleTurns: 5 });
    expect(posts()).toHaveLength(2);
    // Second failure: the delay doubles.
    await clock.advance(pollMs);
    await until(() => store.getReport(b.id)?.attempts === 2 && stateOf(b.id) === 'pending', 'second failure', { settleTurns: 5 });
    const second = store.getReport(a.id)?.nextAttemptMs ?? 0;
    expect(second - clock.nowMs()).toBe(backoffMs(2, backoff, half));
    // Recovery.
    down = false;
    await clock.advance(second - clock.nowMs() + pollMs);
    await until(() => stateOf(a.id) === 'accepted' && stateOf(b.id) === 'accepted', 'both accepted', { settleTurns: 5 });
    await clock.advance(10 * pollMs);
    await until(() => true, 'idle', { settleTurns: 5 });
    expect(posts()).toEqual(['ev-a', 'ev-b', 'ev-a', 'ev-b', 'ev-a', 'ev-b']);
    expect(outbox?.health().ok).toBe(true);
    expect(store.getReport(a.id)).toMatchObject({ attempts: 3, remoteId: 'remote-ev-a' });
  });

  it('retries after a network failure (API down) and sends once when it is back', async () => {
    const a = enqueue('ev-net');
    await stub.close();
    start();
    await until(() => store.getReport(a.id)?.attempts === 1 && stateOf(a.id) === 'pending', 'failed once', { settleTurns: 5 });
    expect(store.getReport(a.id)?.nextAttemptMs).toBe(t0 + backoffMs(1, backoff, half));
    await outbox?.stop();
    // The API comes back on a new port; a restarted daemon sends it.
    stub = await startStub(() => json({ id: 'remote-net' }));
    await client.close();
    client = createSparkClient({
      baseUrl: `${stub.url}/energy-coordination/v1`,
      authUrl: stub.url,
      clientId: 'c',
      clientSecret: 's',
      clock,
      logger: createLogger({ level: 'silent' }),
      retry: { attempts: 1 },
    });
    start();
    await until(() => true, 'idle', { settleTurns: 5 });
    expect(posts()).toEqual([]); // not due yet at restart
    await clock.advance(pollMs);
    await until(() => stateOf(a.id) === 'accepted', 'accepted', { settleTurns: 5 });
    expect(posts()).toEqual(['ev-net']);
  });

  it('a report left sending by a crash is sent again after a restart; the API’s duplicate answer counts as accepted', async () => {
    const a = enqueue('ev-crash');
    store.markSending(a.id, t0); // the process died during the POST, which got through
    store.close();
    store = openStore({ path: join(dir, 'db.sqlite'), clock });
    expect(store.interruptedAtOpen.map((r) => r.id)).toEqual([a.id]);
    answer = () => ({ status: 400, body: `duplicate: a ResourceLPCAcknowledgement report of event ev-crash was already accepted (report r-1)` });
    start();
    await until(() => stateOf(a.id) !== 'pending' && stateOf(a.id) !== 'sending', 'settled', { settleTurns: 5 });
    expect(store.getReport(a.id)).toMatchObject({ state: 'accepted', attempts: 2 });
    expect(posts()).toEqual(['ev-crash']);
  });

  it('a first attempt refused as a duplicate, or a report naming a target twice, is a real rejection', async () => {
    const a = enqueue('ev-dup-first');
    answer = () => ({ status: 400, body: 'duplicate: a ResourceLPCAcknowledgement report of event ev-dup-first was already accepted (report r-9)' });
    start();
    await until(() => stateOf(a.id) === 'rejected', 'rejected', { settleTurns: 5 });
    await outbox?.stop();
    const b = enqueue('ev-twice');
    store.markSending(b.id, t0);
    store.markRetry(b.id, 'API_UNAVAILABLE: timeout', t0);
    answer = () => ({ status: 400, body: 'duplicate: the report names target res-ev twice' });
    start();
    await until(() => stateOf(b.id) === 'rejected', 'rejected', { settleTurns: 5 });
    expect(store.getReport(b.id)?.lastError).toContain('names target res-ev twice');
  });

  it('warns once when an unsent report nears its deadline and sets the health flag', async () => {
    enqueue('ev-late', { nextAttemptMs: t0 + 30 * 86_400_000, deadlineMs: t0 + 86_400_000 });
    start();
    await until(() => outbox?.health().deadlineWarning === true, 'flag set', { settleTurns: 5 });
    for (let i = 0; i < 5; i++) await clock.advance(pollMs);
    await until(() => true, 'idle', { settleTurns: 5 });
    const warnings = () => lines.filter((l) => l.code === 'REPORT_DEADLINE_NEAR');
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ level: 'warn', deadlineMs: t0 + 86_400_000 });
    // The check is a node-cron job every six hours (UTC): still unsent at 18:00, it warns again.
    await clock.advance(Date.UTC(2025, 10, 3, 18) - clock.nowMs() - 1000);
    await until(() => true, 'idle', { settleTurns: 5 });
    expect(warnings()).toHaveLength(1);
    await clock.advance(2000);
    await until(() => warnings().length === 2, 'second warning at 18:00', { settleTurns: 5 });
  });

  it('no warning while the deadline is far', async () => {
    enqueue('ev-far', { nextAttemptMs: t0 + 30 * 86_400_000, deadlineMs: t0 + 20 * 86_400_000 });
    start();
    await clock.advance(pollMs);
    await until(() => true, 'idle', { settleTurns: 5 });
    expect(outbox?.health().deadlineWarning).toBe(false);
    expect(lines.filter((l) => l.code === 'REPORT_DEADLINE_NEAR')).toEqual([]);
  });
});

describe('monthEndDeadlineMs', () => {
  it('is the first instant of the next UTC month', () => {
    expect(monthEndDeadlineMs(Date.UTC(2025, 9, 31, 23))).toBe(Date.UTC(2025, 10, 1));
    expect(monthEndDeadlineMs(Date.UTC(2025, 10, 1, 0))).toBe(Date.UTC(2025, 11, 1));
    expect(monthEndDeadlineMs(Date.UTC(2025, 11, 31, 23))).toBe(Date.UTC(2026, 0, 1));
    expect(monthEndDeadlineMs(Date.UTC(2024, 1, 29, 5))).toBe(Date.UTC(2024, 2, 1));
  });
});

describe('reportDeadlineMs', () => {
  it('is the month end after the last hour of any usage payload, and none for an acknowledgement', () => {
    const usage = (type: 'EnergyUsage' | 'LocationEnergyUsage', hours: string[]) =>
      type === 'EnergyUsage'
        ? { payloadType: type, resourceId: 'r', resolution: '01:00:00', curvePoints: hours.map((timestamp) => ({ timestamp, kiloWattHours: 1 })) }
        : {
            payloadType: type,
            locationId: 'l',
            meterPointId: 'm',
            resolution: '01:00:00',
            points: hours.map((timestamp) => ({ timestamp, kiloWattHours: 1 })),
          };
    expect(
      reportDeadlineMs({
        eventId: 'e',
        payloads: [usage('EnergyUsage', ['2026-01-31T22:00:00Z']), usage('LocationEnergyUsage', ['2026-01-31T23:00:00Z', '2026-02-01T00:00:00Z'])],
      }),
    ).toBe(Date.UTC(2026, 2, 1));
    expect(
      reportDeadlineMs({
        eventId: 'e',
        payloads: [{ payloadType: 'LocationLPCAcknowledgement', acknowledgedTargets: [{ locationId: 'l', meterPointId: 'm' }] }],
      }),
    ).toBeNull();
  });
});
