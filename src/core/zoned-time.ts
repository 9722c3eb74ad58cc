/**
 * Calendar arithmetic in an IANA time zone (Europe/Oslo for the daily price curves). All inputs and
 * outputs are epoch milliseconds; "local" means wall-clock time in `zone`. Offsets come from Intl
 * (Node's ICU zone data), asked once per zone and UTC hour: a slot loop over a week asks ICU about
 * 170 times, not once per call.
 */
export const OSLO = 'Europe/Oslo';
export const HOUR_MS = 3_600_000;
export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

export interface LocalParts {
  year: number;
  month: number; // 1..12
  day: number;
  hour: number;
  minute: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

const floorToMinute = (ms: number): number => Math.floor(ms / MINUTE_MS) * MINUTE_MS;

/** ICU's offset at `ms`, as wall-clock minutes show it (an offset with seconds, before 1972, is cut to the minute). */
function intlOffsetMs(ms: number, zone: string): number {
  const p: Record<string, number> = {};
  for (const part of formatter(zone).formatToParts(ms)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  return Date.UTC(p.year ?? 1970, (p.month ?? 1) - 1, p.day ?? 1, p.hour ?? 0, p.minute ?? 0) - floorToMinute(ms);
}

/** Offsets by zone and UTC hour; only hours without a change inside are kept. */
const offsetsByHour = new Map<string, Map<number, number>>();
/** A week of hours per zone at most: enough for the planning horizon, and memory stays flat. */
const MAX_CACHED_HOURS = 24 * 8;

/**
 * Offset of `zone` from UTC at instant `ms`, in ms (e.g. +3_600_000 for CET), as wall-clock
 * minutes show it.
 */
export function zoneOffsetMs(ms: number, zone: string = OSLO): number {
  let hours = offsetsByHour.get(zone);
  if (!hours) offsetsByHour.set(zone, (hours = new Map()));
  const hour = Math.floor(ms / HOUR_MS);
  const cached = hours.get(hour);
  if (cached !== undefined) return cached;
  const start = intlOffsetMs(hour * HOUR_MS, zone);
  // Transitions need not fall on a UTC hour (Lord Howe, historical changes): an hour with one inside is not cached.
  if (intlOffsetMs(hour * HOUR_MS + HOUR_MS - MINUTE_MS, zone) !== start) return intlOffsetMs(ms, zone);
  if (hours.size >= MAX_CACHED_HOURS) hours.clear();
  hours.set(hour, start);
  return start;
}

/** Wall-clock parts of `ms` in `zone`. */
export function localParts(ms: number, zone: string = OSLO): LocalParts {
  const wall = new Date(floorToMinute(ms) + zoneOffsetMs(ms, zone));
  return {
    year: wall.getUTCFullYear(),
    month: wall.getUTCMonth() + 1,
    day: wall.getUTCDate(),
    hour: wall.getUTCHours(),
    minute: wall.getUTCMinutes(),
  };
}

/** Whether Intl knows `zone` as a time zone (any spelling it accepts). */
export function isKnownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The instant of local wall time y-m-d h:mm in `zone`. Of a repeated hour it gives the later
 * instant east of Greenwich (Oslo) and the earlier west of it (New York); a skipped time moves by
 * the gap, forward east and backward west. Day overflow is allowed (day 32 is the next month's first).
 */
export function localTimeToUtcMs(year: number, month: number, day: number, hour: number, zone: string = OSLO, minute = 0): number {
  const naive = Date.UTC(year, month - 1, day, hour, minute);
  let guess = naive - zoneOffsetMs(naive, zone);
  guess = naive - zoneOffsetMs(guess, zone);
  return guess;
}

/** Start (local midnight) of the local day containing `ms`, plus `addDays` days. */
export function localDayStartMs(ms: number, zone: string = OSLO, addDays = 0): number {
  const p = localParts(ms, zone);
  const d = new Date(Date.UTC(p.year, p.month - 1, p.day + addDays));
  return localTimeToUtcMs(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), 0, zone);
}

/** Hour starts (UTC ms) of the local day beginning at `dayStartMs`: 23, 24 or 25 of them. */
export function hoursOfLocalDay(dayStartMs: number, zone: string = OSLO): number[] {
  const next = localDayStartMs(dayStartMs + 12 * HOUR_MS, zone, 1);
  const hours: number[] = [];
  for (let t = dayStartMs; t < next; t += HOUR_MS) hours.push(t);
  return hours;
}

/** `YYYY-MM-DD` of the local day containing `ms`. */
export function localDateString(ms: number, zone: string = OSLO): string {
  const p = localParts(ms, zone);
  return `${p.year}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
}

/** ISO 8601 with a `+00:00` offset, as the real service writes timestamps. */
export function isoUtc(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z').replace('Z', '+00:00');
}
