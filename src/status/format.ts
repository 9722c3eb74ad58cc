/** Escapes text for HTML and SVG (element content and quoted attributes). */
export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function parts(ms: number, timezone: string): Record<string, string> {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', weekday: 'short', hourCycle: 'h23',
    });
    formatters.set(timezone, f);
  }
  return Object.fromEntries(f.formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
}

/** `HH:mm` in the timezone. */
export function hhmm(ms: number, timezone: string): string {
  const p = parts(ms, timezone);
  return `${p['hour']}:${p['minute']}`;
}

/** `Mon 02-03` (day-month) in the timezone. */
export function dayLabel(ms: number, timezone: string): string {
  const p = parts(ms, timezone);
  return `${p['weekday']} ${p['day']}-${p['month']}`;
}

/** `2026-03-02 14:00` in the timezone. */
export function dateTime(ms: number, timezone: string): string {
  const p = parts(ms, timezone);
  return `${p['year']}-${p['month']}-${p['day']} ${p['hour']}:${p['minute']}`;
}

/** Throws a RangeError for a timezone Intl does not know. */
export function assertTimezone(timezone: string): void {
  new Intl.DateTimeFormat('en-GB', { timeZone: timezone });
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
