/**
 * Physical bounds on what an event may ask. A signed event is trusted to come from the API, not
 * to be sane: one with a price of 1e308, a negative cap or a century-long cap would break the
 * plan. An event outside these bounds is stored and refused (EVENT_OUT_OF_RANGE), never planned.
 */
/** Earliest and latest instant an event may name (UTC). */
const earliestMs = Date.UTC(2000, 0, 1);
const latestMs = Date.UTC(2100, 0, 1);
/** Longest span of one event, and the shortest and longest resolution of its points. */
export const maxEventSpanMs = 31 * 86_400_000;
const minResolutionMs = 60_000;
const maxResolutionMs = 86_400_000;
/** Most points one curve or one LPC target may carry (ten days of quarter-hours is 960). */
export const maxPointsPerTarget = 1000;
/** Largest incentive magnitude, currency units per kWh (the day-ahead market's cap is 4 EUR/kWh). */
export const maxAbsPricePerKwh = 100;
/** Largest cap that is still physical for a home, kW. */
export const maxCapKw = 1000;

/** What these bounds read of a point (the normalised points of event-normalise.ts carry more). */
interface TimedPoint {
  startMs: number;
  durationMs: number;
}

function checkTimes(points: readonly TimedPoint[]): string | null {
  let first = Infinity;
  let last = -Infinity;
  for (const p of points) {
    if (!(p.durationMs >= minResolutionMs && p.durationMs <= maxResolutionMs)) return `resolution of ${p.durationMs} ms is outside 1 min to 1 day`;
    if (!(p.startMs >= earliestMs && p.startMs + p.durationMs <= latestMs)) return `timestamp ${p.startMs} is outside 2000–2100`;
    first = Math.min(first, p.startMs);
    last = Math.max(last, p.startMs + p.durationMs);
  }
  return last - first > maxEventSpanMs ? `spans ${Math.round((last - first) / 86_400_000)} days, more than 31` : null;
}

/** Why a price curve's points are out of bounds, or null. */
export function priceCurveRefusal(pointCount: number, deltas: readonly (TimedPoint & { price: number; energyUnit: string })[]): string | null {
  if (pointCount > maxPointsPerTarget) return `${pointCount} points, more than ${maxPointsPerTarget}`;
  for (const d of deltas) {
    const perKwh = d.energyUnit === 'MWh' ? d.price / 1000 : d.price;
    if (!Number.isFinite(perKwh) || Math.abs(perKwh) > maxAbsPricePerKwh)
      return `price ${d.price} per ${d.energyUnit} is beyond ±${maxAbsPricePerKwh} per kWh`;
  }
  return checkTimes(deltas);
}

/** Why an LPC's caps are out of bounds, or null. */
export function lpcRefusal(pointCounts: readonly number[], caps: readonly (TimedPoint & { maxKw: number })[]): string | null {
  const most = Math.max(0, ...pointCounts);
  if (most > maxPointsPerTarget) return `${most} points on one target, more than ${maxPointsPerTarget}`;
  for (const c of caps) {
    if (!Number.isFinite(c.maxKw) || c.maxKw < 0 || c.maxKw > maxCapKw) return `cap of ${c.maxKw} kW is outside 0 to ${maxCapKw} kW`;
  }
  return checkTimes(caps);
}
