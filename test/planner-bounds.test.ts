/** The planner's boundary: non-finite or absurd input is refused at once, never solved (or looped on). */
import { describe, expect, it } from 'vitest';
import { isWattshiftError } from '../src/errors.js';
import { plan } from '../src/core/planner.js';
import { buildPriceSeries } from '../src/core/prices.js';
import type { PlanInput, PriceSlot } from '../src/core/types.js';

const H = 3_600_000;
const T0 = Date.parse('2025-01-14T23:00:00Z');

function slots(prices: number[]): PriceSlot[] {
  return prices.map((p, i) => ({ startMs: T0 + i * H, endMs: T0 + (i + 1) * H, spot: p, delta: 0, fees: 0, price: p, source: 'actual' as const }));
}

function input(over: Partial<PlanInput> = {}): PlanInput {
  return {
    slots: slots(Array.from({ length: 48 }, (_, i) => 0.1 + (i % 5) * 0.02)),
    timezone: 'Europe/Oslo',
    currency: 'EUR',
    tank: { volumeL: 200, powerKw: 2, coldWaterC: 8, ambientC: 18, heatLossWPerK: 1.6, minC: 50, maxC: 75, currentTempC: 60, control: 'relay' },
    ev: null,
    location: { limitKw: 17, baseLoadKw: 0 },
    ...over,
  };
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (isWattshiftError(err, 'PLAN_INPUT_INVALID')) return err.message;
    throw err;
  }
  throw new Error('expected PLAN_INPUT_INVALID');
}

describe('planner boundary', () => {
  it('plans the sound input', () => {
    expect(Number.isFinite(plan(input(), T0).cost)).toBe(true);
  });

  it.each([
    ['a NaN price', (i: PlanInput) => ({ ...i, slots: i.slots.map((s, k) => (k === 7 ? { ...s, price: NaN } : s)) })],
    ['an infinite price', (i: PlanInput) => ({ ...i, slots: i.slots.map((s, k) => (k === 3 ? { ...s, price: Infinity } : s)) })],
    ['a price of 1e300', (i: PlanInput) => ({ ...i, slots: i.slots.map((s, k) => (k === 3 ? { ...s, price: 1e300 } : s)) })],
    ['a NaN tank temperature', (i: PlanInput) => ({ ...i, tank: { ...i.tank!, currentTempC: NaN } })],
    [
      'an infinite LPC cap',
      (i: PlanInput) => ({ ...i, location: { ...i.location, lpc: [{ scope: 'location' as const, startMs: T0, endMs: T0 + H, maxKw: -Infinity }] } }),
    ],
  ])('refuses %s with PLAN_INPUT_INVALID naming where', (_name, mutate) => {
    expect(refusal(() => plan(mutate(input()), T0))).toMatch(/^input\./);
  });

  it('refuses a horizon of more than a week of quarter-hours', () => {
    const long = Array.from({ length: 7 * 96 + 1 }, () => 0.1);
    expect(refusal(() => plan(input({ slots: slots(long) }), T0))).toMatch(/slots, more than/);
  });

  it('leaves prices of ±1e308 out of the series instead of overflowing it', () => {
    const series = buildPriceSeries({
      slotMinutes: 60,
      fromMs: T0,
      toMs: T0 + 4 * H,
      timezone: 'Europe/Oslo',
      currency: 'EUR',
      spot: {
        actual: {
          units: { currency: 'EUR', energyUnit: 'kWh' },
          resolutionMinutes: 60,
          points: [0.1, 1e308, -1e308, 0.2].map((p, i) => ({ startMs: T0 + i * H, price: p })),
        },
      },
      deltas: [{ units: { currency: 'EUR', energyUnit: 'kWh' }, resolutionMinutes: 60, points: [{ startMs: T0, price: 1e308 }] }],
      fees: { gridFeePerKwh: 0, taxPerKwh: 0 },
    });
    expect(series.every((s) => Number.isFinite(s.price))).toBe(true);
    expect(series.map((s) => s.source)).toEqual(['actual', 'fallback', 'fallback', 'actual']);
    expect(series[0]!.delta).toBe(0);
  });
});
