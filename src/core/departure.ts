/**
 * The next occurrence of a local wall-clock time ("07:00" in Europe/Oslo) after a moment, DST
 * included. Pure: the zone's offset is read from Intl for the candidate instant.
 */

function offsetMs(atMs: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
  }).formatToParts(new Date(atMs));
  const n = (t: string): number => Number(parts.find((p) => p.type === t)?.value ?? 0);
  const asUtc = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return asUtc - Math.floor(atMs / 1000) * 1000;
}

/** UTC ms of local `y-m-d hh:mm` in `timeZone`; a time skipped by DST moves forward by the gap. */
export function localToUtcMs(y: number, m: number, d: number, hh: number, mm: number, timeZone: string): number {
  const naive = Date.UTC(y, m - 1, d, hh, mm);
  let guess = naive - offsetMs(naive, timeZone);
  guess = naive - offsetMs(guess, timeZone);
  return guess;
}

/** The first instant strictly after `afterMs` whose local time in `timeZone` is `hhmm`. */
export function nextLocalTimeMs(afterMs: number, hhmm: string, timeZone: string): number {
  const [hh, mm] = hhmm.split(':').map(Number) as [number, number];
  const local = new Date(afterMs + offsetMs(afterMs, timeZone));
  for (let dayOffset = 0; dayOffset < 3; dayOffset++) {
    const candidate = localToUtcMs(local.getUTCFullYear(), local.getUTCMonth() + 1, local.getUTCDate() + dayOffset, hh, mm, timeZone);
    if (candidate > afterMs) return candidate;
  }
  throw new Error(`no local time ${hhmm} found after ${afterMs}`);
}
