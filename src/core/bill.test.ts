import { describe, expect, it } from 'vitest';
import { baselineHourKwh, flatTariff, hourCost, monthBill, type HourWithBaseline } from './bill.js';
import { capacityShares } from './capacity.js';
import { buildPriceSeries } from './prices.js';
import type { TariffModel } from './tariff.js';
import type { PriceSlot } from './types.js';
import { dayFeeTariff } from '../../test/fixtures/tariff.js';

const OSLO = 'Europe/Oslo';
const H = 3_600_000;
const Q = 15 * 60_000;

/** Spot + 0.1, day fee 0.5 on weekdays 06–22 else 0.3, tax 0.1, VAT 25 %, 90 % above 0.75 back. */
const tariff: TariffModel = {
  ...dayFeeTariff({ markupPerKwh: 0.1, dayPerKwh: 0.5 }),
  capacity: {
    measure: 'dailyPeaks',
    count: 3,
    days: 'all',
    steps: [
      { upToKw: 2, perMonth: 100 },
      { upToKw: 5, perMonth: 200 },
      { upToKw: null, perMonth: 400 },
    ],
  },
};

/** Monday 23 Nov 2026 12:00 Oslo. */
const noon = Date.parse('2026-11-23T11:00:00Z');

type Slot = Pick<PriceSlot, 'startMs' | 'endMs' | 'spot' | 'delta' | 'source'>;
const slot = (startMs: number, len: number, spot: number, delta = 0, source: PriceSlot['source'] = 'actual'): Slot => ({
  startMs,
  endMs: startMs + len,
  spot,
  delta,
  source,
});

describe('hourCost', () => {
  it("prices the hour's energy by component with the day fee, the subsidy and VAT", () => {
    const c = hourCost(tariff, noon, 2, [slot(noon, H, 1.0, -0.2)], OSLO)!;
    // Per kWh: energy 1.1, fee 0.5, tax 0.1, subsidy 0.9 × 0.25 = 0.225, VAT 25 % of 1.475, delta −0.2.
    expect(c).toMatchObject({ kwh: 2, gridPeriod: 'day', source: 'actual', spotPerKwh: 1 });
    expect(c.energy).toBeCloseTo(2.2, 12);
    expect(c.gridFee).toBeCloseTo(1.0, 12);
    expect(c.tax).toBeCloseTo(0.2, 12);
    expect(c.subsidy).toBeCloseTo(0.45, 12);
    expect(c.vat).toBeCloseTo(0.7375, 12);
    expect(c.delta).toBeCloseTo(-0.4, 12);
    expect(c.total).toBeCloseTo(3.2875, 12);
  });

  it('spreads the hour over its quarter-hours: the subsidy of the dear quarters only', () => {
    const quarters = [0.8, 0.8, 1.2, 1.2].map((p, i) => slot(noon + i * Q, Q, p));
    const c = hourCost(tariff, noon, 1, quarters, OSLO)!;
    expect(c.spotPerKwh).toBeCloseTo(1.0, 12);
    // Half the energy at 1.2 gets 0.9 × 0.45 back; the 0.8 quarters get 0.9 × 0.05.
    expect(c.subsidy).toBeCloseTo((0.045 + 0.405) / 2, 12);
  });

  it('leaves the hour unpriced when a slot is missing or only has the fallback price', () => {
    const three = [0, 1, 2].map((i) => slot(noon + i * Q, Q, 1));
    expect(hourCost(tariff, noon, 1, three, OSLO)).toBeNull();
    expect(hourCost(tariff, noon, 1, [...three, slot(noon + 3 * Q, Q, 1, 0, 'fallback')], OSLO)).toBeNull();
    expect(hourCost(tariff, noon, 1, [slot(noon - H, H, 1)], OSLO)).toBeNull();
  });

  it('names the weakest source: one forecast quarter makes the hour a forecast', () => {
    const quarters = [0, 1, 2, 3].map((i) => slot(noon + i * Q, Q, 1, 0, i === 2 ? 'forecast' : 'actual'));
    expect(hourCost(tariff, noon, 1, quarters, OSLO)?.source).toBe('forecast');
  });

  it("prices the flat site keys exactly as the planner's flat price series does", () => {
    const site = { gridFeePerKwh: 0.2, taxPerKwh: 0.1, vatPct: 25 };
    const series = buildPriceSeries({
      slotMinutes: 60,
      fromMs: noon,
      toMs: noon + H,
      timezone: OSLO,
      currency: 'NOK',
      spot: { actual: { units: { currency: 'NOK', energyUnit: 'kWh' }, resolutionMinutes: 60, points: [{ startMs: noon, price: 0.9 }] } },
      deltas: [],
      fees: { gridFeePerKwh: 0.2, taxPerKwh: 0.1, vatRate: 1.25 },
    });
    expect(hourCost(flatTariff(site), noon, 3, series, OSLO)!.total).toBeCloseTo(3 * series[0]!.price, 12);
  });
});

const cost = (hourStartMs: number, total: number, kwh = 1, baseline: { kwh: number; total: number } | null = null): HourWithBaseline => ({
  hourStartMs,
  kwh,
  spotPerKwh: 1,
  source: 'actual',
  gridPeriod: 'day',
  energy: total,
  gridFee: 0,
  tax: 0,
  subsidy: 0,
  vat: 0,
  delta: 0,
  total,
  baselineKwh: baseline?.kwh ?? null,
  baselineTotal: baseline?.total ?? null,
});

