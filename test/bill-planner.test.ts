/**
 * Planning with a capacity tariff as the daemon does it (`capacityContextOf` given to `planRequest`):
 * the month's peaks come from the main meter's hourly energy in SQLite (a real file), and a store
 * that cannot be read does not stop planning.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { parseConfig } from '../src/config/load.js';
import { capacityContextOf, localMonthStartMs, type BillPlannerDeps } from '../src/jobs/bill-planner.js';
import { planRequest } from '../src/jobs/plan-request.js';
import { buildPlanInput } from '../src/jobs/plan-inputs.js';
import { createLogger, silentLogger } from '../src/log.js';
import { WattshiftError } from '../src/errors.js';
import { openStore, type Store } from '../src/store/index.js';
import type { HomePlanInput, Plan } from '../src/core/types.js';
import { tempDir } from './helpers/temp-dir.js';
import { tariffSiteConfig } from './fixtures/tariff.js';

const H = 3_600_000;
const now = Date.parse('2026-11-10T00:00:00Z'); // 01:00 in Oslo, Tuesday

const tariff = {
  name: 'test-grid',
  currency: 'NOK',
  capacity: {
    measure: 'dailyPeaks',
    count: 3,
    steps: [
      { upToKw: 5, perMonth: 200 },
      { upToKw: 10, perMonth: 400 },
      { upToKw: null, perMonth: 800 },
    ],
  },
  vatPct: 0,
};
const config = tariffSiteConfig(tariff);

/** A car needing 10 kWh in 6 hours, 1 kW of base load, hour 0 cheapest. */
function input(): HomePlanInput {
  const prices = [0.1, 0.2, 0.3, 0.3, 0.3, 0.3];
  return {
    slots: prices.map((price, i) => ({
      startMs: now + i * H,
      endMs: now + (i + 1) * H,
      spot: price,
      delta: 0,
      fees: 0,
      price,
      source: 'actual' as const,
    })),
    timezone: 'Europe/Oslo',
    currency: 'NOK',
    tanks: [],
    evs: [{ id: 'car', energyNeededKwh: 10, departureMs: now + 6 * H, minPowerKw: 0, maxPowerKw: 11, efficiency: 1 }],
    location: { limitKw: 25, baseLoadKw: 1 },
  };
}

/** The plan the daemon makes at `nowMs`: the whole bill with a capacity fee, else the plain planner. */
function planFnOf(deps: BillPlannerDeps): (input: HomePlanInput, nowMs: number) => Plan {
  const capacityAt = capacityContextOf(deps);
  return (input, nowMs) => planRequest({ input, nowMs, ...(capacityAt ? { capacity: capacityAt(nowMs) } : {}) });
}

let store: Store | undefined;
afterEach(() => {
  store?.close();
  store = undefined;
});

describe('planning the whole bill', () => {
  it("reads the month's peaks from the main meter's hours and holds the cheap hour to the step", () => {
    store = openStore({ path: join(tempDir('wattshift-bill-'), 'w.db'), clock: new ManualClock(now) });
    const day = (d: number, h: number) => Date.parse(`2026-11-0${d}T${String(h).padStart(2, '0')}:00:00Z`);
    store.upsertHourly([
      { subject: 'location', hourStartMs: day(2, 17), kwh: 4, quality: 'measured', samples: 60 },
      { subject: 'location', hourStartMs: day(3, 17), kwh: 4, quality: 'measured', samples: 60 },
      { subject: 'location', hourStartMs: day(4, 17), kwh: 4, quality: 'estimated', samples: 0 },
      // A gap cannot set the month's peak; last month's peak belongs to last month.
      { subject: 'location', hourStartMs: day(5, 17), kwh: 30, quality: 'gap', samples: 0 },
      { subject: 'location', hourStartMs: Date.parse('2026-10-20T17:00:00Z'), kwh: 20, quality: 'measured', samples: 60 },
      { subject: 'device:car', hourStartMs: day(6, 17), kwh: 11, quality: 'measured', samples: 60 },
    ]);
    const s = store;
    const planFn = planFnOf({ config, readLocationHours: (from, to) => s.readHourly('location', from, to), logger: silentLogger() });
    const p = planFn(input(), now);
    // (7 + 4 + 4) / 3 = 5: at most 7 kWh in the hour, 1 of it base load.
    expect(p.slots[0]!.evs!.car!.energyKwh).toBeCloseTo(6, 4);
    expect(p.capacity).toMatchObject({ step: 0, feePerMonth: 200 });
    expect(p.slots[0]!.reason).toContain("held at 7.0 kWh/h: the month's capacity step");
  });

  it('plans on without the metered peaks when the store fails, and says so with the error code', () => {
    const lines: string[] = [];
    const logger = createLogger({ destination: { write: (l: string) => void lines.push(l) } });
    const planFn = planFnOf({
      config,
      readLocationHours: () => {
        throw new WattshiftError('STORE_FAILED', 'disk I/O error');
      },
      logger,
    });
    const p = planFn(input(), now);
    // With no peaks known, today's hour alone is the month's measure: held to the 5 kW step.
    expect(p.capacity?.step).toBe(0);
    expect(p.shortfalls).toEqual([]);
    const warned = lines.map((l) => JSON.parse(l) as { code?: string; component?: string; level?: string });
    expect(warned).toContainEqual(expect.objectContaining({ code: 'STORE_FAILED', component: 'capacity', level: 'warn' }));
  });

  it('is the plain planner without a capacity fee', () => {
    const plain = parseConfig({
      version: 1,
      site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 25 },
      spark: { clientId: 'c', clientSecret: 's' },
      storage: { path: ':memory:' },
    }).config;
    const planFn = planFnOf({
      config: plain,
      readLocationHours: () => {
        throw new Error('not read');
      },
      logger: silentLogger(),
    });
    expect(planFn(input(), now).capacity).toBeUndefined();
  });

  it('starts the month at local midnight (Oslo: 23:00 UTC the day before)', () => {
    expect(new Date(localMonthStartMs(now, 'Europe/Oslo')).toISOString()).toBe('2026-10-31T23:00:00.000Z');
  });
});

describe('buildPlanInput with a tariff', () => {
  it('prices each slot by the tariff and keeps its components', () => {
    const withFees = parseConfig({
      version: 1,
      site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 25, tariff: 'lede' },
      spark: { clientId: 'c', clientSecret: 's' },
      storage: { path: ':memory:' },
    }).config;
    const points = Array.from({ length: 48 }, (_, i) => ({ startMs: now + i * H, price: 1.0 }));
    const built = buildPlanInput(
      withFees,
      {
        nowMs: now,
        events: [],
        tanks: [],
        evs: [],
        baseLoadKw: 0.5,
        prices: {
          forecast: null,
          advice: null,
          actual: { input: { units: { currency: 'NOK', energyUnit: 'kWh' }, resolutionMinutes: 60, points }, fetchedMs: now },
        },
      },
      new Map(),
    );
    const first = built.slots[0]!; // 01:00 Oslo in November: Lede's one all-day fee since May 2026
    expect(first.components).toMatchObject({ energy: 1, gridFee: 0.1141, gridPeriod: 'default', tax: 0.0813 });
    expect(first.components!.subsidy).toBeCloseTo(0.9 * 0.23, 9);
    expect(first.price).toBeCloseTo((1 + 0.1141 + 0.0813 - 0.9 * 0.23) * 1.25, 9);
  });
});
