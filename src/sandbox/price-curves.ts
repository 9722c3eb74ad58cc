import type { Currency } from '../spark/wire.js';
import { areaCurrency, eurRates, hashUnit, spotEurPerMwh, type PriceAreaCode } from './spot-prices.js';
import { hoursOfLocalDay, isoUtc, OSLO } from '../core/zoned-time.js';

/**
 * The incentive (price delta) of a daily price curve. For the local day starting at
 * `dayStartMs` (Europe/Oslo): the cheapest quarter of the hours get a negative delta
 * (consumption encouraged, as when solar production peaks); the two dearest hours get a
 * positive one (consumption discouraged); every other hour has no incentive and is left out.
 * Deltas are per kWh, in EUR before `localCurrencyFromMs` and in the area's currency from then
 * on (the brief: "currently EUR; local currency from the release date").
 */

export interface CurvePoint {
  timestampMs: number;
  price: number;
}

export interface DailyCurve {
  currency: Currency;
  points: CurvePoint[];
  fromMs: number;
  toMs: number;
}

export function curveCurrency(area: PriceAreaCode, atMs: number, localCurrencyFromMs: number): Currency {
  return atMs >= localCurrencyFromMs ? areaCurrency(area) : 'EUR';
}

export function dailyIncentiveCurve(seed: number, area: PriceAreaCode, dayStartMs: number, localCurrencyFromMs: number): DailyCurve {
  const hours = hoursOfLocalDay(dayStartMs, OSLO);
  const spot = hours.map((t) => ({ t, p: spotEurPerMwh(seed, area, t) }));
  const byPrice = [...spot].sort((a, b) => a.p - b.p || a.t - b.t);
  const cheap = new Set(byPrice.slice(0, Math.ceil(hours.length / 4)).map((s) => s.t));
  const dear = new Set(byPrice.slice(-2).map((s) => s.t));
  const currency = curveCurrency(area, dayStartMs, localCurrencyFromMs);
  const rate = eurRates[currency];
  const points: CurvePoint[] = [];
  for (const { t } of spot) {
    let eurPerKwh = 0;
    if (cheap.has(t)) eurPerKwh = -(0.02 + 0.08 * hashUnit(seed, area, t, 'delta'));
    else if (dear.has(t)) eurPerKwh = 0.02 + 0.04 * hashUnit(seed, area, t, 'delta');
    if (eurPerKwh !== 0) points.push({ timestampMs: t, price: Math.round(eurPerKwh * rate * 10_000) / 10_000 });
  }
  const last = hours[hours.length - 1] ?? dayStartMs;
  return { currency, points, fromMs: dayStartMs, toMs: last + 3_600_000 };
}

export function priceCurveDelta(curve: DailyCurve): Record<string, unknown> {
  return {
    points: curve.points.map((p) => ({ price: p.price, timestamp: isoUtc(p.timestampMs) })),
    energyUnit: 'kWh',
    currency: curve.currency,
    resolution: '01:00:00',
  };
}
