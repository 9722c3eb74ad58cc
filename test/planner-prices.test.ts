import { describe, expect, it } from 'vitest';
import { buildPriceSeries } from '../src/core/prices.js';
import { isWattshiftError } from '../src/errors.js';
import type { BuildPriceSeriesInput } from '../src/core/types.js';

const H = 3_600_000;
const t0 = Date.parse('2025-06-02T00:00:00Z');
const eurKwh = { currency: 'EUR', energyUnit: 'kWh' } as const;
const fees = { gridFeePerKwh: 0, taxPerKwh: 0 };

function base(over: Partial<BuildPriceSeriesInput> = {}): BuildPriceSeriesInput {
  return { slotMinutes: 60, fromMs: t0, toMs: t0 + 6 * H, timezone: 'Europe/Oslo', currency: 'EUR', spot: {}, deltas: [], fees, ...over };
}

describe('buildPriceSeries', () => {
  it('spreads a 6-hour forecast segment over its hours and marks the source', () => {
    const s = buildPriceSeries(
      base({ spot: { forecast: { units: eurKwh, segments: [{ fromMs: t0, toMs: t0 + 5 * H, averagePrice: 0.05 }], toIsLastHourStart: true } } }),
    );
    expect(s).toHaveLength(6);
    for (const slot of s) {
      expect(slot.spot).toBeCloseTo(0.05, 12);
      expect(slot.source).toBe('forecast');
    }
  });

  it('prefers actual over forecast over advice over fallback', () => {
    const s = buildPriceSeries(
      base({
        spot: {
          actual: { units: eurKwh, resolutionMinutes: 60, points: [{ startMs: t0, price: 0.1 }] },
          forecast: { units: eurKwh, segments: [{ fromMs: t0, toMs: t0 + 2 * H, averagePrice: 0.2 }] },
          advice: { units: eurKwh, segments: [{ fromMs: t0, toMs: t0 + 3 * H, averagePrice: 0.3 }] },
          fallbackPricePerKwh: 0.4,
        },
      }),
    );
    expect(s.map((x) => x.source)).toEqual(['actual', 'forecast', 'adviceOnly', 'fallback', 'fallback', 'fallback']);
    expect(s.map((x) => x.spot)).toEqual([0.1, 0.2, 0.3, 0.4, 0.4, 0.4]);
  });

  it('averages quarter-hours into hours and spreads an hour over its quarters', () => {
    const quarters = [0, 1, 2, 3].map((i) => ({ startMs: t0 + i * 900_000, price: 40 + i * 10 }));
    const hourly = buildPriceSeries(
      base({ toMs: t0 + H, spot: { actual: { units: { currency: 'EUR', energyUnit: 'MWh' }, resolutionMinutes: 15, points: quarters } } }),
    );
    expect(hourly[0]!.spot).toBeCloseTo(0.055, 12);
    const q = buildPriceSeries(
      base({ slotMinutes: 15, toMs: t0 + H, spot: { actual: { units: eurKwh, resolutionMinutes: 60, points: [{ startMs: t0, price: 0.07 }] } } }),
    );
    expect(q).toHaveLength(4);
    expect(q.every((x) => x.spot === 0.07 && x.source === 'actual')).toBe(true);
  });

  it('adds the incentive delta of every curve covering the slot, fees and VAT', () => {
    const s = buildPriceSeries(
      base({
        toMs: t0 + 2 * H,
        spot: {
          actual: {
            units: eurKwh,
            resolutionMinutes: 60,
            points: [
              { startMs: t0, price: 0.1 },
              { startMs: t0 + H, price: 0.1 },
            ],
          },
        },
        deltas: [
          { units: eurKwh, resolutionMinutes: 60, points: [{ startMs: t0, price: -0.02 }] },
          {
            units: eurKwh,
            resolutionMinutes: 60,
            points: [
              { startMs: t0, price: -0.01 },
              { startMs: t0 + H, price: 0.03 },
            ],
          },
        ],
        fees: { gridFeePerKwh: 0.04, taxPerKwh: 0.01, vatRate: 1.25 },
      }),
    );
    expect(s[0]!.delta).toBeCloseTo(-0.03, 12);
    expect(s[0]!.price).toBeCloseTo((0.1 + 0.05) * 1.25 - 0.03, 12);
    expect(s[1]!.price).toBeCloseTo((0.1 + 0.05) * 1.25 + 0.03, 12);
  });

  it('refuses to mix currencies without an exchange rate, and converts with one', () => {
    const input = base({
      currency: 'NOK',
      spot: { actual: { units: { currency: 'NOK', energyUnit: 'MWh' }, resolutionMinutes: 60, points: [{ startMs: t0, price: 500 }] } },
      deltas: [{ units: eurKwh, resolutionMinutes: 60, points: [{ startMs: t0, price: 0.1 }] }],
      toMs: t0 + H,
    });
    let err: unknown;
    try {
      buildPriceSeries(input);
    } catch (e) {
      err = e;
    }
    expect(isWattshiftError(err, 'PRICE_UNITS_MIXED')).toBe(true);
    const s = buildPriceSeries({ ...input, exchangeRates: { EUR: 11.5 } });
    expect(s[0]!.spot).toBeCloseTo(0.5, 12);
    expect(s[0]!.delta).toBeCloseTo(1.15, 12);
  });

  it('divides out VAT already included in an input', () => {
    const s = buildPriceSeries(
      base({
        toMs: t0 + H,
        spot: { actual: { units: { ...eurKwh, vatIncluded: 1.25 }, resolutionMinutes: 60, points: [{ startMs: t0, price: 0.125 }] } },
      }),
    );
    expect(s[0]!.spot).toBeCloseTo(0.1, 12);
  });

  it.each([
    ['2024-10-27', 25, '2024-10-26T22:00:00Z', '2024-10-27T23:00:00Z'],
    ['2024-03-31', 23, '2024-03-30T23:00:00Z', '2024-03-31T22:00:00Z'],
  ])('DST day %s in Oslo has %i hourly slots and 4x quarter-hours', (_day, hours, from, to) => {
    const fromMs = Date.parse(from);
    const toMs = Date.parse(to);
    expect(buildPriceSeries(base({ fromMs, toMs }))).toHaveLength(hours);
    const q = buildPriceSeries(base({ slotMinutes: 15, fromMs, toMs }));
    expect(q).toHaveLength(hours * 4);
    for (let i = 1; i < q.length; i++) expect(q[i]!.startMs - q[i - 1]!.startMs).toBe(900_000);
  });

  it('rejects slot lengths other than 15 and 60 minutes', () => {
    expect(() => buildPriceSeries(base({ slotMinutes: 30 as 60 }))).toThrow(/slotMinutes/);
  });
});
