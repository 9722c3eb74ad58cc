/** Hourly metering with a real SQLite store: bounded writes, restart, store failures, estimates. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { createLogger } from '../src/log.js';
import { WattshiftError } from '../src/errors.js';
import { openStore, type Store } from '../src/store/index.js';
import { createMetering, keepStoredHour, meteringOptionsFor, type MeteredSubject } from '../src/jobs/metering.js';
import type { DeviceConfig } from '../src/config/schema.js';

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
  readHourly: store.readHourly.bind(store),
  getState: store.getState.bind(store),
  setState: store.setState.bind(store),
});
const make = () =>
  createMetering({
    store: port(),
    subjects,
    clock,
    flushEveryMs: 60_000,
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
  it('writes closed hours within a minute and the accumulators alone every 10 minutes', () => {
    const m = make();
    run(m, t0, t0 + HOUR + 60_000);
    // The hour closed at t0 + 1 h is stored by the next minute, before any clean flush.
    expect(kwh('res-tank', 0)?.kwh).toBeCloseTo(0.36, 9);
    run(m, t0 + HOUR + 70_000, t0 + 2 * HOUR);
    // 721 readings over 2 h: a write every 10 minutes (12), and one for each closed hour at most.
    expect(transactions).toBeLessThanOrEqual(14);
    expect(transactions).toBeGreaterThanOrEqual(11);
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
    // A crash: no clean flush; up to 10 minutes of readings were never written.
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

  it('after a clock step back meters on at once, keeping per hour the better-covered row, and says so once', () => {
    const m = make();
    // The load grows by 0.36 kW each real hour, so rows from the wrong clock differ from true ones.
    const counterAt = (real: number): number => {
      const h = (real - t0) / HOUR;
      const whole = Math.floor(h);
      return 100 + 0.18 * whole * (whole + 1) + 0.36 * (whole + 1) * (h - whole);
    };
    /** Real time `realFrom`..`realTo` every 10 s with the clock `offsetMs` off. */
    const runOffset = (realFrom: number, realTo: number, offsetMs: number): void => {
      for (let r = realFrom; r <= realTo; r += 10_000) {
        clock.set(r + offsetMs);
        m.feed('res-tank', { atMs: r + offsetMs, energyKwh: counterAt(r) });
        m.feed('res-heater', { atMs: r + offsetMs, powerW: 2000 });
        m.tick(r + offsetMs);
      }
    };
    // The clock runs 1 h ahead for 90 min: its hour 1 holds real hour 0 (0.36 kWh), its hour 2 half
    // of real hour 1. Then NTP puts it right at real 01:30:10, and hours 1 and 2 come round again.
    runOffset(t0, t0 + 90 * 60_000, HOUR);
    m.flush();
    expect(kwh('res-tank', 1)).toMatchObject({ quality: 'measured' });
    runOffset(t0 + 90 * 60_000 + 10_000, t0 + 3 * HOUR + 10 * 60_000, 0);
    m.flush();
    // Hour 1 again, partial (real 01:30:10–02:00): the complete row stays.
    expect(kwh('res-tank', 1)).toMatchObject({ quality: 'measured' });
    expect(kwh('res-tank', 1)?.kwh).toBeCloseTo(0.36, 9);
    // Hour 2: closed as it stood at the step (half an hour of real hour 1), then complete on the
    // true clock (real hour 2 at 1.08 kW), which replaces it.
    expect(kwh('res-tank', 2)).toMatchObject({ quality: 'measured' });
    expect(kwh('res-tank', 2)?.kwh).toBeCloseTo(1.08, 9);
    const jumps = lines.filter((l) => l.code === 'CLOCK_JUMP');
    expect(jumps).toHaveLength(1);
    expect(jumps[0]).toMatchObject({ level: 'warn', backMs: HOUR - 10_000 });
  });

  it('keeps a stored row against a worse one and takes a better one', () => {
    const row = (quality: 'measured' | 'estimated' | 'partial' | 'gap', kwh: number) => ({ quality, kwh });
    expect(keepStoredHour(row('measured', 1), row('partial', 5))).toBe(true);
    expect(keepStoredHour(row('partial', 0.2), row('measured', 1))).toBe(false);
    expect(keepStoredHour(row('gap', 0), row('partial', 0.1))).toBe(false);
    expect(keepStoredHour(row('partial', 0.5), row('partial', 0.3))).toBe(true);
    expect(keepStoredHour(row('partial', 0.3), row('partial', 0.5))).toBe(false);
    expect(keepStoredHour(row('measured', 1), row('estimated', 1.1))).toBe(false);
  });

  it('leaves counter glitches out, marks the hour partial and warns at most once an hour', () => {
    const m = createMetering({
      store: port(),
      clock,
      flushEveryMs: 60_000,
      subjects: [{ subject: 'res-tank', method: 'counter', options: { maxPowerKw: 3 } }],
      logger: createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } }),
    });
    for (let t = t0; t <= t0 + HOUR; t += 10_000) {
      // 2 kW; the counter reads 40 kWh low at 00:10, 50 kWh high at 00:30 (one reading each).
      const glitch = t === t0 + 10 * 60_000 ? -40 : t === t0 + 30 * 60_000 ? 50 : 0;
      clock.set(t);
      m.feed('res-tank', { atMs: t, energyKwh: 100 + (2 * (t - t0)) / HOUR + glitch });
      m.tick(t);
    }
    m.flush();
    expect(kwh('res-tank', 0)).toMatchObject({ quality: 'partial' });
    expect(kwh('res-tank', 0)?.kwh).toBeCloseTo(2 - (4 * 2 * 10) / 3600, 9);
    const warned = lines.filter((l) => l.code === 'METER_DISCONTINUITY');
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ subject: 'res-tank', kind: 'counter-down', level: 'warn' });
  });

  it('meters a pushed counter at the time it arrived, not when it was read', () => {
    const m = make();
    // A 0.36 kW load in hour 1 only, read every 10 s; each value arrived 8 s before it was read.
    const counterAt = (t: number): number => 100 + 0.36 * Math.min(1, Math.max(0, (t - t0 - HOUR) / HOUR));
    for (let t = t0 + 8000; t <= t0 + 3 * HOUR + 20_000; t += 10_000) {
      clock.set(t);
      m.feed('res-tank', { atMs: t, energyAtMs: t - 8000, energyKwh: counterAt(t - 8000) });
      m.tick(t);
    }
    m.flush();
    expect(kwh('res-tank', 1)).toMatchObject({ quality: 'measured' });
    expect(kwh('res-tank', 1)?.kwh).toBeCloseTo(0.36, 12);
    expect(kwh('res-tank', 2)?.kwh).toBeCloseTo(0, 12);
  });

  it('stores hours split across a restart by interpolation as estimated, however short the restart', () => {
    const m = make();
    run(m, t0, t0 + HOUR - 20_000);
    m.flush();
    const again = make();
    run(again, t0 + HOUR + 10_000, t0 + 3 * HOUR + 10_000);
    again.flush();
    expect([0, 1, 2].map((h) => kwh('res-tank', h)?.quality)).toEqual(['estimated', 'estimated', 'measured']);
    for (const h of [0, 1, 2]) expect(kwh('res-tank', h)?.kwh).toBeCloseTo(0.36, 9);
  });

  it('bounds a device counter by what the device can draw', () => {
    const site = { locationLimitKw: 17 };
    const tank = { kind: 'hotWaterTank', model: { elementKw: 2 } } as unknown as DeviceConfig;
    const charger = { kind: 'evCharger', model: { phases: 3, voltageV: 230, maxCurrentA: 16 } } as unknown as DeviceConfig;
    const main = { kind: 'meter', model: { main: true } } as unknown as DeviceConfig;
    const sub = { kind: 'meter', model: { main: false } } as unknown as DeviceConfig;
    expect(meteringOptionsFor(tank, site)).toEqual({ maxPowerKw: 3 });
    expect(meteringOptionsFor(charger, site).maxPowerKw).toBeCloseTo(16.56, 9);
    expect(meteringOptionsFor(main, site)).toEqual({ maxPowerKw: 25.5 });
    expect(meteringOptionsFor(sub, site)).toEqual({});
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
