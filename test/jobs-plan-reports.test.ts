/**
 * The plan report through the report outbox, with a real SQLite store on disk and the real Spark
 * client talking HTTP to a local stub API, on a manual clock: sent first, again only when the plan
 * changes by more than 1 kWh or a day has passed; retried with back-off; a newer plan replaces one
 * still waiting; what waits is sent after a restart; a rejection is final.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ManualClock } from '../src/clock.js';
import { createLogger } from '../src/log.js';
import type { Plan, PlanSlot } from '../src/core/types.js';
import { backoffMs } from '../src/timing/backoff.js';
import { planReportQueue, planReportStateKey, startPlanReports } from '../src/jobs/plan-reports.js';
import { buildPlanReport } from '../src/core/plan-report.js';
import { startReportOutbox } from '../src/jobs/report-outbox.js';
import { createSparkClient, type SparkClient } from '../src/spark/client.js';
import { openStore, type Store } from '../src/store/index.js';
import { json, startStub, type StubReply, type StubServer } from './fixtures/spark/stub-server.js';
import { until } from './helpers/until.js';

const t0 = Date.UTC(2026, 0, 10, 12);
const hour = 3_600_000;
const minute = 60_000;
const backoff = { baseMs: 60_000, maxMs: 3_600_000 };
const half = (): number => 0.5;
const target = { locationId: 'home-1', meterPointId: '707057500000000001' };

let dir: string;
let store: Store;
let stub: StubServer;
let client: SparkClient;
let clock: ManualClock;
let answer: (n: number) => StubReply;
let tankKwh: number[];
let running: { stop(): Promise<void> }[] = [];

/** A 48-hour plan of hourly slots from t0, the tank's energy per hour from `tankKwh`. */
function plan(): Plan {
  const slots: PlanSlot[] = tankKwh.map((kwh, i) => ({
    startMs: t0 + i * hour,
    endMs: t0 + (i + 1) * hour,
    price: 1,
    spot: 1,
    delta: 0,
    source: 'actual',
    headroomKw: 10,
    tanks: { tank: { energyKwh: kwh, powerKw: kwh, on: kwh > 0, endTempC: 60 } },
    binding: [],
    reason: '',
    baselineKwh: 1,
  }));
  return {
    createdMs: t0,
    currency: 'NOK',
    slotMinutes: 60,
    startMs: t0,
    endMs: t0 + 48 * hour,
    mode: 'optimal',
    slots,
    cost: 0,
    baselineCost: 0,
    baselineRespectsLimits: true,
    incentiveEarned: 0,
    shortfalls: [],
  };
}

const posts = (): { eventId?: unknown; payloads: { payloadType: string; flexibility: { kiloWattHours: number }[] }[] }[] =>
  stub
    .apiRequests()
    .filter((r) => r.method === 'POST' && r.path.endsWith('/reports'))
    .map((r) => JSON.parse(r.body));

function start(): void {
  const queue = planReportQueue(store);
  const outbox = startReportOutbox({
    outbox: store,
    sender: { postReport: (body, signal) => client.postReport(body as never, { signal }) },
    clock,
    logger: createLogger({ level: 'silent' }),
    pollMs: minute,
    backoff,
    random: half,
    planReports: queue,
  });
  const checker = startPlanReports({
    queue,
    plan,
    baseLoadKw: () => 0.5,
    target: () => target,
    clock,
    logger: createLogger({ level: 'silent' }),
    onQueued: () => outbox.flush(),
  });
  running = [checker, outbox];
}

async function stopAll(): Promise<void> {
  for (const r of running) await r.stop();
  running = [];
}

/** Waits (real time, bounded) until `check` holds, then lets the loops settle. */

const state = () => planReportQueue(store).read();

