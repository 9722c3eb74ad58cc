import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ManualClock } from '../src/clock.js';
import { isWattshiftError, type WattshiftError } from '../src/errors.js';
import { KEEP_PLANS, openStore, type HourlyEnergyInput, type Store } from '../src/store/index.js';
import { DAY_MS, eventInput, HOUR_MS, T0 } from './fixtures/store/helpers.js';
import { tempDir } from './helpers/temp-dir.js';

let dir: string;
let path: string;
let clock: ManualClock;
let store: Store;

beforeEach(() => {
  dir = tempDir('wattshift-store-');
  path = join(dir, 'w.db');
  clock = new ManualClock(T0);
  store = openStore({ path, clock });
});
afterEach(() => {
  store.close();
});

function caught(fn: () => unknown): WattshiftError {
  try {
    fn();
  } catch (err) {
    if (isWattshiftError(err)) return err;
    throw err;
  }
  throw new Error('nothing was thrown');
}

/** Runs SQL on the same file through a second connection, like a damaged or foreign writer. */
function rawExec(sql: string): void {
  const raw = new Database(path);
  try {
    raw.exec(sql);
  } finally {
    raw.close();
  }
}

const hour = (subject: string, h: number, kwh: number, quality: HourlyEnergyInput['quality'] = 'measured'): HourlyEnergyInput => ({
  subject,
  hourStartMs: T0 + h * HOUR_MS,
  kwh,
  quality,
  samples: 60,
});

describe('events', () => {
  it('stores an event once and tells whether it was new', () => {
    expect(store.saveEvent(eventInput('e1'))).toBe(true);
    expect(store.saveEvent(eventInput('e1', { payloadType: 'Other', rawJson: '{"changed":true}' }))).toBe(false);
    const e = store.getEvent('e1');
    expect(e).toMatchObject({
      eventId: 'e1',
      notificationType: 'PriceCurveCreated',
      payloadType: 'PriceCurve',
      locationIds: ['loc-1'],
      resourceIds: ['res-tank'],
      state: 'received',
      stateDetail: null,
    });
    expect(e?.raw).toEqual({ eventId: 'e1', payload: { payloadType: 'PriceCurve' } });
    expect(store.hasEvent('e1')).toBe(true);
    expect(store.hasEvent('e2')).toBe(false);
    expect(store.getEvent('e2')).toBeUndefined();
  });

  it('refuses an event whose raw text is not JSON', () => {
    expect(caught(() => store.saveEvent(eventInput('e1', { rawJson: '{oops' }))).code).toBe('INTERNAL');
    expect(store.hasEvent('e1')).toBe(false);
  });

  it('lists events overlapping a window, by payload type and state', () => {
    store.saveEvent(eventInput('early', { startMs: T0, endMs: T0 + 2 * HOUR_MS }));
    store.saveEvent(eventInput('late', { startMs: T0 + 10 * HOUR_MS, endMs: T0 + 12 * HOUR_MS }));
    store.saveEvent(eventInput('elig', { payloadType: 'UserEligibility', startMs: null, endMs: null, createdAtMs: T0 + 5 * HOUR_MS }));
    const ids = (q: Parameters<Store['listEvents']>[0]): string[] => store.listEvents(q).map((e) => e.eventId);
    expect(ids({})).toEqual(['early', 'elig', 'late']);
    expect(ids({ fromMs: T0 + 2 * HOUR_MS })).toEqual(['elig', 'late']); // early ended at from (exclusive)
    expect(ids({ fromMs: T0 + HOUR_MS, toMs: T0 + 5 * HOUR_MS })).toEqual(['early']);
    expect(ids({ fromMs: T0 + 5 * HOUR_MS, toMs: T0 + 6 * HOUR_MS })).toEqual(['elig']);
    expect(ids({ payloadType: 'PriceCurve' })).toEqual(['early', 'late']);
    store.markEvent('late', 'ignored', 'not our location');
    expect(ids({ states: ['ignored'] })).toEqual(['late']);
    expect(ids({ states: ['received', 'active'] })).toEqual(['early', 'elig']);
  });

  it('marks an event with a state and detail', () => {
    store.saveEvent(eventInput('e1'));
    clock.set(T0 + 42);
    expect(store.markEvent('e1', 'failed', 'bad payload')).toBe(true);
    expect(store.getEvent('e1')).toMatchObject({ state: 'failed', stateDetail: 'bad payload', updatedAtMs: T0 + 42 });
    expect(store.markEvent('nope', 'done')).toBe(false);
    expect(caught(() => store.markEvent('e1', 'bogus' as 'done')).code).toBe('INTERNAL');
  });

  it('reports a corrupt JSON column as STORE_FAILED', () => {
    store.saveEvent(eventInput('e1'));
    rawExec("UPDATE events SET resource_ids = 'not json' WHERE event_id = 'e1'");
    const err = caught(() => store.getEvent('e1'));
    expect(err.code).toBe('STORE_FAILED');
    expect(err.message).toMatch(/corrupt row in events/);
    expect(caught(() => store.listEvents()).code).toBe('STORE_FAILED');
  });
});

