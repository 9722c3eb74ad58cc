/**
 * Zone rules from the system's tz files (Debian's tzdata) against Intl, which the daemon used
 * before and still uses for a zone without a usable file.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_ZONEINFO_DIR, zoneinfoSource } from '../src/zone-database.js';
import { useZoneData, zoneRules } from '../src/core/zone-rules.js';
import { utcOffsetMs, type ZoneRules } from '../src/core/tzif.js';
import { hoursOfLocalDay, localDayStartMs, localParts, localTimeToUtcMs, zoneOffsetMs, type LocalParts } from '../src/core/zoned-time.js';
import { slotLocalInfo } from '../src/core/local-time.js';
import { siteSchema } from '../src/config/schema.js';

const HOUR = 3_600_000;
const FROM = Date.UTC(1990, 0, 1);
const TO = Date.UTC(2100, 0, 1);

const intlFormats = new Map<string, Intl.DateTimeFormat>();
/** The reference: wall-clock minute fields from Intl. */
function intlParts(ms: number, zone: string): LocalParts {
  let f = intlFormats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric' });
    intlFormats.set(zone, f);
  }
  const p = Object.fromEntries(f.formatToParts(ms).map((x) => [x.type, Number(x.value)]));
  return { year: p.year!, month: p.month!, day: p.day!, hour: p.hour!, minute: p.minute! };
}
const intlOffset = (ms: number, zone: string): number => {
  const p = intlParts(ms, zone);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute) - Math.floor(ms / 60_000) * 60_000;
};

if (!existsSync(join(DEFAULT_ZONEINFO_DIR, 'Europe/Oslo'))) throw new Error(`these tests read ${DEFAULT_ZONEINFO_DIR}: install the tzdata package`);
const systemSource = zoneinfoSource({});
const useSystemZones = (): void => useZoneData(systemSource);
afterEach(() => useZoneData(undefined));

const named = ['Europe/Oslo', 'Europe/London', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata', 'Pacific/Chatham', 'America/St_Johns', 'UTC', 'Etc/GMT-1'];
const zones = [...new Set([...named, ...Intl.supportedValuesOf('timeZone')])].filter((z) => systemSource(z));

function rulesOf(zone: string): ZoneRules {
  const rules = zoneRules(zone);
  if (!rules) throw new Error(`no rules for ${zone}`);
  return rules;
}

const WEEK = 7 * 86_400_000;

/**
 * Instants at which the zone's offset changes in [FROM, TO): the listed ones, then the footer's,
 * found week by week (no zone keeps an offset for less than a week) and bisected to the ms.
 */
function switchesOf(rules: ZoneRules): number[] {
  const listed = [...rules.transitionsMs].filter((t) => t >= FROM && t < TO);
  if (!rules.footer.daylight) return listed;
  const found: number[] = [];
  const last = rules.transitionsMs.at(-1) ?? FROM;
  for (let t = Math.max(last, FROM); t + WEEK < TO; t += WEEK) {
    if (utcOffsetMs(rules, t) === utcOffsetMs(rules, t + WEEK)) continue;
    let [lo, hi] = [t, t + WEEK];
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (utcOffsetMs(rules, mid) === utcOffsetMs(rules, t)) lo = mid;
      else hi = mid;
    }
    found.push(hi);
  }
  return [...listed, ...found];
}

