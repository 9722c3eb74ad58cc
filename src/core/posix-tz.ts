/**
 * The POSIX TZ rule that ends a TZif file ("CET-1CEST,M3.5.0,M10.5.0/3"): the zone's offset for
 * instants after its last listed transition. Only the forms current tz data writes are read: a
 * fixed offset, or standard and daylight time switched by `Mm.w.d[/time]` rules (with the RFC 8536
 * extension of hours from -167 to 167). Anything else parses to `null`.
 */

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Mean Gregorian year. */
const YEAR_MS = 365.2425 * DAY_MS;

/** Day `weekday` (0 = Sunday) of week `week` (1..4, 5 = last) of `month`, at `timeMs` local time. */
interface MonthWeekDay {
  month: number;
  week: number;
  weekday: number;
  timeMs: number;
}

export interface PosixTz {
  /** UTC offset of standard time, ms (east positive, unlike the string). */
  stdOffsetMs: number;
  daylight: { offsetMs: number; start: MonthWeekDay; end: MonthWeekDay } | null;
}

const name = String.raw`(?:[A-Za-z]{3,}|<[A-Za-z0-9+-]{3,}>)`;
const time = String.raw`[+-]?\d{1,3}(?::\d{1,2}){0,2}`;
const rule = String.raw`M\d{1,2}\.\d\.\d(?:/${time})?`;
const tzPattern = new RegExp(`^${name}(${time})(?:${name}(${time})?,(${rule}),(${rule}))?$`);

/** `[+-]hh[:mm[:ss]]` in ms, or NaN when a field is out of range. */
function parseTime(text: string, maxHours: number): number {
  const sign = text.startsWith('-') ? -1 : 1;
  const [h = 0, m = 0, s = 0] = text.replace(/^[+-]/, '').split(':').map(Number);
  if (h > maxHours || m > 59 || s > 59) return NaN;
  return sign * ((h * 60 + m) * 60 + s) * 1000;
}

function parseRule(text: string): MonthWeekDay | null {
  const [date = '', at] = text.slice(1).split('/');
  const [month = 0, week = 0, weekday = 0] = date.split('.').map(Number);
  const timeMs = at === undefined ? 2 * HOUR_MS : parseTime(at, 167);
  if (month < 1 || month > 12 || week < 1 || week > 5 || weekday > 6 || Number.isNaN(timeMs)) return null;
  return { month, week, weekday, timeMs };
}

/** POSIX offsets count west of Greenwich positive (`0 -` keeps a zero offset +0). */
const eastOf = (westMs: number): number => 0 - westMs;

/** Parses a TZ footer string; `null` when it is not one of the supported forms. */
export function parsePosixTz(text: string): PosixTz | null {
  const m = tzPattern.exec(text);
  if (!m) return null;
  const stdOffsetMs = eastOf(parseTime(m[1] ?? '', 24));
  if (Number.isNaN(stdOffsetMs)) return null;
  if (m[3] === undefined || m[4] === undefined) return { stdOffsetMs, daylight: null };
  const offsetMs = m[2] === undefined ? stdOffsetMs + HOUR_MS : eastOf(parseTime(m[2], 24));
  const start = parseRule(m[3]);
  const end = parseRule(m[4]);
  if (Number.isNaN(offsetMs) || !start || !end) return null;
  return { stdOffsetMs, daylight: { offsetMs, start, end } };
}

/** Local-time ms (as if UTC) at which `rule` falls in `year`. */
function localInstant(rule: MonthWeekDay, year: number): number {
  const firstOfMonth = Date.UTC(year, rule.month - 1, 1);
  const firstWeekday = (Math.floor(firstOfMonth / DAY_MS) + 4) % 7; // 1970-01-01 was a Thursday
  let day = 1 + ((rule.weekday - firstWeekday + 14) % 7) + (rule.week - 1) * 7;
  const daysInMonth = (Date.UTC(year, rule.month, 1) - firstOfMonth) / DAY_MS;
  while (day > daysInMonth) day -= 7; // week 5 means the last such weekday
  return firstOfMonth + (day - 1) * DAY_MS + rule.timeMs;
}

type Daylight = NonNullable<PosixTz['daylight']>;

/** Switch instants per rule and year, UTC ms: computing them is most of a lookup's cost. */
const switchesByYear = new WeakMap<Daylight, Map<number, readonly [startMs: number, endMs: number]>>();

function switchesIn(stdOffsetMs: number, dst: Daylight, year: number): readonly [number, number] {
  let years = switchesByYear.get(dst);
  if (!years) switchesByYear.set(dst, (years = new Map()));
  let switches = years.get(year);
  if (!switches) {
    // A start is given in standard time, an end in daylight time.
    switches = [localInstant(dst.start, year) - stdOffsetMs, localInstant(dst.end, year) - dst.offsetMs];
    years.set(year, switches);
  }
  return switches;
}

/** UTC offset of the rule at instant `ms`. */
export function posixOffsetMs(tz: PosixTz, ms: number): number {
  const dst = tz.daylight;
  if (!dst) return tz.stdOffsetMs;
  // The latest switch at or before `ms`, among the years around it (rule times may cross a year
  // end); the estimate is at most a year off, so five years cover the year before to the year after.
  const year = 1970 + Math.floor(ms / YEAR_MS);
  let latest = -Infinity;
  let offset = tz.stdOffsetMs;
  for (let y = year - 2; y <= year + 2; y++) {
    const [startMs, endMs] = switchesIn(tz.stdOffsetMs, dst, y);
    if (startMs <= ms && startMs > latest) {
      latest = startMs;
      offset = dst.offsetMs;
    }
    if (endMs <= ms && endMs > latest) {
      latest = endMs;
      offset = tz.stdOffsetMs;
    }
  }
  return offset;
}
