import { describe, expect, it } from 'vitest';
import { houseLoad } from './house-load.js';
import { fitLoadModel } from '../core/load-forecast.js';
import { localTimeToUtcMs } from '../core/zoned-time.js';

const TZ = 'Europe/Oslo';
const startMs = localTimeToUtcMs(2025, 1, 6, 0, TZ);

describe('houseLoad', () => {
  it('repeats from its seed, and another seed gives another load', () => {
    const a = houseLoad({ startMs, days: 3, timezone: TZ, seed: 5 });
    expect(houseLoad({ startMs, days: 3, timezone: TZ, seed: 5 })).toEqual(a);
    expect(houseLoad({ startMs, days: 3, timezone: TZ, seed: 6 }).hours[0]!.kwh).not.toBe(a.hours[0]!.kwh);
    expect(a.steps).toHaveLength(3 * 24 * 6);
    // Each hour's energy is the mean of its six ten-minute steps.
    expect(a.hours[5]!.kwh).toBeCloseTo(a.steps.slice(30, 36).reduce((s, x) => s + x.kw, 0) / 6, 9);
  });

  it('has evenings above nights, a colder winter, and the heating the learned forecast finds', () => {
    const year = houseLoad({ startMs, days: 364, timezone: TZ, seed: 1, unusualShare: 0 });
    const meanAt = (pick: (i: number) => boolean): number => {
      const xs = year.hours.filter((_, i) => pick(i)).map((h) => h.kwh);
      return xs.reduce((s, x) => s + x, 0) / xs.length;
    };
    // Local 18:00 is 17:00 UTC in winter: hour index 17 of each day.
    expect(meanAt((i) => i % 24 === 17)).toBeGreaterThan(meanAt((i) => i % 24 === 2) + 0.4);
    const january = year.hours.slice(0, 24 * 28);
    const july = year.hours.slice(24 * 180, 24 * 208);
    const mean = (xs: typeof july): number => xs.reduce((s, x) => s + x.outdoorC, 0) / xs.length;
    expect(mean(january)).toBeLessThan(mean(july) - 10);
    const winter = year.hours.slice(0, 24 * 60);
    const model = fitLoadModel(winter, { timezone: TZ, nowMs: winter.at(-1)!.hourStartMs + 3_600_000, smoothedKw: 1 });
    expect(model.heating?.kwPerK).toBeGreaterThan(0.08);
    expect(model.heating?.kwPerK).toBeLessThan(0.16);
  });
});
