import { isKnownTimeZone, localParts } from '../core/zoned-time.js';

/** Escapes text for HTML and SVG (element content and quoted attributes). */
export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

const weekdays = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const pad2 = (n: number): string => String(n).padStart(2, '0');

/** Two-digit wall-clock fields and the short weekday of `ms` in the timezone. */
function parts(ms: number, timezone: string): { year: string; month: string; day: string; hour: string; minute: string; weekday: string } {
  const p = localParts(ms, timezone);
  const weekday = weekdays[new Date(Date.UTC(p.year, p.month - 1, p.day)).getUTCDay()] ?? '';
  return { year: String(p.year), month: pad2(p.month), day: pad2(p.day), hour: pad2(p.hour), minute: pad2(p.minute), weekday };
}

/** `HH:mm` in the timezone. */
export function hhmm(ms: number, timezone: string): string {
  const p = parts(ms, timezone);
  return `${p.hour}:${p.minute}`;
}

/** `Mon 02-03` (day-month) in the timezone. */
export function dayLabel(ms: number, timezone: string): string {
  const p = parts(ms, timezone);
  return `${p.weekday} ${p.day}-${p.month}`;
}

/** `2026-03-02 14:00` in the timezone. */
export function dateTime(ms: number, timezone: string): string {
  const p = parts(ms, timezone);
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}`;
}

/** Throws a RangeError for an unknown timezone. */
export function assertTimezone(timezone: string): void {
  if (!isKnownTimeZone(timezone)) throw new RangeError(`Invalid time zone specified: ${timezone}`);
}

/** Fixed decimals without `-0`. */
export function fixed(v: number, decimals: number): string {
  const s = v.toFixed(decimals);
  return /^-0(\.0+)?$/.test(s) ? s.slice(1) : s;
}

/** Device ids in the order they appear in the plan's slots. */
export function planDeviceIds(slots: readonly { devices: Record<string, unknown> }[]): string[] {
  const ids: string[] = [];
  for (const s of slots) for (const id of Object.keys(s.devices)) if (!ids.includes(id)) ids.push(id);
  return ids;
}
