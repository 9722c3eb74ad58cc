/**
 * Local wall-clock facts of UTC instants (`zoned-time.ts`). Each instant is converted on its own,
 * so DST days are right by construction: a 25-hour day simply has two slots whose local hour is 2.
 */
import { localParts as zonedParts } from './zoned-time.js';

const pad2 = (n: number): string => String(n).padStart(2, '0');

/** Local hour (0..23) and local date key (YYYY-MM-DD) of a UTC instant. */
export function localParts(ms: number, timezone: string): { hour: number; day: string } {
  const p = zonedParts(ms, timezone);
  return { hour: p.hour, day: `${p.year}-${pad2(p.month)}-${pad2(p.day)}` };
}

/**
 * Local hour and a local-day index (0 for the first slot's day, +1 at each local midnight)
 * for each slot start. Looked up once per hour of slots.
 */
export function slotLocalInfo(startsMs: ReadonlyArray<number>, timezone: string): { hours: number[]; dayIndex: number[] } {
  const hours: number[] = [];
  const dayIndex: number[] = [];
  let lastHourKey = NaN;
  let last = { hour: 0, day: '' };
  let dayNo = -1;
  let lastDay = '';
  for (const ms of startsMs) {
    const hourKey = Math.floor(ms / 3_600_000);
    if (hourKey !== lastHourKey) {
      last = localParts(ms, timezone);
      lastHourKey = hourKey;
    }
    if (last.day !== lastDay) {
      dayNo++;
      lastDay = last.day;
    }
    hours.push(last.hour);
    dayIndex.push(dayNo);
  }
  return { hours, dayIndex };
}
