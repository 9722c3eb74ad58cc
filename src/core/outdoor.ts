import type { OutdoorForecast } from './types.js';

/**
 * The outdoor temperature assumed where nothing at all is known (no forecast ever arrived), °C: a
 * Nordic heating-season mean (Oslo's December–February normals lie between −4 and −2 °C), so a
 * planner without a forecast heats as for an ordinary winter day rather than a mild one.
 */
export const UNKNOWN_OUTDOOR_C = 0;

export interface SlotTemps {
  /** One temperature per slot start, °C. */
  tempsC: number[];
  /**
   * `metno`: every slot lies within the forecast; `persistence`: some slot lies beyond its end (or
   * the forecast itself was held) and takes the last known value; `none`: nothing was known and
   * every slot has {@link UNKNOWN_OUTDOOR_C}.
   */
  source: 'metno' | 'persistence' | 'none';
}

/**
 * The forecast's temperature at each slot start, interpolated linearly between its points (hourly
 * for MET's first days, 6-hourly after). A slot already under way (started before `nowMs`) takes the
 * temperature at `nowMs`, what is left of it; a time before the first point takes the first point.
 * Beyond the last point the last value is held (persistence), and the source says so.
 */
export function outdoorTempsForSlots(forecast: OutdoorForecast, slotStartsMs: readonly number[], nowMs: number): SlotTemps {
  const points = [...forecast.points].filter((p) => Number.isFinite(p.tempC)).sort((a, b) => a.startMs - b.startMs);
  const last = points.at(-1);
  if (last === undefined) return { tempsC: slotStartsMs.map(() => UNKNOWN_OUTDOOR_C), source: 'none' };
  let held = forecast.source === 'persistence';
  let i = 0;
  const tempsC = slotStartsMs.map((startMs) => {
    const at = Math.max(startMs, nowMs);
    if (at > last.startMs) {
      held = true;
      return last.tempC;
    }
    // Slot starts come in order in a plan, but nothing here relies on it.
    if (i > 0 && points[i - 1]!.startMs > at) i = 0;
    while (i < points.length && points[i]!.startMs < at) i++;
    const after = points[i]!;
    const before = points[i - 1];
    if (before === undefined || after.startMs === at) return after.tempC;
    const share = (at - before.startMs) / (after.startMs - before.startMs);
    return before.tempC + share * (after.tempC - before.tempC);
  });
  return { tempsC, source: held ? 'persistence' : 'metno' };
}
