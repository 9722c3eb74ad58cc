/**
 * A re-plan inside a slot whose frozen rest leaves the car a little short (seen against field-true devices):
 * the field-truth scenario's 13:29 re-plan, prices and car as the daemon gave them to `plan()`.
 */
import { describe, expect, it } from 'vitest';
import { plan } from '../src/core/planner.js';
import { buildPriceSeries } from '../src/core/prices.js';
import type { EvParams, PlanInput } from '../src/core/types.js';

const H = 3_600_000;
const T13 = Date.parse('2026-01-14T12:00:00Z'); // 13:00 in Oslo: the last paid hour
// From 13:00: the paid hour (delta −4), the dear hour (delta +1), then spot + fees into the next
// day, with two small negative-delta hours in the night. The car leaves at 07:00.
const prices = [
  -3.322, 1.711, 0.774, 0.849, 0.969, 1.024, 0.953, 0.851, 0.801, 0.784, 0.756, 0.76, 0.757, -0.181, -0.257, 0.731, 0.747, 0.786, 0.892, 0.908, 0.829,
  0.762, -0.169, -0.306,
];
const dearSlot = T13 + H;

function input(ev: Partial<EvParams>): PlanInput {
  const slots = buildPriceSeries({
    slotMinutes: 60,
    fromMs: T13,
    toMs: T13 + prices.length * H,
    timezone: 'Europe/Oslo',
    currency: 'NOK',
    spot: {
      actual: {
        units: { currency: 'NOK', energyUnit: 'kWh' },
        resolutionMinutes: 60,
        points: prices.map((price, i) => ({ startMs: T13 + i * H, price })),
      },
    },
    deltas: [],
    fees: { gridFeePerKwh: 0, taxPerKwh: 0 },
  });
  return {
    slots,
    timezone: 'Europe/Oslo',
    currency: 'NOK',
    tank: null,
    location: { limitKw: 17, baseLoadKw: 0.5 },
    ev: { departureMs: Date.parse('2026-01-15T06:00:00Z'), minPowerKw: 4.14, maxPowerKw: 11.04, efficiency: 0.9, energyNeededKwh: 0, ...ev },
    options: { frozenSlots: 0 },
  };
}

describe('EV re-plan after a frozen slot', () => {
  it('puts a remainder smaller than the minimum power into the cheapest slot, not into every slot', () => {
    // 13:00:48: the car needs what the paid hour holds; the plan fills it.
    const first = plan(input({ energyNeededKwh: 9.748 }), T13 + 48_000);
    expect(first.slots[0]!.evs!.ev!.energyKwh).toBeCloseTo(10.83, 2);
    // 13:29: the slot delivered 5.345 kWh; its frozen rest (5.49 kWh) is 0.27 kWh short of the need.
    const delivered = 5.345;
    const need = 5.1756;
    const p = plan(input({ energyNeededKwh: need, slotDeliveredKwh: delivered }), T13 + 29 * 60_000 + 11_000, first);
    const ev = p.slots.map((s) => s.evs!.ev!.energyKwh);
    expect(ev[0]).toBeCloseTo(first.slots[0]!.evs!.ev!.energyKwh, 6); // the current slot keeps its target
    expect(p.slots.find((s) => s.startMs === dearSlot)!.evs!.ev!.energyKwh).toBe(0);
    const planned = ev.reduce((x, y) => x + y, 0) - delivered;
    expect(planned).toBeGreaterThanOrEqual(need / 0.9 - 1e-6);
    // At most one slot at the charger's minimum more than needed, in the cheapest slot before 07:00.
    const later = p.slots.slice(1).filter((s) => s.evs!.ev!.energyKwh > 0);
    expect(later.map((s) => [new Date(s.startMs).toISOString(), s.evs!.ev!.energyKwh])).toEqual([['2026-01-15T02:00:00.000Z', 4.14]]);
    expect(p.shortfalls).toEqual([]);
  });
});