describe('zone rules from /usr/share/zoneinfo', () => {
  it(`match Intl in offsets and local fields for ${zones.length} zones, 1990 to 2100`, () => {
    expect(zones.length).toBeGreaterThan(400);
    useSystemZones();
    fc.assert(fc.property(fc.constantFrom(...zones), fc.integer({ min: FROM, max: TO }), (zone, ms) => {
      expect(zoneOffsetMs(ms, zone)).toBe(intlOffset(ms, zone));
      expect(localParts(ms, zone)).toEqual(intlParts(ms, zone));
    }), { numRuns: 20_000 });
  });

  it('match Intl on both sides of every offset change, 1990 to 2100', () => {
    useSystemZones();
    let checked = 0;
    for (const zone of zones) {
      for (const t of switchesOf(rulesOf(zone))) {
        for (const ms of [t - 1, t]) {
          if (zoneOffsetMs(ms, zone) !== intlOffset(ms, zone)) expect.fail(`${zone} at ${new Date(ms).toISOString()}`);
        }
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(10_000);
  });

  it('give the 2026 DST days of Oslo exactly: 02:00 → 03:00 in spring, 03:00 → 02:00 in autumn', () => {
    useSystemZones();
    const oslo = 'Europe/Oslo';
    expect(utcOffsetMs(rulesOf(oslo), Date.UTC(2026, 2, 29, 1) - 1)).toBe(HOUR);
    expect(utcOffsetMs(rulesOf(oslo), Date.UTC(2026, 2, 29, 1))).toBe(2 * HOUR);
    expect(utcOffsetMs(rulesOf(oslo), Date.UTC(2026, 9, 25, 1) - 1)).toBe(2 * HOUR);
    expect(utcOffsetMs(rulesOf(oslo), Date.UTC(2026, 9, 25, 1))).toBe(HOUR);

    const spring = localDayStartMs(Date.UTC(2026, 2, 29, 12), oslo);
    expect(spring).toBe(Date.UTC(2026, 2, 28, 23));
    expect(slotLocalInfo(hoursOfLocalDay(spring, oslo), oslo).hours).toEqual([0, 1, ...Array.from({ length: 21 }, (_, i) => i + 3)]);
    expect(localTimeToUtcMs(2026, 3, 29, 2, oslo)).toBe(Date.UTC(2026, 2, 29, 1));

    const autumn = localDayStartMs(Date.UTC(2026, 9, 25, 12), oslo);
    expect(autumn).toBe(Date.UTC(2026, 9, 24, 22));
    const { hours, dayIndex } = slotLocalInfo(hoursOfLocalDay(autumn, oslo), oslo);
    expect(hours).toEqual([0, 1, 2, 2, ...Array.from({ length: 21 }, (_, i) => i + 3)]);
    expect(new Set(dayIndex)).toEqual(new Set([0]));
    expect(localParts(Date.UTC(2026, 9, 25, 0, 59), oslo)).toEqual({ year: 2026, month: 10, day: 25, hour: 2, minute: 59 });
    expect(localParts(Date.UTC(2026, 9, 25, 1), oslo)).toEqual({ year: 2026, month: 10, day: 25, hour: 2, minute: 0 });
  });
});

describe('zoneinfoSource', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wattshift-tzdir-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'Test'));
  const oslo = readFileSync(join(DEFAULT_ZONEINFO_DIR, 'Europe/Oslo'));
  copyFileSync(join(DEFAULT_ZONEINFO_DIR, 'Europe/Oslo'), join(dir, 'Test/Copy'));
  writeFileSync(join(dir, 'Test/Truncated'), oslo.subarray(0, oslo.length - 20));
  writeFileSync(join(dir, 'Test/Garbage'), 'not a zone\n');

  it('reads $TZDIR when it is set', () => {
    useZoneData(zoneinfoSource({ TZDIR: dir }));
    expect(zoneRules('Test/Copy')).not.toBeNull();
    expect(zoneRules('Europe/Oslo')).toBeNull();
    expect(zoneOffsetMs(Date.UTC(2026, 6, 1), 'Test/Copy')).toBe(2 * HOUR);
  });

  it('falls back to Intl, with the same results, for a missing and for a corrupt file', () => {
    // Real zone names whose files in this TZDIR are absent, cut short, or garbage.
    mkdirSync(join(dir, 'Europe'), { recursive: true });
    writeFileSync(join(dir, 'Europe/Berlin'), oslo.subarray(0, oslo.length - 20));
    writeFileSync(join(dir, 'Europe/Paris'), 'not a zone\n');
    useZoneData(zoneinfoSource({ TZDIR: dir }));
    for (const zone of ['America/New_York', 'Europe/Berlin', 'Europe/Paris']) {
      expect(zoneRules(zone), zone).toBeNull();
      for (const ms of [Date.UTC(2026, 2, 29, 1) - 1, Date.UTC(2026, 2, 29, 1), Date.UTC(2026, 6, 1, 12, 34), Date.UTC(2026, 10, 1, 6)]) {
        expect(zoneOffsetMs(ms, zone)).toBe(intlOffset(ms, zone));
        expect(localParts(ms, zone)).toEqual(intlParts(ms, zone));
      }
    }
    expect(zoneRules('Test/Truncated')).toBeNull();
    expect(zoneRules('Test/Garbage')).toBeNull();
  });

  it('reads only zone names: no paths out of the directory, no directories, no posix/ or right/ builds', () => {
    for (const name of ['../zoneinfo/Europe/Oslo', 'Europe/../Europe/Oslo', '/Europe/Oslo', 'Europe//Oslo', 'Europe/Oslo/', 'Europe', 'posix/Europe/Oslo', 'right/Europe/Oslo', '']) {
      expect(systemSource(name), name).toBeUndefined();
    }
    expect(systemSource('Arctic/Longyearbyen')).toBeInstanceOf(Uint8Array); // a symbolic link in Debian
    expect(systemSource('Etc/GMT+1')).toBeInstanceOf(Uint8Array);
  });
});

describe('site.timezone validation', () => {
  const accepts = (tz: string): boolean => siteSchema.shape.timezone.safeParse(tz).success;
  const acceptedBefore = (tz: string): boolean => {
    try {
      new Intl.DateTimeFormat('en-GB', { timeZone: tz });
      return tz.includes('/') || tz === 'UTC';
    } catch {
      return false;
    }
  };
  const fileNames = (readdirSync(DEFAULT_ZONEINFO_DIR, { recursive: true }) as string[]).filter((n) => !/^(posix|right)\//.test(n));
  const spellings = ['UTC', 'Etc/GMT-1', 'Etc/UTC', 'Asia/Kolkata', 'Asia/Calcutta', 'Europe/Kyiv', 'US/Eastern', 'europe/oslo', 'EUROPE/OSLO',
    'EST5EDT', 'CET', 'GMT', 'Factory', 'Nowhere/City', 'posix/Europe/Oslo', 'right/Europe/Oslo', 'Europe/Oslo/', '../Europe/Oslo', ''];

  it('accepts and refuses exactly what it did with Intl alone, with and without zone files', () => {
    const names = [...new Set([...spellings, ...fileNames, ...Intl.supportedValuesOf('timeZone')])];
    for (const source of [systemSource, undefined]) {
      useZoneData(source);
      const differing = names.filter((tz) => accepts(tz) !== acceptedBefore(tz));
      expect(differing).toEqual([]);
    }
    expect(accepts('Etc/GMT-1') && accepts('UTC') && accepts('europe/oslo') && !accepts('EST5EDT')).toBe(true);
  });
});
