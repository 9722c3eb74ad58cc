/**
 * Calendar arithmetic in an IANA time zone (Europe/Oslo for the daily price curves). All inputs and
 * outputs are epoch milliseconds; "local" means wall-clock time in `zone`. Offsets come from the
 * zone's compiled tz data (`zone-rules.ts`); a zone without it takes the Intl path, same results.
 */
import { zoneRules } from './zone-rules.js';
import { utcOffsetMs } from './tzif.js';

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
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

function intlLocalParts(ms: number, zone: string): LocalParts {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(ms))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return {
    year: parts.year ?? 1970,
    month: parts.month ?? 1,
    day: parts.day ?? 1,
    hour: (parts.hour ?? 0) % 24,
    minute: parts.minute ?? 0,
  };
}

const floorToMinute = (ms: number): number => Math.floor(ms / MINUTE_MS) * MINUTE_MS;

/** Wall-clock parts of `ms` in `zone`. */
export function localParts(ms: number, zone: string = OSLO): LocalParts {
  const rules = zoneRules(zone);
  if (!rules) return intlLocalParts(ms, zone);
  const wall = new Date(ms + utcOffsetMs(rules, ms));
  return { year: wall.getUTCFullYear(), month: wall.getUTCMonth() + 1, day: wall.getUTCDate(), hour: wall.getUTCHours(), minute: wall.getUTCMinutes() };
}

/**
 * Offset of `zone` from UTC at instant `ms`, in ms (e.g. +3_600_000 for CET), as wall-clock
 * minutes show it (an offset with seconds, from before 1972, is cut to the local minute).
 */
export function zoneOffsetMs(ms: number, zone: string = OSLO): number {
  const rules = zoneRules(zone);
  if (rules) return floorToMinute(ms + utcOffsetMs(rules, ms)) - floorToMinute(ms);
  const p = intlLocalParts(ms, zone);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute) - floorToMinute(ms);
}

/** Whether `zone` names a time zone: one with compiled tz data, or one Intl knows (any spelling). */
export function isKnownTimeZone(zone: string): boolean {
  if (zoneRules(zone)) return true;
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