describe('corrupt rows', () => {
  it('gives STORE_FAILED for an outbox body or a plan that is not valid JSON', () => {
    store.saveEvent(eventInput('e1'));
    const { report } = store.enqueueReport({ idempotencyKey: 'k', eventId: 'e1', kind: 'usage', body: { a: 1 }, nowMs: T0 });
    store.savePlan({ createdAtMs: T0, horizonStartMs: T0, horizonEndMs: T0 + DAY_MS, json: [] });
    rawExec(`UPDATE report_outbox SET body_json = '{"a":' WHERE id = ${report.id}; UPDATE plans SET json = 'nope'`);
    for (const read of [() => store.getReport(report.id), () => store.dueReports(T0), () => store.latestPlan()]) {
      const err = caught(read);
      expect(err.code).toBe('STORE_FAILED');
      expect(err.retryable).toBe(false);
    }
  });
});

describe('hourly energy and checkpoints', () => {
  it('has strict column types, so a foreign writer cannot store text as energy', () => {
    store.upsertHourly([hour('tank', 0, 1)]);
    expect(() => rawExec("UPDATE hourly_energy SET kwh = 'many'")).toThrow(/cannot store TEXT value in REAL column/);
    expect(store.readHourly('tank', T0, T0 + HOUR_MS).map((r) => r.kwh)).toEqual([1]);
  });

  it('upserts rows by subject and hour and reads a range back in order', () => {
    store.upsertHourly([hour('tank', 2, 1.5), hour('tank', 0, 0.5), hour('location:l1', 0, 3)]);
    clock.set(T0 + 999);
    store.upsertHourly([hour('tank', 2, 1.75, 'partial'), hour('tank', 1, 0, 'gap')]);
    const rows = store.readHourly('tank', T0, T0 + 3 * HOUR_MS);
    expect(rows.map((r) => [r.hourStartMs - T0, r.kwh, r.quality])).toEqual([
      [0, 0.5, 'measured'],
      [HOUR_MS, 0, 'gap'],
      [2 * HOUR_MS, 1.75, 'partial'],
    ]);
    expect(rows[2]?.updatedAtMs).toBe(T0 + 999);
    expect(store.readHourly('tank', T0 + HOUR_MS, T0 + 2 * HOUR_MS)).toHaveLength(1);
    expect(store.readHourly('location:l1', T0, T0 + DAY_MS).map((r) => r.kwh)).toEqual([3]);
  });

  it('refuses a whole batch with one invalid row', () => {
    const bad = { ...hour('tank', 1, 1), hourStartMs: T0 + 1000 };
    expect(caught(() => store.upsertHourly([hour('tank', 0, 1), bad])).code).toBe('INTERNAL');
    expect(caught(() => store.upsertHourly([{ ...hour('tank', 0, 1), kwh: Number.NaN }])).code).toBe('INTERNAL');
    expect(store.readHourly('tank', T0, T0 + DAY_MS)).toEqual([]);
  });

  it('saves and replaces meter checkpoints', () => {
    store.saveCheckpoints([
      { deviceId: 'm1', valueKwh: 100.5, atMs: T0 },
      { deviceId: 'm2', valueKwh: 7, atMs: T0 },
    ]);
    store.saveCheckpoints([{ deviceId: 'm1', valueKwh: 101.25, atMs: T0 + 60_000 }]);
    expect(store.loadCheckpoints()).toEqual([
      { deviceId: 'm1', valueKwh: 101.25, atMs: T0 + 60_000 },
      { deviceId: 'm2', valueKwh: 7, atMs: T0 },
    ]);
  });

  it('fails a write with a retryable STORE_FAILED when the disk is full, writing nothing', () => {
    store.close();
    store = openStore({ path, clock, maxSizeBytes: 200 * 1024 });
    store.upsertHourly([hour('tank', 0, 1)]);
    const many = Array.from({ length: 20_000 }, (_, h) => hour(`subject-with-a-long-name-${h % 7}`, h + 1, h));
    const err = caught(() => store.upsertHourly(many));
    expect(err.code).toBe('STORE_FAILED');
    expect(err.retryable).toBe(true);
    expect(err.details).toMatchObject({ op: 'upsertHourly', sqliteCode: 'SQLITE_FULL' });
    expect(store.readHourly('subject-with-a-long-name-0', 0, T0 + 365 * DAY_MS)).toEqual([]);
    // reads and small writes still work
    expect(store.readHourly('tank', T0, T0 + HOUR_MS)).toHaveLength(1);
    store.setState('still', 'ok');
    expect(store.getState('still', z.string())).toBe('ok');
  });
});

