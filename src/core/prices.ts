/**
 * Price series: one price per UTC slot from spot (actual prices or forecast segments),
 * incentive deltas, fees and VAT, with explicit currency and energy-unit normalisation.
 */
import { WattshiftError } from '../errors.js';
import type { BuildPriceSeriesInput, PriceSlot, PriceSource, PriceUnits } from './types.js';

const HOUR_MS = 3_600_000;
/**
 * A price (or delta) beyond this magnitude, per kWh in the series currency, is not a price but
 * garbage; it is left out like a missing one, so it can neither overflow the time-weighted sums
 * nor steer the plan. 1000/kWh is 250 times the day-ahead market's 4 EUR/kWh cap.
 */
export const maxAbsPricePerKwh = 1000;

/** An interval with a value in series currency per kWh. */
interface Piece {
  from: number;
  to: number;
  value: number;
}

/**
 * Factor that turns a price in `units` into the series currency per kWh, excluding VAT.
 * Throws PRICE_UNITS_MIXED when the currencies differ and no exchange rate is configured.
 */
export function unitFactor(units: PriceUnits, currency: string, exchangeRates: Readonly<Record<string, number>> | undefined, what: string): number {
  let factor = units.energyUnit === 'MWh' ? 1 / 1000 : 1;
  if (units.energyUnit !== 'MWh' && units.energyUnit !== 'kWh') {
    throw new WattshiftError('PRICE_UNITS_MIXED', `${what}: unknown energy unit ${String(units.energyUnit)}`);
  }
  const vat = units.vatIncluded ?? 1;
  if (!(vat > 0)) throw new WattshiftError('PLAN_INPUT_INVALID', `${what}: vatIncluded must be > 0`);
  factor /= vat;
  if (units.currency !== currency) {
    const rate = exchangeRates?.[units.currency];
    if (rate === undefined || !Number.isFinite(rate) || rate <= 0) {
      throw new WattshiftError(
        'PRICE_UNITS_MIXED',
        `${what} is in ${units.currency} but the series is in ${currency} and no ${units.currency} exchange rate is configured`,
        { details: { from: units.currency, to: currency } },
      );
    }
    factor *= rate;
  }
  return factor;
}

/** Time-weighted coverage of [from, to) by sorted pieces: covered ms and Σ value·overlap. */
function cover(pieces: Piece[], from: number, to: number): { covered: number; sum: number } {
  let covered = 0;
  let sum = 0;
  // Binary search the first piece that may overlap.
  let lo = 0;
  let hi = pieces.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((pieces[mid] as Piece).to <= from) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < pieces.length; i++) {
    const p = pieces[i] as Piece;
    if (p.from >= to) break;
    const overlap = Math.min(to, p.to) - Math.max(from, p.from);
    if (overlap > 0) {
      covered += overlap;
      sum += overlap * p.value;
    }
  }
  return { covered, sum };
}

function pointsToPieces(points: ReadonlyArray<{ startMs: number; price: number }>, resolutionMinutes: number, factor: number): Piece[] {
  if (!(resolutionMinutes > 0)) throw new WattshiftError('PLAN_INPUT_INVALID', 'resolutionMinutes must be > 0');
  const len = resolutionMinutes * 60_000;
  return points
    .filter((p) => Number.isFinite(p.startMs) && Number.isFinite(p.price))
    .map((p) => ({ from: p.startMs, to: p.startMs + len, value: p.price * factor }))
    .filter((p) => Math.abs(p.value) <= maxAbsPricePerKwh)
    .sort((a, b) => a.from - b.from);
}

function segmentsToPieces(input: NonNullable<BuildPriceSeriesInput['spot']['forecast']>, factor: number): Piece[] {
  const extra = input.toIsLastHourStart === true ? HOUR_MS : 0;
  return input.segments
    .filter((s) => Number.isFinite(s.fromMs) && Number.isFinite(s.toMs) && Number.isFinite(s.averagePrice))
    .map((s) => ({ from: s.fromMs, to: s.toMs + extra, value: s.averagePrice * factor }))
    .filter((p) => p.to > p.from && Math.abs(p.value) <= maxAbsPricePerKwh)
    .sort((a, b) => a.from - b.from);
}

