/** The next occurrence of a local wall-clock time ("07:00" in Europe/Oslo), DST included. Pure. */
import { localParts, localTimeToUtcMs } from './zoned-time.js';

/** The first instant strictly after `afterMs` whose local time in `timeZone` is `hhmm`. */
export function nextLocalTimeMs(afterMs: number, hhmm: string, timeZone: string): number {
  const [hh, mm] = hhmm.split(':').map(Number) as [number, number];
  const today = localParts(afterMs, timeZone);
  for (let dayOffset = 0; dayOffset < 3; dayOffset++) {
    const candidate = localTimeToUtcMs(today.year, today.month, today.day + dayOffset, hh, timeZone, mm);
    if (candidate > afterMs) return candidate;
  }
  throw new Error(`no local time ${hhmm} found after ${afterMs}`);
}
