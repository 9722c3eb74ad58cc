import { describe, expect, it } from 'vitest';
import { plan } from './planner.js';
import type { ComfortDeadline, PlanInput, TankParams } from './types.js';
import { H, hourlySlots, osloMidnight as T0 } from '../../test/fixtures/price-slots.js';

/** Heat capacity of 200 L, kWh/K: 10 K is 2.326 kWh. */
const C = 200 * 0.001163;

function input(prices: number[], tank: Partial<TankParams>, fromMs = T0): PlanInput {
  return {
    slots: hourlySlots(prices, fromMs),
    timezone: 'Europe/Oslo',
    currency: 'EUR',
    // No draw and no loss: the stored energy only moves when the element heats, so every case is by hand.
    tank: {
      volumeL: 200,
      powerKw: 2,
      coldWaterC: 10,
      ambientC: 20,
      heatLossWPerK: 0,
      minC: 45,
      maxC: 75,
      currentTempC: 50,
      drawProfileKwh: new Array<number>(24).fill(0),
      control: 'continuous',
      ...tank,
    },
    location: { limitKw: 17, baseLoadKw: 0 },
  };
}

const ready = (iso: string, tempC = 60): ComfortDeadline => ({ atMs: Date.parse(iso), tempC, label: 'hot water ready by 06:30' });
const energies = (p: ReturnType<typeof plan>): number[] => p.slots.map((s) => Number(s.tanks!.tank!.energyKwh.toFixed(3)));

// Cheap after the deadline, so heating before it is only ever for the deadline.
const prices = [0.3, 0.1, 0.2, 0.4, 0.5, 0.6, 0.7, 0.01, 0.01, 0.01, 0.01, 0.01];