describe('plans', () => {
  const plan = (createdAtMs: number, json: unknown) => ({ createdAtMs, horizonStartMs: T0, horizonEndMs: T0 + DAY_MS, json });

  it('returns the latest plan and skips writing an identical one', () => {
    expect(store.latestPlan()).toBeUndefined();
    const a = store.savePlan(plan(T0, { slots: [1, 2] }));
    expect(a.stored).toBe(true);
    const same = store.savePlan(plan(T0 + 1000, { slots: [1, 2] }));
    expect(same).toEqual({ id: a.id, stored: false });
    const b = store.savePlan(plan(T0 + 2000, { slots: [2, 1] }));
    expect(b.stored).toBe(true);
    expect(store.latestPlan()).toEqual({ id: b.id, ...plan(T0 + 2000, { slots: [2, 1] }) });
  });

  it('stores a plan deflated, a fraction of its JSON, and reads it back as saved', () => {
    const slots = Array.from({ length: 96 }, (_, i) => ({
      startMs: T0 + i * 900_000,
      endMs: T0 + (i + 1) * 900_000,
      price: 1 + (i % 7) / 10,
      tanks: { tank: { energyKwh: i % 3 === 0 ? 0.5 : 0, on: i % 3 === 0, endTempC: 55 + (i % 5) } },
      binding: [],
      reason: i % 3 === 0 ? 'cheapest slots before the deadline' : 'dearer than the slots chosen',
    }));
    const saved = plan(T0, { slots });
    store.savePlan(saved);
    const raw = new Database(path, { readonly: true });
    try {
      const row = z
        .object({ kind: z.string(), bytes: z.number() })
        .parse(raw.prepare('SELECT typeof(json) AS kind, length(json) AS bytes FROM plans').get());
      expect(row.kind).toBe('blob');
      expect(row.bytes).toBeLessThan(JSON.stringify(saved.json).length / 5);
    } finally {
      raw.close();
    }
    expect(store.latestPlan()).toMatchObject({ ...saved, json: { slots } });
    expect(store.plansById(store.planIdsBetween(T0, T0 + DAY_MS))).toMatchObject([{ json: { slots } }]);
    expect(store.savePlan(plan(T0 + 1000, { slots })).stored).toBe(false);
  });

  it(`keeps only the ${KEEP_PLANS} most recent plans`, () => {
    for (let i = 0; i < KEEP_PLANS + 10; i++) store.savePlan(plan(T0 + i, { i }));
    const raw = new Database(path, { readonly: true });
    try {
      expect(raw.prepare('SELECT count(*) FROM plans').pluck().get()).toBe(KEEP_PLANS);
    } finally {
      raw.close();
    }
    expect(store.latestPlan()?.json).toEqual({ i: KEEP_PLANS + 9 });
  });
});

