import { describe, expect, it } from 'vitest';
import { nextLocalTimeMs } from './departure.js';

const tz = 'Europe/Oslo';

describe('nextLocalTimeMs', () => {
  it('finds today or tomorrow in winter time (UTC+1)', () => {
    expect(nextLocalTimeMs(Date.UTC(2026, 0, 10, 3), '07:00', tz)).toBe(Date.UTC(2026, 0, 10, 6));
    expect(nextLocalTimeMs(Date.UTC(2026, 0, 10, 6), '07:00', tz)).toBe(Date.UTC(2026, 0, 11, 6));
  });
  it('is right in summer time (UTC+2) and across the spring change', () => {
    expect(nextLocalTimeMs(Date.UTC(2026, 6, 1, 12), '07:00', tz)).toBe(Date.UTC(2026, 6, 2, 5));
    // 2026-03-29: clocks go 02:00 → 03:00; 07:00 that day is 05:00 UTC
    expect(nextLocalTimeMs(Date.UTC(2026, 2, 28, 20), '07:00', tz)).toBe(Date.UTC(2026, 2, 29, 5));
  });
  it('crosses the autumn change', () => {
    // 2026-10-25: clocks go 03:00 → 02:00; 07:00 that day is 06:00 UTC
    expect(nextLocalTimeMs(Date.UTC(2026, 9, 24, 20), '07:00', tz)).toBe(Date.UTC(2026, 9, 25, 6));
  });
});
