import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseTzif, utcOffsetMs, type ZoneRules } from './tzif.js';
import { useZoneData, zoneRules } from './zone-rules.js';
import { hoursOfLocalDay, isKnownTimeZone, localDayStartMs, localParts, localTimeToUtcMs, zoneOffsetMs } from './zoned-time.js';
import { localParts as localHourAndDay } from './local-time.js';

const HOUR = 3_600_000;

interface TzifSpec {
  version?: number;
  /** Transition instants, seconds. */
  times: number[];
  typeOfTime: number[];
  types: { utoff: number; isdst: number; abbr: number }[];
  chars: string;
  leaps?: number;
  footer: string;
}

/** A TZif file as zic writes a "slim" one: a minimal version 1 block, then the 64-bit data. */
function buildTzif(spec: TzifSpec): Uint8Array {
  const out: number[] = [];
  const u32 = (v: number): void => { out.push((v >>> 24) & 255, (v >>> 16) & 255, (v >>> 8) & 255, v & 255); };
  const i64 = (v: number): void => { u32(Math.floor(v / 2 ** 32)); u32(v >>> 0); };
  const header = (counts: number[]): void => {
    out.push(0x54, 0x5a, 0x69, 0x66, spec.version ?? 0x32, ...new Array<number>(15).fill(0));
    counts.forEach(u32);
  };
  header([0, 0, 0, 0, 1, 1]);
  out.push(0, 0, 0, 0, 0, 0, 0); // one UTC type, one NUL character
  const leaps = spec.leaps ?? 0;
  header([0, 0, leaps, spec.times.length, spec.types.length, spec.chars.length]);
  spec.times.forEach(i64);
  out.push(...spec.typeOfTime);
  for (const t of spec.types) { u32(t.utoff >>> 0); out.push(t.isdst, t.abbr); }
  for (const c of spec.chars) out.push(c.charCodeAt(0));
  for (let i = 0; i < leaps; i++) { i64(78_796_800 + i); u32(i + 1); }
  for (const c of `\n${spec.footer}\n`) out.push(c.charCodeAt(0));
  return Uint8Array.from(out);
}

/** A copy of `bytes` with the byte at `at` (from the end when negative) replaced. */
function withByte(bytes: Uint8Array, at: number, byte: number): Uint8Array {
  const copy = bytes.slice();
  copy[at < 0 ? bytes.length + at : at] = byte;
  return copy;
}

const s = (ms: number): number => ms / 1000;
/** Oslo whose listed transitions stop after 1996: later years come from the footer alone. */
const slimOslo: TzifSpec = {
  times: [s(Date.UTC(1996, 2, 31, 1)), s(Date.UTC(1996, 9, 27, 1))],
  typeOfTime: [1, 0],
  types: [{ utoff: 3600, isdst: 0, abbr: 0 }, { utoff: 7200, isdst: 1, abbr: 4 }],
  chars: 'CET\0CEST\0',
  footer: 'CET-1CEST,M3.5.0,M10.5.0/3',
};

function rulesOf(spec: TzifSpec): ZoneRules {
  const rules = parseTzif(buildTzif(spec));
  if (!rules) throw new Error('did not parse');
  return rules;
}

afterEach(() => useZoneData(undefined));