describe('key/value state', () => {
  const registration = z.strictObject({ userId: z.string(), resourceIds: z.array(z.string()) });

  it('round-trips JSON values through a schema', () => {
    expect(store.getState('registration', registration)).toBeUndefined();
    store.setState('registration', { userId: 'u1', resourceIds: ['r1'] });
    store.setState('registration', { userId: 'u2', resourceIds: [] });
    expect(store.getState('registration', registration)).toEqual({ userId: 'u2', resourceIds: [] });
    store.deleteState('registration');
    expect(store.getState('registration', registration)).toBeUndefined();
  });

  it('gives STORE_FAILED when the stored value no longer matches the schema or is not JSON', () => {
    store.setState('registration', { userId: 1 });
    expect(caught(() => store.getState('registration', registration)).code).toBe('STORE_FAILED');
    rawExec("UPDATE kv_state SET value_json = '{broken' WHERE key = 'registration'");
    const err = caught(() => store.getState('registration', registration));
    expect(err.code).toBe('STORE_FAILED');
    expect(err.message).toContain('registration');
  });

  it('refuses values JSON cannot hold', () => {
    expect(caught(() => store.setState('k', undefined)).code).toBe('INTERNAL');
  });
});

describe('retention', () => {
  it('deletes old rows in every table but never unsent reports or the latest plan', () => {
    const now = T0 + 400 * DAY_MS;
    store.upsertHourly([hour('tank', 0, 1), hour('tank', 24 * 399, 2)]);
    store.saveEvent(eventInput('old-done', { endMs: T0 + DAY_MS }));
    store.saveEvent(eventInput('old-unsent', { endMs: T0 + DAY_MS }));
    store.saveEvent(eventInput('old-accepted', { endMs: T0 + DAY_MS }));
    store.saveEvent(eventInput('recent', { createdAtMs: now - DAY_MS, receivedAtMs: now - DAY_MS, startMs: null, endMs: null }));
    const pending = store.enqueueReport({ idempotencyKey: 'p', eventId: 'old-unsent', kind: 'usage', body: {}, nowMs: T0 });
    const sending = store.enqueueReport({ idempotencyKey: 's', eventId: 'old-unsent', kind: 'lpcAck', body: {}, nowMs: T0 });
    store.markSending(sending.report.id, T0);
    const accepted = store.enqueueReport({ idempotencyKey: 'a', eventId: 'old-accepted', kind: 'usage', body: {}, nowMs: T0 });
    store.markSending(accepted.report.id, T0);
    store.markAccepted(accepted.report.id, T0 + DAY_MS);
    store.savePlan({ createdAtMs: T0, horizonStartMs: T0, horizonEndMs: T0 + DAY_MS, json: { a: 1 } });
    store.savePlan({ createdAtMs: T0 + 1, horizonStartMs: T0, horizonEndMs: T0 + DAY_MS, json: { a: 2 } });

    const result = store.prune(now, { hourlyDays: 366, eventsDays: 90, plansDays: 7 });
    expect(result).toEqual({ hourly: 1, events: 2, reports: 1, plans: 1 });
    expect(store.readHourly('tank', 0, now).map((r) => r.kwh)).toEqual([2]);
    expect(
      store
        .listEvents()
        .map((e) => e.eventId)
        .sort(),
    ).toEqual(['old-unsent', 'recent']);
    expect(
      store
        .listReports()
        .map((r) => r.id)
        .sort(),
    ).toEqual([pending.report.id, sending.report.id].sort());
    expect(store.latestPlan()?.json).toEqual({ a: 2 });
    // running it again finds nothing more
    expect(store.prune(now, { hourlyDays: 366, eventsDays: 90, plansDays: 7 })).toEqual({ hourly: 0, events: 0, reports: 0, plans: 0 });
  });

  it('gives the freed pages back to the file system', () => {
    const rows = Array.from({ length: 5000 }, (_, h) => hour('tank', h, h / 10));
    store.upsertHourly(rows);
    const before = store.diskUsage();
    store.prune(T0 + 5000 * HOUR_MS, { hourlyDays: 1, eventsDays: 1, plansDays: 1 });
    const after = store.diskUsage();
    expect(after.freePages).toBe(0);
    expect(after.pageCount).toBeLessThan(before.pageCount / 4);
    expect(store.integrityCheck()).toEqual({ ok: true, messages: ['ok'] });
  });
});
