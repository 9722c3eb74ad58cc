/**
 * The cross-check of two day-ahead price series for the same hours (the forecast service's actual
 * prices against Nord Pool's published ones): both are the same auction result, so beyond rounding
 * they must agree. Compared per hour (quarter-hours averaged), per kWh and without VAT, and only in
 * one currency: no exchange rate is guessed. Pure.
 */
import type { PricePointsInput } from './types.js';

const hourMs = 3_600_000;

export interface PriceDisagreement {
  /** Hours both series price. */
  compared: number;
  /** Hours whose prices differ by more than the tolerance. */
  differing: number;
  /** The hour that differs most, per kWh without VAT. */
  worst: { startMs: number; a: number; b: number } | null;
}

/** Hourly means per kWh without VAT, by hour start. */
function hourly(s: PricePointsInput): Map<number, number> {
  const perKwh = (p: number): number => p / (s.units.energyUnit === 'MWh' ? 1000 : 1) / (s.units.vatIncluded ?? 1);
  const sums = new Map<number, { sum: number; n: number }>();
  for (const p of s.points) {
    const h = Math.floor(p.startMs / hourMs) * hourMs;
    const acc = sums.get(h) ?? { sum: 0, n: 0 };
    acc.sum += perKwh(p.price);
    acc.n += 1;
    sums.set(h, acc);
  }
  const whole = hourMs / (s.resolutionMinutes * 60_000);
  return new Map([...sums].filter(([, v]) => v.n === whole).map(([h, v]) => [h, v.sum / v.n]));
}

/**
 * Where `a` and `b` differ by more than `toleranceFraction` of the larger price and at least
 * `minPerKwh` (rounding and tiny prices stay quiet). Series in different currencies compare nothing.
 */
export function priceDisagreement(a: PricePointsInput, b: PricePointsInput, toleranceFraction = 0.02, minPerKwh = 0.002): PriceDisagreement {
  if (a.units.currency !== b.units.currency) return { compared: 0, differing: 0, worst: null };
  const ha = hourly(a);
  const hb = hourly(b);
  let compared = 0;
  let differing = 0;
  let worst: PriceDisagreement['worst'] = null;
  for (const [h, pa] of ha) {
    const pb = hb.get(h);
    if (pb === undefined) continue;
    compared++;
    const gap = Math.abs(pa - pb);
    if (gap > Math.max(minPerKwh, toleranceFraction * Math.max(Math.abs(pa), Math.abs(pb)))) {
      differing++;
      if (!worst || gap > Math.abs(worst.a - worst.b)) worst = { startMs: h, a: pa, b: pb };
    }
  }
  return { compared, differing, worst };
}
