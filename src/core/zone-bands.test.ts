import { describe, expect, it } from 'vitest';
import { zoneBandAt, zoneBandsForSlots, type BandStart } from './zone-bands.js';

const h = 3_600_000;
const day = 24 * h;
const fallback = { minC: 20, maxC: 22 };
// Mornings from 06:00 at 20..22.5, nights from 22:00 at 17..21, on two days.
const starts: BandStart[] = [0, 1].flatMap((d) => [
  { atMs: d * day + 6 * h, minC: 20, maxC: 22.5 },
  { atMs: d * day + 22 * h, minC: 17, maxC: 21 },
]);
const hourly = (fromH: number, n: number) => Array.from({ length: n }, (_, i) => ({ startMs: (fromH + i) * h, endMs: (fromH + i + 1) * h }));

describe('zoneBandAt', () => {
  it.each([
    ['before the first start: the fallback', 5 * h, fallback],
    ['at a start: that band', 6 * h, { minC: 20, maxC: 22.5 }],
    ['between starts: the latest', 21 * h + 59 * 60_000, { minC: 20, maxC: 22.5 }],
    ['past midnight: the night band holds until the next morning', day + 3 * h, { minC: 17, maxC: 21 }],
    ['the next morning', day + 6 * h, { minC: 20, maxC: 22.5 }],
  ])('%s', (_name, atMs, band) => {
    expect(zoneBandAt(starts, atMs, fallback)).toEqual(band);
  });

  it('of two bands starting at once, the warmer', () => {
    const both: BandStart[] = [
      { atMs: h, minC: 18, maxC: 23 },
      { atMs: h, minC: 19, maxC: 20 },
    ];
    expect(zoneBandAt(both, 2 * h, fallback)).toEqual({ minC: 19, maxC: 20 });
  });
});

describe('zoneBandsForSlots', () => {
  it('gives each hourly slot the band at its start', () => {
    expect(zoneBandsForSlots(starts, hourly(4, 4), fallback)).toEqual([fallback, fallback, { minC: 20, maxC: 22.5 }, { minC: 20, maxC: 22.5 }]);
  });

  it('a warmer band starting mid-slot raises the whole slot; a cooler one waits for the next slot', () => {
    const half: BandStart[] = [
      { atMs: 6.5 * h, minC: 21, maxC: 23 },
      { atMs: 22.5 * h, minC: 17, maxC: 21 },
    ];
    const bands = zoneBandsForSlots(half, [...hourly(6, 1), ...hourly(22, 2)], { minC: 18, maxC: 22 });
    expect(bands).toEqual([
      { minC: 21, maxC: 23 },
      { minC: 21, maxC: 23 },
      { minC: 17, maxC: 21 },
    ]);
  });

  it('without starts: the fallback everywhere (a preset other than comfort, or no schedule)', () => {
    expect(zoneBandsForSlots([], hourly(0, 3), { minC: 12, maxC: 16 })).toEqual(Array(3).fill({ minC: 12, maxC: 16 }));
  });

  it('quarter-hour slots follow the band change at their own edge', () => {
    const quarters = Array.from({ length: 4 }, (_, i) => ({ startMs: 5.5 * h + i * 15 * 60_000, endMs: 5.5 * h + (i + 1) * 15 * 60_000 }));
    expect(zoneBandsForSlots(starts, quarters, fallback).map((b) => b.maxC)).toEqual([22, 22, 22.5, 22.5]);
  });
});