describe('comfort deadlines in the tank planners', () => {
  it('without a deadline the tank above its floor is not heated', () => {
    const p = plan(input(prices, {}), T0);
    expect(energies(p)).toEqual(new Array(12).fill(0));
    expect(p.tanks?.tank?.comfort).toBeUndefined();
  });

  it('continuous: heats the 10 K (2.326 kWh) in the two cheapest slots that end by 06:30, and says why', () => {
    const p = plan(input(prices, { comfort: [ready('2025-01-15T06:30:00+01:00')] }), T0);
    // Slots 0..5 end by 06:00; the cheapest are 01:00 (2 kWh, full power) and 02:00 (the rest).
    expect(energies(p)).toEqual([0, 2, 0.326, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(p.slots[5]!.tanks!.tank!.endTempC).toBeCloseTo(60, 6);
    expect(p.slots[5]!.binding).toContain('comfort');
    expect(p.slots[1]!.reason).toContain('tank 2.00 kWh for hot water ready by 06:30 (≥ 60 °C)');
    expect(p.slots[2]!.reason).toContain('for hot water ready by 06:30');
    expect(p.tanks?.tank?.comfort).toEqual([
      {
        atMs: Date.parse('2025-01-15T06:30:00+01:00'),
        tempC: 60,
        label: 'hot water ready by 06:30',
        slotEndMs: T0 + 6 * H,
        plannedTempC: expect.closeTo(60, 6),
        met: true,
      },
    ]);
    expect(p.shortfalls).toEqual([]);
  });

  it("holds the temperature until 06:30: the half hour's draw after the 06:00 slot end is heated for too", () => {
    const draws = new Array<number>(24).fill(0);
    draws[6] = 0.4; // kWh in the local 06:00 hour, 0.2 of it before 06:30
    const p = plan(input(prices, { drawProfileKwh: draws, comfort: [ready('2025-01-15T06:30:00+01:00')] }), T0);
    expect(energies(p).slice(0, 6)).toEqual([0, 2, 0.526, 0, 0, 0]);
    expect(p.slots[5]!.tanks!.tank!.endTempC).toBeCloseTo(60 + 0.2 / C, 6);
    expect(p.tanks?.tank?.comfort?.[0]).toMatchObject({ plannedTempC: expect.closeTo(60, 6), met: true });
  });

  it('relay: whole slots only, so the two cheapest slots at full power (4 kWh, 67.2 °C)', () => {
    const p = plan(input(prices, { control: 'relay', comfort: [ready('2025-01-15T06:30:00+01:00')] }), T0);
    expect(energies(p)).toEqual([0, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(p.slots[5]!.tanks!.tank!.endTempC).toBeCloseTo(50 + 4 / C, 6);
    expect(p.tanks?.tank?.comfort?.[0]?.met).toBe(true);
  });

  it('anti-cycling (the on/off DP at partial levels): one start allowed, so one run of consecutive slots', () => {
    const p = plan(input(prices, { antiCycling: { maxStartsPerDay: 1 }, comfort: [ready('2025-01-15T06:30:00+01:00')] }), T0);
    const on = p.slots.map((s, t) => (s.tanks!.tank!.energyKwh > 1e-9 ? t : -1)).filter((t) => t >= 0);
    expect(on).toEqual([1, 2]);
    expect(p.tanks?.tank?.comfort?.[0]?.plannedTempC).toBeGreaterThanOrEqual(60 - 1e-6);
  });

  it('infeasible: a deadline only one slot away gets that slot at full power and a stated shortfall', () => {
    const p = plan(input(prices, { comfort: [ready('2025-01-15T01:30:00+01:00')] }), T0);
    expect(energies(p).slice(0, 1)).toEqual([2]);
    const reached = 50 + 2 / C; // 58.6 °C
    expect(p.tanks?.tank?.comfort?.[0]).toMatchObject({ met: false, plannedTempC: expect.closeTo(reached, 6) });
    expect(p.shortfalls).toEqual([
      {
        device: 'tank',
        deviceId: 'tank',
        kind: 'comfort',
        atMs: Date.parse('2025-01-15T01:30:00+01:00'),
        amount: expect.closeTo(60 - reached, 6),
        message: `hot water ready by 06:30: the tank is expected at ${reached.toFixed(1)} °C, ${(60 - reached).toFixed(1)} K below the 60 °C asked for (not enough power, headroom or time)`,
      },
    ]);
  });

  it('a temperature above the thermostat is planned at the thermostat and reported', () => {
    const p = plan(input(prices, { maxC: 58, comfort: [ready('2025-01-15T06:30:00+01:00', 65)] }), T0);
    expect(p.slots[5]!.tanks!.tank!.endTempC).toBeCloseTo(58, 6);
    expect(p.shortfalls.map((s) => s.kind)).toEqual(['comfort']);
    expect(p.shortfalls[0]!.message).toContain("above the thermostat's 58 °C");
  });

  it('a deadline inside the current slot is planned at its end; past and beyond-horizon ones are ignored', () => {
    const now = T0 + 10 * 60_000;
    const p = plan(
      input(prices, { comfort: [ready('2025-01-15T00:05:00+01:00'), ready('2025-01-15T00:30:00+01:00', 55), ready('2025-01-16T06:30:00+01:00')] }),
      now,
    );
    expect(p.tanks?.tank?.comfort?.map((c) => c.slotEndMs)).toEqual([T0 + H]);
    // 5 K = 1.163 kWh within the 50 minutes left of slot 0 (at most 1.667 kWh).
    expect(p.slots[0]!.tanks!.tank!.energyKwh).toBeCloseTo(5 * C, 6);
  });

  it('two deadlines: each is met, and each heating slot names the one it heats for', () => {
    const p = plan(
      input([0.1, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.2, 0.9, 0.9, 0.01], {
        comfort: [{ ...ready('2025-01-15T02:00:00+01:00', 55), label: 'bath' }, ready('2025-01-15T10:00:00+01:00', 62)],
      }),
      T0,
    );
    expect(energies(p)).toEqual([2, 0, 0, 0, 0, 0, 0, 0, Number((12 * C - 2).toFixed(3)), 0, 0, 0]);
    expect(p.slots[0]!.reason).toContain('for bath (≥ 55 °C)');
    expect(p.slots[8]!.reason).toContain('for hot water ready by 06:30 (≥ 62 °C)');
    expect(p.tanks?.tank?.comfort?.map((c) => c.met)).toEqual([true, true]);
  });

  it('with the car in the same slots (the joint planner) the deadline still holds under the location limit', () => {
    const inp = input(prices, { comfort: [ready('2025-01-15T06:30:00+01:00')] });
    const p = plan(
      {
        ...inp,
        location: { limitKw: 3, baseLoadKw: 0 },
        ev: { energyNeededKwh: 6, departureMs: T0 + 6 * H, minPowerKw: 0, maxPowerKw: 3, efficiency: 1 },
      },
      T0,
    );
    expect(p.tanks?.tank?.comfort?.[0]?.met).toBe(true);
    expect(p.shortfalls).toEqual([]);
    for (const s of p.slots) expect(s.tanks!.tank!.powerKw + s.evs!.ev!.powerKw).toBeLessThanOrEqual(3 + 1e-9);
  });
});

describe('comfort deadlines on DST days (Europe/Oslo)', () => {
  it('spring (23 h): 06:30 CEST is the end of the 5th slot of the day, and the 6th (local 06:00) is not used', () => {
    const midnight = Date.parse('2025-03-30T00:00:00+01:00');
    // Cheap in the 6th slot (local 06:00): a plan that took 06:30 as "six hours after midnight" would use it.
    const spring = [0.5, 0.4, 0.42, 0.45, 0.46, 0.02, 0.01, 0.01, 0.01];
    const p = plan(input(spring, { comfort: [ready('2025-03-30T06:30:00+02:00')] }, midnight), midnight);
    // Local hours of the slots: 00 01 03 04 05 | 06 ...; the deadline is planned at 06:00 CEST.
    expect(p.tanks?.tank?.comfort?.[0]?.slotEndMs).toBe(Date.parse('2025-03-30T06:00:00+02:00'));
    expect(energies(p).slice(0, 6)).toEqual([0, 2, 0.326, 0, 0, 0]);
    expect(p.tanks?.tank?.comfort?.[0]?.met).toBe(true);
  });

  it('autumn (25 h): 06:30 CET is the end of the 7th slot, two of which are local 02:00', () => {
    const midnight = Date.parse('2025-10-26T00:00:00+02:00');
    const autumn = [0.5, 0.4, 0.45, 0.45, 0.45, 0.45, 0.02, 0.01, 0.01, 0.01];
    const p = plan(input(autumn, { comfort: [ready('2025-10-26T06:30:00+01:00')] }, midnight), midnight);
    expect(p.tanks?.tank?.comfort?.[0]?.slotEndMs).toBe(Date.parse('2025-10-26T06:00:00+01:00'));
    // Slot 6 (local 05:00 CET) is the cheapest before the deadline: full power there, the rest in slot 1.
    expect(energies(p).slice(0, 8)).toEqual([0, 0.326, 0, 0, 0, 0, 2, 0]);
  });
});
