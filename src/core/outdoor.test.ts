import { describe, expect, it } from 'vitest';
import { outdoorTempsForSlots, UNKNOWN_OUTDOOR_C } from './outdoor.js';
import type { OutdoorForecast } from './types.js';

const H = 3_600_000;
const t0 = Date.UTC(2026, 0, 15, 12);
const metno = (temps: number[], stepH = 1): OutdoorForecast => ({
  source: 'metno',
  points: temps.map((tempC, i) => ({ startMs: t0 + i * stepH * H, tempC })),
  updatedMs: t0,
});
const quarter = 15 * 60_000;

describe('outdoorTempsForSlots', () => {
  it.each([
    {
      name: 'hourly slots on the points',
      forecast: metno([-5, -3, -1]),
      slots: [t0, t0 + H, t0 + 2 * H],
      now: t0,
      temps: [-5, -3, -1],
      source: 'metno',
    },
    {
      name: 'quarter-hour slots interpolated linearly',
      forecast: metno([-4, 0]),
      slots: [t0, t0 + quarter, t0 + 2 * quarter, t0 + 3 * quarter, t0 + H],
      now: t0,
      temps: [-4, -3, -2, -1, 0],
      source: 'metno',
    },
    { name: "across MET's 6-hourly tail", forecast: metno([0, 6], 6), slots: [t0 + 2 * H, t0 + 3 * H], now: t0, temps: [2, 3], source: 'metno' },
    {
      name: 'beyond the end: the last value held',
      forecast: metno([1, 2]),
      slots: [t0 + H, t0 + 2 * H, t0 + 5 * H],
      now: t0,
      temps: [2, 2, 2],
      source: 'persistence',
    },
    {
      name: 'a slot under way takes the temperature now',
      forecast: metno([0, 4]),
      slots: [t0, t0 + H],
      now: t0 + 30 * 60_000,
      temps: [2, 4],
      source: 'metno',
    },
    {
      name: 'before the first point: the first point',
      forecast: metno([3, 5]),
      slots: [t0 - 2 * H, t0 - H],
      now: t0 - 3 * H,
      temps: [3, 3],
      source: 'metno',
    },
    {
      name: 'a forecast wholly in the past: persistence',
      forecast: metno([-7, -8]),
      slots: [t0 + 10 * H],
      now: t0 + 10 * H,
      temps: [-8],
      source: 'persistence',
    },
    {
      name: 'a held forecast stays persistence',
      forecast: { ...metno([4]), source: 'persistence' as const },
      slots: [t0],
      now: t0,
      temps: [4],
      source: 'persistence',
    },
    {
      name: 'nothing known: the constant',
      forecast: { source: 'none' as const, points: [], updatedMs: null },
      slots: [t0, t0 + H],
      now: t0,
      temps: [UNKNOWN_OUTDOOR_C, UNKNOWN_OUTDOOR_C],
      source: 'none',
    },
    {
      name: 'points out of order and slots out of order',
      forecast: {
        source: 'metno' as const,
        points: [
          { startMs: t0 + H, tempC: 2 },
          { startMs: t0, tempC: 0 },
        ],
        updatedMs: t0,
      },
      slots: [t0 + H, t0 + 30 * 60_000, t0],
      now: t0,
      temps: [2, 1, 0],
      source: 'metno',
    },
    { name: 'no slots', forecast: metno([1]), slots: [], now: t0, temps: [], source: 'metno' },
  ])('$name', ({ forecast, slots, now, temps, source }) => {
    const got = outdoorTempsForSlots(forecast, slots, now);
    expect(got.tempsC.map((t) => Math.round(t * 1000) / 1000)).toEqual(temps);
    expect(got.source).toBe(source);
  });
});
