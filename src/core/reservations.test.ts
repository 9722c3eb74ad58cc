import { describe, expect, it } from 'vitest';
import { planHome } from './home-plan.js';
import type { EvParams, HomePlanInput, LpcCap, Plan, TankParams } from './types.js';
import { H, hourlySlots, osloMidnight as T0 } from '../../test/fixtures/price-slots.js';

/*
 * Five hours at 0.30, 0.25, 0.40, 0.10, 0.12 EUR/kWh; the home draws 1 kW besides the tank and the car.
 * The car needs 8 kWh by 05:00 at up to 4 kW (efficiency 1): two full hours. The tank holds no
 * losses and no draws and must go from 60 to 70 °C by 05:00: 200 L × 4.186 kJ/(kg·K) × 10 K =
 * 2.33 kWh at up to 2 kW. Both would take the cheap hours 03:00 and 04:00. A reservation over those
 * hours at 1 kW leaves them no room there, so the plan takes 00:00 and 01:00 instead. A reservation
 * is only probable: where keeping it would leave a need short, the plan does not keep it.
 */
const prices = [0.3, 0.25, 0.4, 0.1, 0.12];
const tankNeedKwh = (200 * 4.186 * 10) / 3600;
const tank: TankParams & { id: string } = {
  id: 'tank',
  volumeL: 200,
  powerKw: 2,
  coldWaterC: 8,
  ambientC: 18,
  heatLossWPerK: 0,
  minC: 50,
  maxC: 75,
  currentTempC: 60,
  control: 'continuous',
  drawProfileKwh: Array.from({ length: 24 }, () => 0),
  comfort: [{ atMs: T0 + 5 * H, tempC: 70, label: 'hot water by 05:00' }],
};
const car: EvParams & { id: string } = { id: 'car', energyNeededKwh: 8, departureMs: T0 + 5 * H, minPowerKw: 0, maxPowerKw: 4, efficiency: 1 };
const window = (maxKw: number, reservationId?: string): LpcCap[] =>
  [3, 4].map((h) => ({ startMs: T0 + h * H, endMs: T0 + (h + 1) * H, maxKw, scope: 'location', ...(reservationId ? { reservationId } : {}) }));

const input = (devices: Pick<HomePlanInput, 'tanks' | 'evs'>, lpc: LpcCap[]): HomePlanInput => ({
  slots: hourlySlots(prices),
  timezone: 'Europe/Oslo',
  currency: 'EUR',
  ...devices,
  location: { limitKw: 17, baseLoadKw: 1, lpc },
});
const energy = (p: Plan, kind: 'tanks' | 'evs', id: string): number[] => p.slots.map((s) => Math.round((s[kind]?.[id]?.energyKwh ?? 0) * 100) / 100);
const t = Math.round(tankNeedKwh * 100) / 100;

describe('a reserved LPC cap', () => {
  const rows: { name: string; devices: Pick<HomePlanInput, 'tanks' | 'evs'>; lpc: LpcCap[]; tank?: number[]; car?: number[]; binding: string[] }[] = [
    {
      name: 'no reservation: the car and the tank take 03:00 and 04:00',
      devices: { tanks: [tank], evs: [car] },
      lpc: [],
      tank: [0, 0, 0, 2, t - 2],
      car: [0, 0, 0, 4, 4],
      binding: [],
    },
    {
      name: 'a 1 kW reservation: both move ahead, to 00:00 and 01:00',
      devices: { tanks: [tank], evs: [car] },
      lpc: window(1, 'res-1'),
      tank: [t - 2, 2, 0, 0, 0],
      car: [4, 4, 0, 0, 0],
      binding: ['reservedLpc', 'reservedLpc'],
    },
    {
      name: 'a 3 kW reservation: the car keeps 2 kW there and takes the rest at 01:00',
      devices: { tanks: [], evs: [car] },
      lpc: window(3, 'res-1'),
      car: [0, 4, 0, 2, 2],
      binding: ['reservedLpc', 'reservedLpc'],
    },
    {
      name: 'the tank alone ahead of a 1 kW reservation',
      devices: { tanks: [tank], evs: [] },
      lpc: window(1, 'res-1'),
      tank: [t - 2, 2, 0, 0, 0],
      binding: ['reservedLpc', 'reservedLpc'],
    },
    {
      name: 'an LPC cap moves them the same, bound as an LPC',
      devices: { tanks: [], evs: [car] },
      lpc: window(1),
      car: [4, 4, 0, 0, 0],
      binding: ['lpc', 'lpc'],
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const p = planHome(input(row.devices, row.lpc), T0);
      if (row.tank) expect(energy(p, 'tanks', 'tank')).toEqual(row.tank.map((x) => Math.round(x * 100) / 100));
      if (row.car) expect(energy(p, 'evs', 'car')).toEqual(row.car);
      expect(p.slots.slice(3).flatMap((s) => s.binding.filter((b) => b === 'lpc' || b === 'reservedLpc'))).toEqual(row.binding);
      expect(p.shortfalls).toEqual([]);
    });
  }

  it('is not kept where it would leave a need short: a car needing 16 kWh has only 12 kWh of room outside the window', () => {
    // Four full hours are needed; outside the window there are three. Planning without the
    // reservation takes the four cheapest: 03:00, 04:00, 01:00, 00:00.
    const p = planHome(input({ tanks: [], evs: [{ ...car, energyNeededKwh: 16 }] }, window(1, 'res-1')), T0);
    expect(energy(p, 'evs', 'car')).toEqual([4, 4, 0, 4, 4]);
    expect(p.shortfalls).toEqual([]);
    expect(p.reservations).toEqual([{ eventId: 'res-1', startMs: T0 + 3 * H, endMs: T0 + 5 * H, maxKw: 1, kept: false, insideKwh: 8, beforeKwh: 8 }]);
  });

  it('is recorded in the plan with the energy planned inside and before its window', () => {
    const p = planHome(input({ tanks: [tank], evs: [car] }, window(1, 'res-1')), T0);
    expect(p.reservations).toHaveLength(1);
    expect(p.reservations?.[0]).toMatchObject({ eventId: 'res-1', startMs: T0 + 3 * H, endMs: T0 + 5 * H, maxKw: 1, kept: true, insideKwh: 0 });
    expect(p.reservations?.[0]?.beforeKwh).toBeCloseTo(8 + tankNeedKwh, 2);
    expect(planHome(input({ tanks: [tank], evs: [car] }, window(1)), T0).reservations).toBeUndefined();
  });
});
