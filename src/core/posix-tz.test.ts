import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parsePosixTz, posixOffsetMs, type PosixTz } from './posix-tz.js';

const HOUR = 3_600_000;
const MIN = 60_000;

function parsed(text: string): PosixTz {
  const tz = parsePosixTz(text);
  if (!tz) throw new Error(`did not parse: ${text}`);
  return tz;
}

/** The offset Intl gives, to the minute. */
function intlOffsetMs(ms: number, zone: string): number {
  const f = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric' });
  const p = Object.fromEntries(f.formatToParts(ms).map((x) => [x.type, Number(x.value)]));
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!) - Math.floor(ms / MIN) * MIN;
}

describe('parsePosixTz', () => {
  it('reads fixed offsets, west of Greenwich positive as POSIX writes them', () => {
    expect(parsePosixTz('UTC0')).toEqual({ stdOffsetMs: 0, daylight: null });
    expect(parsePosixTz('<+0545>-5:45')).toEqual({ stdOffsetMs: 5 * HOUR + 45 * MIN, daylight: null });
    expect(parsePosixTz('<-0930>9:30')).toEqual({ stdOffsetMs: -(9 * HOUR + 30 * MIN), daylight: null });
    expect(parsePosixTz('<-00>0')).toEqual({ stdOffsetMs: 0, daylight: null });
  });

  it('reads Mm.w.d rules with default, negative and beyond-24 hour times', () => {
    expect(parsePosixTz('CET-1CEST,M3.5.0,M10.5.0/3')).toEqual({
      stdOffsetMs: HOUR,
      daylight: { offsetMs: 2 * HOUR, start: { month: 3, week: 5, weekday: 0, timeMs: 2 * HOUR }, end: { month: 10, week: 5, weekday: 0, timeMs: 3 * HOUR } },
    });
    expect(parsed('<-02>2<-01>,M3.5.0/-1,M10.5.0/0').daylight?.start.timeMs).toBe(-HOUR);
    expect(parsed('IST-2IDT,M3.4.4/26,M10.5.0').daylight?.start.timeMs).toBe(26 * HOUR);
    expect(parsed('<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45').daylight?.offsetMs).toBe(13 * HOUR + 45 * MIN);
    expect(parsed('XXX3YYY2,M3.2.0,M11.1.0').daylight?.offsetMs).toBe(-2 * HOUR); // explicit daylight offset
  });

  it('returns null for forms it does not read and for out-of-range fields', () => {
    for (const text of [
      '', 'CET', '-1', 'CET-1CEST', 'EST5EDT,J60,J300', 'EST5EDT,60,300', 'CET-1CEST,M3.5.0', 'CET-25',
      'CET-1CEST,M13.5.0,M10.5.0', 'CET-1CEST,M3.6.0,M10.5.0', 'CET-1CEST,M3.5.7,M10.5.0', 'CET-1CEST,M0.5.0,M10.5.0',
      'CET-1CEST,M3.5.0/168,M10.5.0', 'CET-1:60', 'CE-1', '<+1>-1', 'CET-1 ', 'CET-1CEST,M3.5.0,M10.5.0,M11.1.0',
    ]) expect(parsePosixTz(text), text).toBeNull();
  });
});

describe('posixOffsetMs', () => {
  it('switches Oslo exactly at 01:00 UTC on the last Sundays of March and October 2026', () => {
    const oslo = parsed('CET-1CEST,M3.5.0,M10.5.0/3');
    const spring = Date.UTC(2026, 2, 29, 1);
    const autumn = Date.UTC(2026, 9, 25, 1);
    expect([posixOffsetMs(oslo, spring - 1), posixOffsetMs(oslo, spring)]).toEqual([HOUR, 2 * HOUR]);
    expect([posixOffsetMs(oslo, autumn - 1), posixOffsetMs(oslo, autumn)]).toEqual([2 * HOUR, HOUR]);
  });

  it('handles the southern hemisphere, where daylight time spans the new year', () => {
    const sydney = parsed('AEST-10AEDT,M10.1.0,M4.1.0/3');
    const end = Date.UTC(2026, 3, 4, 16); // 5 April 03:00 daylight time
    const start = Date.UTC(2026, 9, 3, 16); // 4 October 02:00 standard time
    expect(posixOffsetMs(sydney, Date.UTC(2026, 0, 1))).toBe(11 * HOUR);
    expect([posixOffsetMs(sydney, end - 1), posixOffsetMs(sydney, end)]).toEqual([11 * HOUR, 10 * HOUR]);
    expect([posixOffsetMs(sydney, start - 1), posixOffsetMs(sydney, start)]).toEqual([10 * HOUR, 11 * HOUR]);
    expect(posixOffsetMs(sydney, Date.UTC(2026, 11, 31, 23))).toBe(11 * HOUR);
  });

  it('places rule times before midnight and past 24:00 on the right day', () => {
    const nuuk = parsed('<-02>2<-01>,M3.5.0/-1,M10.5.0/0'); // Saturday 23:00 before the last Sunday of March
    expect([posixOffsetMs(nuuk, Date.UTC(2026, 2, 29, 1) - 1), posixOffsetMs(nuuk, Date.UTC(2026, 2, 29, 1))]).toEqual([-2 * HOUR, -HOUR]);
    const jerusalem = parsed('IST-2IDT,M3.4.4/26,M10.5.0'); // Friday 02:00 after the fourth Thursday
    expect([posixOffsetMs(jerusalem, Date.UTC(2026, 2, 27) - 1), posixOffsetMs(jerusalem, Date.UTC(2026, 2, 27))]).toEqual([2 * HOUR, 3 * HOUR]);
  });

  it('agrees with Intl for current rules of zones in both hemispheres, 2038 to 2100', () => {
    const footers: Record<string, string> = {
      'Europe/Oslo': 'CET-1CEST,M3.5.0,M10.5.0/3',
      'Europe/London': 'GMT0BST,M3.5.0/1,M10.5.0',
      'America/New_York': 'EST5EDT,M3.2.0,M11.1.0',
      'America/St_Johns': 'NST3:30NDT,M3.2.0,M11.1.0',
      'America/Santiago': '<-04>4<-03>,M9.1.6/24,M4.1.6/24',
      'Australia/Sydney': 'AEST-10AEDT,M10.1.0,M4.1.0/3',
      'Pacific/Chatham': '<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45',
      'Asia/Jerusalem': 'IST-2IDT,M3.4.4/26,M10.5.0',
      'Asia/Kolkata': 'IST-5:30',
    };
    const zones = Object.keys(footers);
    fc.assert(fc.property(
      fc.constantFrom(...zones), fc.integer({ min: Date.UTC(2038, 0, 20), max: Date.UTC(2100, 0, 1) }),
      (zone, ms) => { expect(posixOffsetMs(parsed(footers[zone]!), ms)).toBe(intlOffsetMs(ms, zone)); },
    ), { numRuns: 3000 });
  });
});