describe('parseTzif and utcOffsetMs', () => {
  it('uses type 0 before the first transition, the table up to the last, the footer after it', () => {
    const rules = rulesOf(slimOslo);
    expect(utcOffsetMs(rules, Date.UTC(1990, 5, 1))).toBe(HOUR);
    expect(utcOffsetMs(rules, Date.UTC(1996, 2, 31, 1) - 1)).toBe(HOUR);
    expect(utcOffsetMs(rules, Date.UTC(1996, 2, 31, 1))).toBe(2 * HOUR);
    expect(utcOffsetMs(rules, Date.UTC(1996, 9, 27, 1))).toBe(HOUR);
    expect(utcOffsetMs(rules, Date.UTC(2026, 6, 1))).toBe(2 * HOUR); // footer
    expect(utcOffsetMs(rules, Date.UTC(2099, 0, 1))).toBe(HOUR);
  });

  it('takes every instant from the footer when there are no transitions', () => {
    const rules = rulesOf({ times: [], typeOfTime: [], types: [{ utoff: 0, isdst: 0, abbr: 0 }], chars: 'UTC\0', footer: '<+0545>-5:45' });
    expect(utcOffsetMs(rules, 0)).toBe(5.75 * HOUR);
  });

  it('refuses files it cannot use: bad magic, version 1, leap seconds, bad indices, disorder, odd footers', () => {
    const broken: [string, TzifSpec | Uint8Array][] = [
      ['version 1', { ...slimOslo, version: 0 }],
      ['leap seconds', { ...slimOslo, leaps: 2 }],
      ['type index out of range', { ...slimOslo, typeOfTime: [1, 2] }],
      ['transitions not ascending', { ...slimOslo, times: [...slimOslo.times].reverse() }],
      ['equal transitions', { ...slimOslo, times: [slimOslo.times[0]!, slimOslo.times[0]!] }],
      ['offset beyond 26 hours', { ...slimOslo, types: [{ utoff: 93_600, isdst: 0, abbr: 0 }, slimOslo.types[1]!] }],
      ['isdst not 0 or 1', { ...slimOslo, types: [slimOslo.types[0]!, { utoff: 7200, isdst: 2, abbr: 4 }] }],
      ['abbreviation outside the characters', { ...slimOslo, types: [slimOslo.types[0]!, { utoff: 7200, isdst: 1, abbr: 9 }] }],
      ['no types', { ...slimOslo, times: [], typeOfTime: [], types: [] }],
      ['empty footer', { ...slimOslo, footer: '' }],
      ['Julian-day footer', { ...slimOslo, footer: 'CET-1CEST,J85,J300' }],
      ['bad magic', withByte(buildTzif(slimOslo), 0, 0x58)],
      ['no newline before the footer', withByte(buildTzif(slimOslo), -slimOslo.footer.length - 2, 0x20)],
      ['no newline after the footer', buildTzif(slimOslo).slice(0, -1)],
    ];
    for (const [what, spec] of broken) expect(parseTzif(spec instanceof Uint8Array ? spec : buildTzif(spec)), what).toBeNull();
  });

  it('refuses every truncation of a good file, and never throws on any bytes', () => {
    const good = buildTzif(slimOslo);
    expect(parseTzif(good)).not.toBeNull();
    for (let n = 0; n < good.length; n++) expect(parseTzif(good.subarray(0, n)), `${n} bytes`).toBeNull();
    fc.assert(fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => { parseTzif(bytes); }), { numRuns: 2000 });
    fc.assert(fc.property(fc.integer({ min: 0, max: good.length - 1 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 2 ** 31 }), (at, byte, ms) => {
      const rules = parseTzif(withByte(good, at, byte));
      if (rules) expect(Number.isFinite(utcOffsetMs(rules, ms * 1000))).toBe(true);
    }), { numRuns: 2000 });
  });
});

describe('zoned time from zone data', () => {
  const source = (files: Record<string, Uint8Array>) => {
    const asked: string[] = [];
    useZoneData((zone) => { asked.push(zone); return files[zone]; });
    return asked;
  };

  it('follows the footer through the 2026 switches of a slim Oslo file exactly', () => {
    source({ 'Test/Oslo': buildTzif(slimOslo) });
    const zone = 'Test/Oslo'; // unknown to Intl: every answer comes from the file
    const wall = (ms: number): string => { const p = localParts(ms, zone); return `${p.day} ${p.hour}:${p.minute}`; };
    expect([wall(Date.UTC(2026, 2, 29, 0, 59)), wall(Date.UTC(2026, 2, 29, 1))]).toEqual(['29 1:59', '29 3:0']);
    expect([wall(Date.UTC(2026, 9, 25, 0, 59)), wall(Date.UTC(2026, 9, 25, 1))]).toEqual(['25 2:59', '25 2:0']);
    expect(zoneOffsetMs(Date.UTC(2026, 9, 25, 1) - 1, zone)).toBe(2 * HOUR);
    expect(hoursOfLocalDay(localDayStartMs(Date.UTC(2026, 2, 29, 12), zone), zone)).toHaveLength(23);
    expect(hoursOfLocalDay(localDayStartMs(Date.UTC(2026, 9, 25, 12), zone), zone).map((t) => localHourAndDay(t, zone).hour).slice(0, 5)).toEqual([0, 1, 2, 2, 3]);
    expect(localTimeToUtcMs(2026, 3, 29, 2, zone)).toBe(Date.UTC(2026, 2, 29, 1)); // skipped 02:00 moves on to 03:00
    expect(isKnownTimeZone(zone)).toBe(true);
  });

  it('reads each zone once, and takes the Intl path for a zone without data or with corrupt data', () => {
    const asked = source({ 'Europe/Oslo': buildTzif(slimOslo), 'Europe/Berlin': Uint8Array.from([1, 2, 3]) });
    const t = Date.UTC(2026, 5, 1, 12);
    for (let i = 0; i < 3; i++) localParts(t, 'Europe/Oslo');
    expect(asked).toEqual(['Europe/Oslo']);
    expect(zoneRules('Europe/Berlin')).toBeNull();
    expect(zoneRules('America/New_York')).toBeNull();
    expect(localParts(t, 'Europe/Berlin')).toEqual({ year: 2026, month: 6, day: 1, hour: 14, minute: 0 });
    expect(zoneOffsetMs(t, 'America/New_York')).toBe(-4 * HOUR);
    expect(localHourAndDay(t, 'America/New_York')).toEqual({ hour: 8, day: '2026-06-01' });
    expect(isKnownTimeZone('Europe/Berlin')).toBe(true);
    expect(isKnownTimeZone('Nowhere/City')).toBe(false);
  });
});