/**
 * Builds one price per slot, keyed by UTC start, for [fromMs, toMs).
 *
 * Spot price per slot, in order of preference: actual prices covering the whole slot
 * (time-weighted mean, so four quarter-hours make an hour and an hour spreads over its
 * quarters), forecast segments covering it, advice segments, else the configured fallback.
 * The incentive delta is the time-weighted sum of every delta curve over the slot. Every
 * input is converted to the series currency per kWh; a currency without an exchange rate
 * throws `PRICE_UNITS_MIXED` rather than being summed silently.
 *
 * Slots are UTC multiples of `slotMinutes`, so DST days simply have 23 or 25 hourly slots
 * (92 or 100 quarter-hours) between two local midnights.
 */
export function buildPriceSeries(input: BuildPriceSeriesInput): PriceSlot[] {
  const { slotMinutes, currency, exchangeRates, fees } = input;
  if (slotMinutes !== 15 && slotMinutes !== 60) {
    throw new WattshiftError('PLAN_INPUT_INVALID', `slotMinutes must be 15 or 60, got ${String(slotMinutes)}`);
  }
  if (!Number.isFinite(input.fromMs) || !Number.isFinite(input.toMs)) {
    throw new WattshiftError('PLAN_INPUT_INVALID', 'fromMs and toMs must be finite');
  }
  const len = slotMinutes * 60_000;
  const from = Math.floor(input.fromMs / len) * len;
  const to = Math.ceil(input.toMs / len) * len;

  const actual = input.spot.actual
    ? pointsToPieces(
        input.spot.actual.points,
        input.spot.actual.resolutionMinutes,
        unitFactor(input.spot.actual.units, currency, exchangeRates, 'actual spot prices'),
      )
    : [];
  const forecast = input.spot.forecast
    ? segmentsToPieces(input.spot.forecast, unitFactor(input.spot.forecast.units, currency, exchangeRates, 'spot forecast'))
    : [];
  const advice = input.spot.advice
    ? segmentsToPieces(input.spot.advice, unitFactor(input.spot.advice.units, currency, exchangeRates, 'price advice'))
    : [];
  const nordPool = input.spot.nordPool
    ? pointsToPieces(
        input.spot.nordPool.points,
        input.spot.nordPool.resolutionMinutes,
        unitFactor(input.spot.nordPool.units, currency, exchangeRates, 'Nord Pool day-ahead prices'),
      )
    : [];
  type Ranked = readonly [Piece[], PriceSource];
  const order: Ranked[] = input.spot.nordPoolFirst
    ? [
        [actual, 'actual'],
        [nordPool, 'nordPool'],
        [forecast, 'forecast'],
        [advice, 'adviceOnly'],
      ]
    : [
        [actual, 'actual'],
        [forecast, 'forecast'],
        [nordPool, 'nordPool'],
        [advice, 'adviceOnly'],
      ];
  const deltas = input.deltas.map((d, i) =>
    pointsToPieces(d.points, d.resolutionMinutes, unitFactor(d.units, currency, exchangeRates, `price-curve delta #${i}`)),
  );

  const fallback = input.spot.fallbackPricePerKwh ?? 0;
  const vat = fees.vatRate ?? 1;
  const feeSum = fees.gridFeePerKwh + fees.taxPerKwh;
  if (!Number.isFinite(feeSum) || !(vat > 0)) {
    throw new WattshiftError('PLAN_INPUT_INVALID', 'fees must be finite and vatRate > 0');
  }
  const deltaVat = fees.vatOnDelta === true ? vat : 1;

  const out: PriceSlot[] = [];
  for (let s = from; s < to; s += len) {
    const e = s + len;
    let spot = fallback;
    let source: PriceSource = 'fallback';
    for (const [pieces, src] of order) {
      if (pieces.length === 0) continue;
      const c = cover(pieces, s, e);
      if (c.covered >= len - 1) {
        spot = c.sum / c.covered;
        source = src;
        break;
      }
    }
    let delta = 0;
    for (const d of deltas) delta += cover(d, s, e).sum / len;
    const price = (spot + feeSum) * vat + delta * deltaVat;
    out.push({ startMs: s, endMs: e, spot, delta, fees: feeSum, price, source });
  }
  return out;
}
