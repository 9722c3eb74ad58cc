/**
 * Local wall-clock facts of UTC instants, via Intl (no offsets are assumed, so DST days are
 * right by construction: a 25-hour day simply has two slots whose local hour is 2).
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone: timezone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timezone, f);
  }
  return f;
}

/** Local hour (0..23) and local date key (YYYY-MM-DD) of a UTC instant. */
export function localParts(ms: number, timezone: string): { hour: number; day: string } {
  let year = '';
  let month = '';
  let day = '';
  let hour = 0;
  for (const p of formatter(timezone).formatToParts(ms)) {
    if (p.type === 'year') year = p.value;
    else if (p.type === 'month') month = p.value;
    else if (p.type === 'day') day = p.value;
    else if (p.type === 'hour') hour = Number(p.value) % 24;
  }
  return { hour, day: `${year}-${month}-${day}` };
}

/**
 * Local hour and a local-day index (0 for the first slot's day, +1 at each local midnight)
 * for each slot start. Cached per hour, so 15-minute slots cost one Intl call per hour.
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
