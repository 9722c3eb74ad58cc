/** The daily-curve poll's node-cron schedule: 13:05 local, real elapsed time across DST. */
import { describe, expect, it } from 'vitest';
import { cronSchedule } from '../timing/cron.js';
import { dailyCurveCron } from './event-poller.js';

const oslo = 'Europe/Oslo';
const min = 60_000;
const hour = 60 * min;
const msUntilDailyCurve = (nowMs: number, timezone: string): number => cronSchedule({ cron: dailyCurveCron, timezone }).nextAfterMs(nowMs) - nowMs;

describe('the daily-curve poll', () => {
  it('waits until 13:05 Oslo time, winter (UTC+1) and summer (UTC+2)', () => {
    expect(msUntilDailyCurve(Date.UTC(2025, 0, 15, 11, 0), oslo)).toBe(65 * min); // 12:00 local
    expect(msUntilDailyCurve(Date.UTC(2025, 6, 15, 10, 0), oslo)).toBe(65 * min); // 12:00 local
    expect(msUntilDailyCurve(Date.UTC(2025, 6, 15, 11, 4, 59), oslo)).toBe(1000);
  });
  it('after the check time, waits for the next day', () => {
    expect(msUntilDailyCurve(Date.UTC(2025, 0, 15, 12, 5), oslo)).toBe(24 * hour);
    expect(msUntilDailyCurve(Date.UTC(2025, 0, 15, 12, 6), oslo)).toBe(24 * hour - min);
    expect(msUntilDailyCurve(Date.UTC(2025, 0, 15, 22, 0), oslo)).toBe(14 * hour + 5 * min);
  });
  it('counts real time across the DST changes', () => {
    // 2025-03-30: 02:00 → 03:00. At 00:30 local (23:30Z the day before) 13:05 CEST is 11:05Z.
    expect(msUntilDailyCurve(Date.UTC(2025, 2, 29, 23, 30), oslo)).toBe(11 * hour + 35 * min);
    // The day before, after the check: 13:05 CET on the 29th passed; next is 11:05Z on the 30th.
    expect(msUntilDailyCurve(Date.UTC(2025, 2, 29, 12, 5), oslo)).toBe(23 * hour);
    // 2025-10-26: 03:00 → 02:00. From 13:05 CEST on the 25th (11:05Z) to 13:05 CET (12:05Z): 25 h.
    expect(msUntilDailyCurve(Date.UTC(2025, 9, 25, 11, 5), oslo)).toBe(25 * hour);
    expect(msUntilDailyCurve(Date.UTC(2025, 9, 26, 0, 30), oslo)).toBe(11 * hour + 35 * min);
  });
  it('honours another zone', () => {
    expect(msUntilDailyCurve(Date.UTC(2025, 0, 15, 12, 0), 'UTC')).toBe(hour + 5 * min);
    // 12:00Z is 14:00 in Helsinki (UTC+2): the next 13:05 is tomorrow's.
    expect(msUntilDailyCurve(Date.UTC(2025, 0, 15, 12, 0), 'Europe/Helsinki')).toBe(23 * hour + 5 * min);
  });
});
