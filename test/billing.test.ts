/**
 * The realised bill against a real SQLite file: closed hours priced with the prices and deltas
 * seen, stored per subject, the month's capacity step from the metered peaks, the status command's
 * reading of it, and what happens when prices are missing or the store fails.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { createBilling } from '../src/jobs/billing.js';
import type { HomeEvent } from '../src/spark/event-normalise.js';
import type { PriceData } from '../src/jobs/price-refresh.js';
import { billStatus } from '../src/cli/status.js';
import { createLogger, silentLogger } from '../src/log.js';
import { WattshiftError } from '../src/errors.js';
import { openStore, type Store } from '../src/store/index.js';
import { tempDir } from './helpers/temp-dir.js';
import { tariffSiteConfig } from './fixtures/tariff.js';

const H = 3_600_000;
/** Monday 9 Nov 2026, 09:00 UTC = 10:00 in Oslo (day fee). */
const h0 = Date.parse('2026-11-09T09:00:00Z');
const now = h0 + 3 * H + 10 * 60_000;

const tariff = {
  name: 'test-grid',
  currency: 'NOK',
  energy: { basis: 'spot', markupPerKwh: 0.1 },
  gridEnergy: { perKwh: 0.3, periods: [{ name: 'day', days: 'weekdays', hours: { from: 6, to: 22 }, perKwh: 0.5 }] },
  capacity: {
    measure: 'dailyPeaks',
    count: 3,
    steps: [
      { upToKw: 5, perMonth: 200 },
      { upToKw: 10, perMonth: 400 },
      { upToKw: null, perMonth: 800 },
    ],
  },
  taxPerKwh: 0.1,
  vatPct: 25,
};
const config = tariffSiteConfig(tariff, {
  modbus: { bus: { type: 'tcp', host: '127.0.0.1', port: 5020 } },
  devices: [
    { id: 'main', kind: 'meter', meter: { type: 'modbus', bus: 'bus', unitId: 1, profile: 'eastron-sdm120' }, model: { main: true } },
    { id: 'car', kind: 'meter', meter: { type: 'modbus', bus: 'bus', unitId: 2, profile: 'eastron-sdm120' }, model: { main: false } },
  ],
});

/** Spot 1.0 and 2.0 NOK/kWh for the first two hours; the third has no price. */
function prices(spots = [1.0, 2.0]): PriceData {
  return {
    forecast: null,
    advice: null,
    actual: {
      fetchedMs: h0,
      input: {
        units: { currency: 'NOK', energyUnit: 'kWh' },
        resolutionMinutes: 60,
        points: spots.map((price, i) => ({ startMs: h0 + i * H, price })),
      },
    },
  };
}

/** A price curve paying 0.4 NOK/kWh in the first hour. */
const reward: HomeEvent = {
  id: 'pc-1',
  createdAtMs: h0 - H,
  notificationType: null,
  payloadType: 'PriceCurve',
  relevant: true,
  startMs: h0,
  endMs: h0 + H,
  locationIds: [],
  resourceIds: [],
  lpcCaps: [],
  eligibility: null,
  refusal: null,
  priceDeltas: [{ startMs: h0, durationMs: H, price: -0.4, currency: 'NOK', energyUnit: 'kWh', resourceId: null }],
};

let store: Store | undefined;
afterEach(() => {
  store?.close();
  store = undefined;
});

function seeded(): Store {
  const s = openStore({ path: join(tempDir('wattshift-billing-'), 'w.db'), clock: new ManualClock(now) });
  store = s;
  const row = (subject: string, i: number, kwh: number) => ({ subject, hourStartMs: h0 + i * H, kwh, quality: 'measured' as const, samples: 60 });
  s.upsertHourly([row('location', 0, 6), row('location', 1, 2), row('location', 2, 3), row('device:car', 0, 4)]);
  // Earlier peaks this month: with 6 kWh/h today the three highest days average (7 + 6 + 4) / 3.
  s.upsertHourly([
    row('location', -24, 7),
    row('location', -48, 4),
    { subject: 'location', hourStartMs: h0 - 72 * H, kwh: 50, quality: 'gap', samples: 0 },
  ]);
  return s;
}

