/**
 * Local time from Intl, in the cases the daemon lives on: DST days of 23 and 25 hours, the daily
 * 13:00 local price curve, repeated and skipped wall times, zones whose offsets or changes are not
 * whole UTC hours (the per-hour cache must not smear a change inside an hour).
 */
import { describe, expect, it } from 'vitest';
import {
  HOUR_MS,
  MINUTE_MS,
  hoursOfLocalDay,
  isKnownTimeZone,
  localDateString,
  localDayStartMs,
  localParts,
  localTimeToUtcMs,
  zoneOffsetMs,
} from './zoned-time.js';
import { slotLocalInfo } from './local-time.js';

const oslo = 'Europe/Oslo';
const newYork = 'America/New_York';

describe('days of 23, 24 and 25 hours', () => {
  it.each([
    ['spring change in Oslo', oslo, Date.UTC(2026, 2, 29, 1), 23, Date.UTC(2026, 2, 28, 23)],
    ['ordinary day in Oslo', oslo, Date.UTC(2026, 5, 10, 12), 24, Date.UTC(2026, 5, 9, 22)],
    ['autumn change in Oslo', oslo, Date.UTC(2026, 9, 25, 12), 25, Date.UTC(2026, 9, 24, 22)],
    ['spring change in New York', newYork, Date.UTC(2026, 2, 8, 12), 23, Date.UTC(2026, 2, 8, 5)],
    ['autumn change in New York', newYork, Date.UTC(2026, 10, 1, 12), 25, Date.UTC(2026, 10, 1, 4)],
  ])('%s', (_name, zone, inside, hours, midnightUtc) => {
    const start = localDayStartMs(inside, zone);
    expect(start).toBe(midnightUtc);
    const day = hoursOfLocalDay(start, zone);
    expect(day).toHaveLength(hours);
    expect(localDayStartMs(inside, zone, 1)).toBe(start + hours * HOUR_MS);
    expect(new Set(day.map((t) => localDateString(t, zone)))).toEqual(new Set([localDateString(inside, zone)]));
  });

  it('the 25-hour day has two slots of local hour 2, the 23-hour day none', () => {
    const autumn = slotLocalInfo(hoursOfLocalDay(Date.UTC(2026, 9, 24, 22), oslo), oslo);
    expect(autumn.hours.filter((h) => h === 2)).toHaveLength(2);
    expect(new Set(autumn.dayIndex)).toEqual(new Set([0]));
    const spring = slotLocalInfo(hoursOfLocalDay(Date.UTC(2026, 2, 28, 23), oslo), oslo);
    expect(spring.hours).not.toContain(2);
    expect(spring.hours).toHaveLength(23);
  });
});

describe('the 13:00 local price curve', () => {
  it('is 12:00 UTC in winter and 11:00 UTC in summer, also on the change days', () => {
    expect(localTimeToUtcMs(2026, 1, 15, 13, oslo)).toBe(Date.UTC(2026, 0, 15, 12));
    expect(localTimeToUtcMs(2026, 7, 15, 13, oslo)).toBe(Date.UTC(2026, 6, 15, 11));
    expect(localTimeToUtcMs(2026, 3, 29, 13, oslo)).toBe(Date.UTC(2026, 2, 29, 11));
    expect(localTimeToUtcMs(2026, 10, 25, 13, oslo)).toBe(Date.UTC(2026, 9, 25, 12));
  });
});

describe('wall times that repeat or do not exist', () => {
  it('the repeated 02:30 is the later instant in Oslo and the earlier in New York', () => {
    expect(localTimeToUtcMs(2026, 10, 25, 2, oslo, 30)).toBe(Date.UTC(2026, 9, 25, 1, 30));
    expect(localTimeToUtcMs(2026, 11, 1, 1, newYork, 30)).toBe(Date.UTC(2026, 10, 1, 5, 30));
  });

  it('the skipped 02:30 moves by the gap', () => {
    expect(localParts(localTimeToUtcMs(2026, 3, 29, 2, oslo, 30), oslo)).toMatchObject({ hour: 3, minute: 30 });
    expect(localParts(localTimeToUtcMs(2026, 3, 8, 2, newYork, 30), newYork)).toMatchObject({ hour: 1, minute: 30 });
  });
});

describe('zones that are not whole hours', () => {
  it('Kolkata is +05:30 and Kathmandu +05:45 all year', () => {
    expect(zoneOffsetMs(Date.UTC(2026, 0, 1), 'Asia/Kolkata')).toBe(330 * MINUTE_MS);
    expect(localParts(Date.UTC(2026, 0, 1, 0, 20), 'Asia/Kathmandu')).toMatchObject({ hour: 6, minute: 5 });
  });

  it('Lord Howe changes by 30 minutes at 02:00 local, inside a UTC hour, minute by minute right', () => {
    // 2026-04-05 02:00 +11:00 = 2026-04-04 15:00 UTC; clocks go back to 01:30 (+10:30).
    const change = Date.UTC(2026, 3, 4, 15, 0);
    // Ask the hour after first, so a cache filled per hour would answer for the change's hour from it.
    expect(zoneOffsetMs(change + HOUR_MS, 'Australia/Lord_Howe')).toBe(630 * MINUTE_MS);
    expect(zoneOffsetMs(change - MINUTE_MS, 'Australia/Lord_Howe')).toBe(660 * MINUTE_MS);
    expect(zoneOffsetMs(change, 'Australia/Lord_Howe')).toBe(630 * MINUTE_MS);
    // Historical Oslo: Central European Time since 1895, so 1900 is +01:00.
    expect(zoneOffsetMs(Date.UTC(1900, 0, 1), oslo)).toBe(HOUR_MS);
  });

  it('answers the same for instants asked in any order (the cache keeps no wrong hour)', () => {
    const start = Date.UTC(2026, 9, 24, 20);
    const instants = Array.from({ length: 24 * 12 }, (_, i) => start + i * 5 * MINUTE_MS);
    const forward = instants.map((t) => zoneOffsetMs(t, 'Europe/Berlin'));
    const backward = [...instants]
      .reverse()
      .map((t) => zoneOffsetMs(t, 'Europe/Berlin'))
      .reverse();
    expect(backward).toEqual(forward);
    expect(new Set(forward)).toEqual(new Set([HOUR_MS, 2 * HOUR_MS]));
    const change = Date.UTC(2026, 9, 25, 1);
    expect(forward.every((o, i) => o === (instants[i]! < change ? 2 * HOUR_MS : HOUR_MS))).toBe(true);
  });
});

describe('isKnownTimeZone', () => {
  it('knows IANA names and refuses made-up ones', () => {
    expect(isKnownTimeZone('Europe/Oslo')).toBe(true);
    expect(isKnownTimeZone('UTC')).toBe(true);
    expect(isKnownTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(isKnownTimeZone('')).toBe(false);
  });
});
