import { describe, expect, it } from 'vitest';
import { priceDisagreement } from './price-check.js';
import type { PricePointsInput } from './types.js';

const H = 3_600_000;
const t0 = Date.UTC(2025, 4, 7);
const series = (prices: number[], over: Partial<PricePointsInput['units']> = {}, resolutionMinutes = 60): PricePointsInput => ({
  units: { currency: 'EUR', energyUnit: 'kWh', ...over },
  resolutionMinutes,
  points: prices.map((price, i) => ({ startMs: t0 + i * resolutionMinutes * 60_000, price })),
});

describe('priceDisagreement', () => {
  it('agrees across units, VAT and resolution, and names the hour that differs most', () => {
    const api = series([0.05, 0.0625, 0.08], { vatIncluded: 1.25 }); // per kWh with 25 % VAT
    const nordPool = series([40, 50, 64], { energyUnit: 'MWh' }); // per MWh without VAT
    expect(priceDisagreement(api, nordPool)).toEqual({ compared: 3, differing: 0, worst: null });
    const quarters = series([40, 40, 40, 40, 50, 50, 50, 50], { energyUnit: 'MWh' }, 15);
    expect(priceDisagreement(quarters, nordPool)).toEqual({ compared: 2, differing: 0, worst: null });
    const wrong = series([40, 80, 64.5], { energyUnit: 'MWh' });
    expect(priceDisagreement(api, wrong)).toEqual({ compared: 3, differing: 1, worst: { startMs: t0 + H, a: 0.05, b: 0.08 } });
  });

  it('keeps quiet under rounding and near zero, and compares nothing across currencies or without shared hours', () => {
    expect(priceDisagreement(series([0.1, 0.001]), series([0.1015, -0.0005])).differing).toBe(0);
    expect(priceDisagreement(series([0.1]), series([1.2], { currency: 'NOK' }))).toEqual({ compared: 0, differing: 0, worst: null });
    expect(priceDisagreement(series([0.1]), { ...series([0.1]), points: [{ startMs: t0 + 5 * H, price: 0.1 }] }).compared).toBe(0);
    // A half-published hour of quarter-hours is not an hour.
    expect(priceDisagreement(series([40, 40], { energyUnit: 'MWh' }, 15), series([0.9])).compared).toBe(0);
  });
});