describe('billing', () => {
  it('prices each closed hour with the spot and delta seen, stores it per subject and sums the month with its step', () => {
    const s = seeded();
    const billing = createBilling({
      config,
      store: s,
      subjects: ['location', 'device:car'],
      prices: () => prices(),
      events: () => [reward],
      logger: silentLogger(),
    });
    billing.tick(now);
    const [first, second, ...rest] = s.readHourlyCost('location', h0, h0 + 3 * H);
    expect(rest).toEqual([]);
    // Hour 0: 6 kWh × ((1.0 + 0.1 + 0.5 + 0.1) × 1.25 − 0.4) = 6 × 1.725.
    expect(first).toMatchObject({ kwh: 6, spotPerKwh: 1, source: 'actual', gridPeriod: 'day', currency: 'NOK' });
    expect(first!.total).toBeCloseTo(10.35, 9);
    expect(first!.delta).toBeCloseTo(-2.4, 9);
    // Hour 1: 2 kWh × (2.0 + 0.7) × 1.25.
    expect(second!.total).toBeCloseTo(6.75, 9);
    expect(s.readHourlyCost('device:car', h0, h0 + H)[0]!.total).toBeCloseTo(4 * 1.725, 9);

    const bill = billing.summary()!;
    expect(bill).toMatchObject({ month: '2026-11', monthStartMs: Date.UTC(2026, 9, 31, 23), currency: 'NOK', hoursPriced: 2, hoursUnpriced: 3 });
    expect(bill.capacity!.measureKw).toBeCloseTo(17 / 3, 9);
    expect(bill.capacity).toMatchObject({ stepUpToKw: 10, fee: 400 });
    expect(bill.total).toBeCloseTo(10.35 + 6.75 + 400 * 1.25, 9);
    expect(bill.devices).toEqual([{ id: 'car', kwh: 4, total: expect.closeTo(6.9, 9) }]);
    expect(billing.health().ok).toBe(true);
    // No stored plan: the baseline is what was metered, and no savings are claimed.
    expect(bill.baseline).toMatchObject({ hoursFromPlan: 0, hoursWithoutPlan: 2 });
    expect(bill.savings).toBeCloseTo(0, 9);

    // `wattshift status` reads the same bill from the file.
    expect(billStatus(s, config, now)).toMatchObject({
      total: bill.total,
      hoursUnpriced: 3,
      capacity: { measureKw: bill.capacity!.measureKw, fee: 500 },
    });
  });

  it('keeps the price seen when an hour was priced, and re-prices an hour whose energy was re-metered', () => {
    const s = seeded();
    let data = prices();
    const billing = createBilling({ config, store: s, subjects: ['location'], prices: () => data, events: () => [], logger: silentLogger() });
    billing.tick(now);
    data = prices([5.0, 5.0, 5.0]);
    s.upsertHourly([{ subject: 'location', hourStartMs: h0 + H, kwh: 2.5, quality: 'measured', samples: 60 }]);
    billing.tick(now + 5 * 60_000);
    const costs = s.readHourlyCost('location', h0, h0 + 3 * H);
    expect(costs.map((c) => c.spotPerKwh)).toEqual([1, 5, 5]);
    expect(costs[1]).toMatchObject({ kwh: 2.5 });
    expect(billing.summary()).toMatchObject({ hoursPriced: 5 - 2, hoursUnpriced: 2 });
  });

  it('leaves hours unpriced when no real price covers them (a fallback is not what was paid)', () => {
    const s = seeded();
    const none: PriceData = { forecast: null, advice: null, actual: null };
    const billing = createBilling({ config, store: s, subjects: ['location'], prices: () => none, events: () => [], logger: silentLogger() });
    billing.tick(now);
    expect(s.readHourlyCost('location', h0 - 72 * H, now)).toEqual([]);
    expect(billing.summary()).toMatchObject({ hoursPriced: 0, hoursUnpriced: 5, energy: 0 });
  });

  it('logs a failing store once with its code, keeps the last bill and recovers', () => {
    const s = seeded();
    const lines: string[] = [];
    const logger = createLogger({ destination: { write: (l: string) => void lines.push(l) } });
    let broken = false;
    const flaky: typeof s = Object.create(s) as Store;
    flaky.upsertHourlyCost = (rows) => {
      if (broken) throw new WattshiftError('STORE_FAILED', 'disk full');
      s.upsertHourlyCost(rows);
    };
    const billing = createBilling({ config, store: flaky, subjects: ['location'], prices: () => prices(), events: () => [], logger });
    broken = true;
    billing.tick(now);
    billing.tick(now + 5 * 60_000);
    expect(billing.health()).toMatchObject({ ok: false, lastError: { code: 'STORE_FAILED' } });
    expect(billing.summary()).toBeNull();
    const errors = lines.map((l) => JSON.parse(l) as { code?: string; component?: string }).filter((l) => l.code === 'STORE_FAILED');
    expect(errors).toEqual([expect.objectContaining({ component: 'billing' })]);
    broken = false;
    billing.tick(now + 10 * 60_000);
    expect(billing.health().ok).toBe(true);
    expect(billing.summary()?.hoursPriced).toBe(2);
  });

  it('reports prices in a currency without an exchange rate as PRICE_UNITS_MIXED', () => {
    const s = seeded();
    const eur = prices();
    const input = { ...eur.actual!.input, units: { currency: 'EUR', energyUnit: 'kWh' as const } };
    const billing = createBilling({
      config,
      store: s,
      subjects: ['location'],
      prices: () => ({ ...eur, actual: { fetchedMs: h0, input } }),
      events: () => [],
      logger: silentLogger(),
    });
    billing.tick(now);
    expect(billing.health().lastError?.code).toBe('PRICE_UNITS_MIXED');
    expect(s.readHourlyCost('location', h0, now)).toEqual([]);
  });

  it('stores device costs but shows no month bill without a main meter', () => {
    const s = seeded();
    const billing = createBilling({ config, store: s, subjects: ['device:car'], prices: () => prices(), events: () => [], logger: silentLogger() });
    billing.tick(now);
    expect(billing.summary()).toBeNull();
    expect(s.readHourlyCost('device:car', h0, now)).toHaveLength(1);
  });

  it("prices the baseline of the plan in force beside each hour, and stores each hour's share of the capacity fee", () => {
    const s = seeded();
    const withCar = tariffSiteConfig(tariff, {
      modbus: { bus: { type: 'tcp', host: '127.0.0.1', port: 5020 } },
      mqtt: { url: 'mqtt://127.0.0.1:1883' },
      devices: [
        config.devices[0]!,
        {
          id: 'car',
          kind: 'evCharger',
          charger: { type: 'goe', topicPrefix: 'go-eCharger/t1' },
          model: { capacityKwh: 60, minCurrentA: 6, maxCurrentA: 16, phases: 3 },
        },
      ],
    });
    // The plan moved the car's 4 kWh from 11:00 (where the baseline, charging on arrival, would take it) to 10:00.
    const slot = (i: number, ev: number, baselineKwh: number) => ({
      startMs: h0 + i * H,
      endMs: h0 + (i + 1) * H,
      ev: { energyKwh: ev },
      baselineKwh,
    });
    s.savePlan({
      createdAtMs: h0 - H,
      horizonStartMs: h0 - H,
      horizonEndMs: h0 + 3 * H,
      json: { createdMs: h0 - H, slots: [slot(-1, 0, 0), slot(0, 4, 0), slot(1, 0, 4), slot(2, 0, 0)] },
    });
    const billing = createBilling({
      config: withCar,
      store: s,
      subjects: ['location', 'device:car'],
      prices: () => prices(),
      events: () => [reward],
      logger: silentLogger(),
    });
    billing.tick(now);
    const [first, second] = s.readHourlyCost('location', h0, h0 + 2 * H);
    // 10:00: 6 kWh metered, the car's meter 4 → the house 2, the baseline's car 0 → 2 kWh at 1.725.
    expect(first).toMatchObject({ baselineKwh: 2 });
    expect(first!.baselineTotal).toBeCloseTo(2 * 1.725, 9);
    // 11:00: 2 kWh metered, no car hour metered → the plan's 0; the baseline's car 4 → 6 kWh at 2.7 × 1.25.
    expect(second).toMatchObject({ baselineKwh: 6 });
    expect(second!.baselineTotal).toBeCloseTo(6 * 3.375, 9);
    const bill = billing.summary()!;
    expect(bill.baseline).toMatchObject({ hoursFromPlan: 2, hoursWithoutPlan: 0, capacityFee: 500 });
    expect(bill.savings).toBeCloseTo(2 * 1.725 + 6 * 3.375 - (10.35 + 6.75), 9);
    // The 400 step is set by the peaks 7, 6 (10:00 today) and 4: this hour carries 6/17 of it.
    expect(first!.capacityShare).toBeCloseTo((400 * 6) / 17, 9);
    expect(second!.capacityShare).toBe(0);
    expect(billStatus(s, withCar, now)).toMatchObject({
      savings: expect.closeTo(bill.savings, 9),
      baseline: { total: expect.closeTo(bill.baseline.total, 9) },
    });
  });

  it('reads the month again only when an hour closed, metering wrote hours or a price part was fetched anew', () => {
    const s = seeded();
    const counted: typeof s = Object.create(s) as Store;
    let reads = 0;
    counted.readHourly = (subject, fromMs, toMs) => {
      reads++;
      return s.readHourly(subject, fromMs, toMs);
    };
    let writes = 0;
    let data = prices([1.0]);
    const billing = createBilling({
      config,
      store: counted,
      subjects: ['location'],
      prices: () => data,
      events: () => [],
      hourWrites: () => writes,
      logger: silentLogger(),
    });
    billing.tick(now);
    expect(billing.summary()).toMatchObject({ hoursPriced: 1 });
    const afterFirst = reads;
    expect(afterFirst).toBeGreaterThan(0);
    // The same hour, rows and prices: nothing to read.
    billing.tick(now + 5 * 60_000);
    expect(reads).toBe(afterFirst);
    // Metering wrote hours: read, and the re-metered hour re-priced.
    s.upsertHourly([{ subject: 'location', hourStartMs: h0, kwh: 7, quality: 'measured', samples: 60 }]);
    writes++;
    billing.tick(now + 10 * 60_000);
    expect(reads).toBeGreaterThan(afterFirst);
    expect(s.readHourlyCost('location', h0, h0 + H)[0]).toMatchObject({ kwh: 7 });
    // The second hour's price arrives with a new fetch: priced at once.
    const beforePrices = reads;
    data = { ...data, actual: prices().actual };
    billing.tick(now + 15 * 60_000);
    expect(reads).toBeGreaterThan(beforePrices);
    expect(billing.summary()).toMatchObject({ hoursPriced: 2 });
    // A new hour closes.
    const beforeHour = reads;
    billing.tick(now + H);
    expect(reads).toBeGreaterThan(beforeHour);
  });
});