describe('monthBill', () => {
  const day = 86_400_000;
  const first = Date.parse('2026-11-01T11:00:00Z');

  it('adds the capacity step of the metered peaks (with VAT) to the priced hours, and counts the hours unpriced', () => {
    // Peaks 3, 4 and 5 kWh/h on three days: measure 4 kW, step up to 5 kW (200 a month), margin 1 kW.
    const metered = [
      { startMs: first, kWh: 3 },
      { startMs: first + day, kWh: 4 },
      { startMs: first + 2 * day, kWh: 5 },
      { startMs: first + 2 * day + H, kWh: 1 },
    ];
    const bill = monthBill(tariff, OSLO, 11, [cost(first, 10, 3), cost(first + day, 20, 4)], metered);
    expect(bill.capacity).toEqual({ measureKw: 4, stepUpToKw: 5, marginKw: 1, fee: 200, vat: 50 });
    expect(bill.vat).toBeCloseTo(50, 12);
    expect(bill.total).toBeCloseTo(30 + 250, 12);
    expect(bill.kwh).toBe(7);
    expect(bill).toMatchObject({ hoursPriced: 2, hoursUnpriced: 2 });
  });

  it('has no capacity standing without a capacity rule, and no margin on the top step', () => {
    const { capacity: _, ...noCapacity } = tariff;
    expect(monthBill(noCapacity, OSLO, 11, [cost(first, 5)], [{ startMs: first, kWh: 1 }])).toMatchObject({
      capacity: null,
      total: 5,
      hoursUnpriced: 0,
    });
    const top = monthBill(tariff, OSLO, 11, [], [{ startMs: first, kWh: 9 }]);
    expect(top.capacity).toMatchObject({ measureKw: 9, stepUpToKw: null, marginKw: null, fee: 400 });
  });

  it("takes a seasonal per-kW price of the bill's month, with no step to have a margin to", () => {
    const seasonal: TariffModel = {
      ...tariff,
      capacity: {
        measure: 'dailyPeaks',
        count: 3,
        days: 'all',
        seasons: [
          { months: [11, 12, 1, 2, 3], perKwPerMonth: 80 },
          { months: [4, 5, 6, 7, 8, 9, 10], perKwPerMonth: 40 },
        ],
      },
    };
    const metered = [{ startMs: first, kWh: 3 }];
    expect(monthBill(seasonal, OSLO, 11, [], metered).capacity).toMatchObject({ measureKw: 3, stepUpToKw: null, marginKw: null, fee: 240 });
    expect(monthBill(seasonal, OSLO, 6, [], metered).capacity!.fee).toBe(120);
  });

  it("sets the baseline month beside it: the baseline hours' cost and the capacity step their peaks reach, hours without a plan at their realised cost", () => {
    // Realised peaks 3, 4, 5: step up to 5 kW (200 + 50 VAT). The baseline's first day peaks at 8 kWh/h:
    // (8 + 4 + 5) / 3 = 5.67 kW, the top step (400 + 100 VAT).
    const metered = [
      { startMs: first, kWh: 3 },
      { startMs: first + day, kWh: 4 },
      { startMs: first + 2 * day, kWh: 5 },
    ];
    const costs = [cost(first, 10, 3, { kwh: 8, total: 26 }), cost(first + day, 20, 4), cost(first + 2 * day, 15, 5, { kwh: 5, total: 15 })];
    const bill = monthBill(tariff, OSLO, 11, costs, metered);
    expect(bill.total).toBeCloseTo(45 + 250, 9);
    expect(bill.baseline).toEqual({ total: 26 + 20 + 15 + 500, capacityFee: 500, hoursFromPlan: 2, hoursWithoutPlan: 1 });
    expect(bill.savings).toBeCloseTo(561 - 295, 9);
    // A plan that would have done worse than the baseline shows as negative savings.
    const worse = monthBill(tariff, OSLO, 11, [cost(first, 10, 3, { kwh: 3, total: 7 })], [{ startMs: first, kWh: 3 }]);
    expect(worse.savings).toBeCloseTo(-3, 9);
  });

  it('splits the capacity fee over the peaks that set the measure, by their energy', () => {
    // dailyPeaks, 3 days: day one's 3 kWh hour (not its 2 kWh one), 4 and 5; the fourth day's 1 kWh is not a top peak.
    const hours = [
      { startMs: first, kWh: 3 },
      { startMs: first + H, kWh: 2 },
      { startMs: first + day, kWh: 4 },
      { startMs: first + 2 * day, kWh: 5 },
      { startMs: first + 3 * day, kWh: 1 },
    ];
    const shares = capacityShares(tariff.capacity!, hours, OSLO, [], 240);
    expect([...shares].sort((a, b) => a[0] - b[0])).toEqual([
      [first, 60],
      [first + day, 80],
      [first + 2 * day, 100],
    ]);
    expect(capacityShares(tariff.capacity!, [{ startMs: first, kWh: 0 }], OSLO, [], 100)).toEqual(new Map([[first, 100]]));
  });
});

describe('baselineHourKwh', () => {
  it("keeps the house's own load and puts the baseline's flexible energy in place of what the loads took", () => {
    expect(baselineHourKwh(5, 3, 6)).toBe(8);
    expect(baselineHourKwh(5, 3, 0)).toBe(2);
    // The devices' meters read more than the main meter (timing): the house load is not negative.
    expect(baselineHourKwh(2, 3, 4)).toBe(4);
  });
});
