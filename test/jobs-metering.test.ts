/** Hourly metering with a real SQLite store: bounded writes, restart, store failures, estimates. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { createLogger } from '../src/log.js';
import { WattshiftError } from '../src/errors.js';
import { openStore, type Store } from '../src/store/index.js';
import { createMetering, type MeteredSubject } from '../src/jobs/metering.js';

const HOUR = 3_600_000;
const t0 = Date.UTC(2025, 10, 4, 0);
const subjects: MeteredSubject[] = [
  { subject: 'res-tank', method: 'counter' },
  { subject: 'res-heater', method: 'power' },
];

let dir: string;
let store: Store;
let clock: ManualClock;
let lines: Record<string, unknown>[];
let transactions: number;
let failing: boolean;

/** The store's own object behind a counting (and optionally failing) port. */
const port = () => ({
  transaction: <T>(fn: () => T, o?: { durable?: boolean }) => (transactions++, store.transaction(fn, o)),
  upsertHourly: (rows: Parameters<Store['upsertHourly']>[0]) => {
    if (failing) throw new WattshiftError('STORE_FAILED', 'store: upsertHourly failed: database or disk is full');
    store.upsertHourly(rows);
  },
  getState: store.getState.bind(store),
  setState: store.setState.bind(store),
});
const make = () =>
  createMetering({
    store: port(), subjects, clock, flushEveryMs: 60_000,
    logger: createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } }),
  });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ws-metering-'));
  clock = new ManualClock(t0);
  store = openStore({ path: join(dir, 'db.sqlite'), clock });
  lines = [];
  transactions = 0;
  failing = false;
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Readings every 10 s from `from` to `to` (inclusive): counter at 0.36 kWh/h, heater at 2 kW. */
function run(m: ReturnType<typeof make>, from: number, to: number): void {
  for (let t = from; t <= to; t += 10_000) {
    clock.set(t);
    m.feed('res-tank', { atMs: t, energyKwh: 100 + ((t - t0) / HOUR) * 0.36, powerW: 360 });
    m.feed('res-heater', { atMs: t, powerW: 2000 });
    m.tick(t);
  }
}
const kwh = (subject: string, hour: number) => store.readHourly(subject, t0 + hour * HOUR, t0 + (hour + 1) * HOUR)[0];

describe('metering', () => {
  it('writes hourly rows at most once per flush interval', () => {
    const m = make();
    run(m, t0, t0 + 2 * HOUR);
    // 721 readings over 2 h; one write a minute at most.
    expect(transactions).toBeLessThanOrEqual(121);
    expect(transactions).toBeGreaterThanOrEqual(100);
    m.flush();
    expect(kwh('res-tank', 0)).toMatchObject({ quality: 'measured' });
    expect(kwh('res-tank', 0)?.kwh).toBeCloseTo(0.36, 9);
    expect(kwh('res-tank', 1)?.kwh).toBeCloseTo(0.36, 9);
    expect(m.health()).toEqual({ ok: true, lastError: null, buffered: 0 });
    // Nothing new to write: no transaction.
    const before = transactions;
    m.flush();
    m.tick(t0 + 3 * HOUR);
    expect(transactions).toBe(before);
  });

  it('marks power-integrated subjects estimated', () => {
    const m = make();
    run(m, t0, t0 + HOUR);
    m.flush();
    expect(kwh('res-heater', 0)).toMatchObject({ quality: 'estimated', subject: 'res-heater' });
    expect(kwh('res-heater', 0)?.kwh).toBeCloseTo(2, 9);
    expect(m.openHours().get('res-heater')).toMatchObject({ hourStartMs: t0 + HOUR, estimated: true });
  });

  it('restores its state after a restart, keeping hourly totals exact', () => {
    const m = make();
    run(m, t0, t0 + 90 * 60_000);
    // A crash: no clean flush; up to a minute of readings were never written.
    store.close();
    store = openStore({ path: join(dir, 'db.sqlite'), clock });
    const again = make();
    expect(again.openHours().get('res-tank')?.hourStartMs).toBe(t0 + HOUR);
    run(again, t0 + 90 * 60_000 + 40_000, t0 + 3 * HOUR);
    again.flush();
    for (const h of [0, 1, 2]) expect(kwh('res-tank', h)?.kwh, `hour ${h}`).toBeCloseTo(0.36, 9);
    expect(store.readHourly('res-tank', t0, t0 + 3 * HOUR)).toHaveLength(3);
    expect(kwh('res-tank', 1)?.quality).toBe('measured');
  });

  it('keeps the buffer when the store fails, says so once, and writes it when the store is back', () => {
    const m = make();
    run(m, t0, t0 + HOUR - 10_000);
    failing = true;
    run(m, t0 + HOUR, t0 + 2 * HOUR + 30_000);
    const h = m.health();
    expect(h.ok).toBe(false);
    expect(h.lastError?.code).toBe('STORE_FAILED');
    expect(h.buffered).toBeGreaterThanOrEqual(4); // 2 subjects × 2 closed hours
    expect(lines.filter((l) => l.msg === 'metering write failed; readings kept in memory')).toHaveLength(1);
    expect(store.readHourly('res-tank', t0, t0 + 3 * HOUR)).toEqual([]);
    failing = false;
    run(m, t0 + 2 * HOUR + 40_000, t0 + 2 * HOUR + 120_000);
    expect(m.health()).toEqual({ ok: true, lastError: null, buffered: 0 });
    for (const hr of [0, 1]) {
      expect(kwh('res-tank', hr)?.kwh).toBeCloseTo(0.36, 9);
      expect(kwh('res-heater', hr)?.kwh).toBeCloseTo(2, 9);
    }
  });

  it('a failed flush rolls back the state too, so a restart never double-counts', () => {
    const m = make();
    run(m, t0, t0 + HOUR - 10_000);
    failing = true;
    run(m, t0 + HOUR, t0 + HOUR + 120_000);
    // Crash while the store is failing; the saved state is from before the failure.
    store.close();
    store = openStore({ path: join(dir, 'db.sqlite'), clock });
    failing = false;
    const again = make();
    run(again, t0 + HOUR + 130_000, t0 + 2 * HOUR);
    again.flush();
    expect(kwh('res-tank', 0)?.kwh).toBeCloseTo(0.36, 9);
  });

  it('skips readings without the subject’s quantity and unknown subjects', () => {
    const m = make();
    m.feed('res-tank', { atMs: t0, powerW: 5 });
    m.feed('nobody', { atMs: t0, energyKwh: 1 });
    expect(m.openHours().get('res-tank')).toBeNull();
    expect(m.openHours().has('nobody')).toBe(false);
    m.flush();
    expect(transactions).toBe(0);
  });
});