/** Moves the clock a minute at a time, letting the loops run and sleep again after each. */
async function pass(ms: number): Promise<void> {
  for (let done = 0; done < ms; done += minute) {
    await clock.advance(Math.min(minute, ms - done));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  }
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ws-plan-report-'));
  clock = new ManualClock(t0);
  store = openStore({ path: join(dir, 'db.sqlite'), clock });
  tankKwh = Array.from({ length: 48 }, (_, i) => (i === 3 ? 2 : 0));
  let n = 0;
  answer = () => json({ id: `remote-${++n}`, eventId: null, createdAt: new Date(clock.nowMs()).toISOString() });
  stub = await startStub(() => answer(n));
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
  await stopAll();
  await client.close();
  await stub.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('plan reports through the outbox', () => {
  it('sends the first plan without an event, then only a change of more than 1 kWh or a day later', async () => {
    start();
    await until(() => state().lastSent !== null, 'first sent', { settleTurns: 5 });
    expect(posts()).toHaveLength(1);
    expect(posts()[0]!.eventId).toBeUndefined();
    expect(posts()[0]!.payloads[0]).toMatchObject({ payloadType: 'LocationEnergyUsagePlan', ...target, resolution: '01:00:00' });
    expect(state().lastSent).toMatchObject({ reason: 'first', remoteId: 'remote-1', acceptedAtMs: t0 });

    // 0.5 kWh moved from 15:00 to 16:00: 1.0 kWh in all, not more than the threshold.
    tankKwh[3] = 1.5;
    tankKwh[4] = 0.5;
    await pass(minute);
    await until(() => true, 'idle', { settleTurns: 5 });
    expect(posts()).toHaveLength(1);

    // 0.6 kWh moved: 1.2 kWh, sent as changed.
    tankKwh[3] = 1.4;
    tankKwh[4] = 0.6;
    await pass(minute);
    await until(() => state().lastSent?.reason === 'changed', 'changed sent', { settleTurns: 5 });
    expect(posts()).toHaveLength(2);
    expect(
      posts()[1]!
        .payloads[0]!.flexibility.slice(0, 5)
        .map((p) => p.kiloWattHours),
    ).toEqual([0, 0, 0, 1.4, 0.6]);

    // Nothing changes for a day: one more, as the daily one, and only one.
    await pass(24 * hour - 2 * minute);
    await until(() => true, 'idle', { settleTurns: 5 });
    expect(posts()).toHaveLength(2);
    await pass(2 * minute);
    await until(() => state().lastSent?.reason === 'daily', 'daily sent', { settleTurns: 5 });
    expect(posts()).toHaveLength(3);
  });

  it('retries with back-off, sends the newest plan only, keeps a waiting one across a restart, and takes a rejection as final', async () => {
    answer = () => ({ status: 503 });
    start();
    await until(() => state().pending?.attempts === 1, 'failed once', { settleTurns: 5 });
    expect(state().pending).toMatchObject({ reason: 'first', nextAttemptMs: t0 + backoffMs(1, backoff, half) });
    expect(state().pending?.lastError).toMatch(/^API_UNAVAILABLE: /);

    // A new plan while the first waits replaces it.
    tankKwh[5] = 3;
    await pass(minute);
    await until(() => state().pending?.payload.flexibility[5]?.kiloWattHours === 3, 'replaced', { settleTurns: 5 });
    expect(state().pending?.reason).toBe('changed');

    // The daemon stops; the API recovers; the next start sends the plan that waited, once.
    await stopAll();
    store.close();
    store = openStore({ path: join(dir, 'db.sqlite'), clock });
    answer = () => json({ id: 'remote-after-restart' });
    const before = posts().length;
    start();
    await until(() => true, 'started', { settleTurns: 5 });
    await pass(hour);
    await until(() => state().lastSent?.remoteId === 'remote-after-restart', 'sent after restart', { settleTurns: 5 });
    expect(state().pending).toBeNull();
    expect(
      posts()
        .slice(before)
        .filter((p) => p.payloads[0]!.flexibility[5]!.kiloWattHours === 3),
    ).toHaveLength(1);

    // A 400 is final: kept with its reason, not sent again.
    answer = () => json('payloads[0]: location is not a location of this partner', 400);
    tankKwh[6] = 4;
    await pass(minute);
    await until(() => state().lastRejected !== null, 'rejected', { settleTurns: 5 });
    expect(state().lastRejected?.reason).toContain('not a location of this partner');
    expect(state().pending).toBeNull();
    const sent = posts().length;
    await pass(5 * minute);
    await until(() => true, 'idle', { settleTurns: 5 });
    expect(posts()).toHaveLength(sent);
  });
});

describe('the plan report record', () => {
  const payload = () => buildPlanReport({ ...target, plan: plan(), baseLoadKw: 0.5, nowMs: t0 })!;
  const storedBytes = () => JSON.stringify(store.getState(planReportStateKey, z.unknown())).length;

  it('stores the hours as numbers, not the API points, and reads back the report as sent', () => {
    const queue = planReportQueue(store);
    queue.offer(payload(), t0);
    queue.accepted(queue.due(t0)!, t0, 'remote-1');
    // 48 hours as the API's points take about 5.4 kB; as numbers about 0.6 kB.
    expect(storedBytes()).toBeLessThan(1500);
    expect(planReportQueue(store).read().lastSent?.payload).toEqual(payload());
  });

  it('writes a report sent at once only when the API accepts it, and one that failed as it waits', () => {
    const writes: string[] = [];
    const counting: Pick<Store, 'getState' | 'setState'> = {
      getState: (key, schema) => store.getState(key, schema),
      setState: (key, value) => {
        writes.push(key);
        store.setState(key, value);
      },
    };
    const queue = planReportQueue(counting);
    queue.offer(payload(), t0);
    expect(writes).toEqual([]);
    queue.accepted(queue.due(t0)!, t0, 'remote-1');
    expect(writes).toHaveLength(1);

    // A changed plan whose send fails is in the store with its error, for `status` and a restart.
    tankKwh[5] = 3;
    const changed = buildPlanReport({ ...target, plan: plan(), baseLoadKw: 0.5, nowMs: t0 + hour })!;
    queue.offer(changed, t0 + hour);
    queue.retry(queue.due(t0 + hour)!, 'API_UNAVAILABLE: 503', t0 + 2 * hour);
    expect(writes).toHaveLength(2);
    expect(planReportQueue(store).read().pending).toMatchObject({ attempts: 1, lastError: 'API_UNAVAILABLE: 503' });

    // A newer one replaces the stored one there too, so a restart does not send the older first.
    tankKwh[6] = 4;
    const newer = buildPlanReport({ ...target, plan: plan(), baseLoadKw: 0.5, nowMs: t0 + hour + minute })!;
    queue.offer(newer, t0 + hour + minute);
    expect(writes).toHaveLength(3);
    expect(planReportQueue(store).read().pending?.payload).toEqual(newer);
  });

  it('sends after a restart the plan of a report queued and never answered before the stop', async () => {
    planReportQueue(store).offer(payload(), t0);
    store.close();
    store = openStore({ path: join(dir, 'db.sqlite'), clock });
    start();
    await until(() => state().lastSent !== null, 'sent after restart', { settleTurns: 5 });
    expect(posts()).toHaveLength(1);
    expect(posts()[0]!.payloads[0]).toEqual(payload());
  });

  it('builds the report again only when the plan, the base load or the hour changes', async () => {
    const fixed = plan();
    let builds = 0;
    let ticks = 0;
    const counted: Plan = {
      ...fixed,
      get slots() {
        builds++;
        return fixed.slots;
      },
    };
    const queue = planReportQueue(store);
    running = [
      startPlanReports({
        queue,
        plan: () => counted,
        baseLoadKw: () => (ticks++, 0.5),
        target: () => target,
        clock,
        logger: createLogger({ level: 'silent' }),
        onQueued: () => undefined,
      }),
    ];
    await pass(30 * minute);
    expect(queue.read().pending).not.toBeNull();
    // Checked every minute (30 checks), built once within the hour.
    expect([builds, ticks]).toEqual([1, 30]);
    await pass(31 * minute);
    expect(builds).toBe(2);
  });

  it('reads a record stored with the API points', () => {
    const pending = { key: 'plan:home-1:1', payload: payload(), reason: 'first', createdAtMs: t0, attempts: 0, nextAttemptMs: t0, lastError: null };
    store.setState(planReportStateKey, { pending, lastSent: null, lastRejected: null });
    expect(planReportQueue(store).read().pending).toEqual(pending);
  });
});
