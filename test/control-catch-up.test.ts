/**
 * A charger behind its slot's energy catches up over the slot's time left, in the running control
 * loop with real devices: the simulated Modbus tank (3 kW element) and the go-e simulator on aedes,
 * paced tick by tick on a manual clock. Under an 11 kW cap (0.5 kW base load) the plan fits on
 * average (tank 0.375 kWh, car 2.07 kWh = 8.28 kW over 17:00–17:15), but the tank is heated first:
 * while it runs the car has room for 10 A only. Once the tank has its energy the car must make up
 * what it lost in the rest of the slot, within the cap, and end the slot with its planned energy.
 */
import { describe, expect, it } from 'vitest';
import { useMqttDeviceWorld } from './helpers/aedes.js';
import { planOf, startLoopWorld, TICK_MS } from './helpers/loop-world.js';

const minute = 60_000;
const t0 = Date.UTC(2026, 0, 12, 17, 0, 0);
const slotEndMs = t0 + 15 * minute;
const w = useMqttDeviceWorld(t0, { reconnectPeriodMs: 100 });

const carKwh = 2.07;
const plan = planOf(t0, 15, [
  {
    price: 1,
    tanks: { tank: { on: true, powerKw: 1.5, energyKwh: 0.375, endTempC: 42 } },
    evs: { car: { on: true, powerKw: 8.28, energyKwh: carKwh, chargedKwh: carKwh } },
  },
  {
    price: 2,
    tanks: { tank: { on: false, powerKw: 0, energyKwh: 0, endTempC: 42 } },
    evs: { car: { on: false, powerKw: 0, energyKwh: 0, chargedKwh: carKwh } },
  },
]);

describe("a charger behind its slot's energy in the running control loop", () => {
  it('catches up over the time left once the tank has had its energy, within the cap, and ends the slot with its planned energy', async () => {
    const world = await startLoopWorld(w, { tank: { elementKw: 3, initialC: 40 }, plan, capKw: 11, baseLoadKw: 0.5, slotMinutes: 15 });
    const { tank, goe } = world;
    const carStartWh = goe.totalWh;
    let carSlotKwh = 0;
    const ticks: { atMs: number; tankAllowed: boolean; carA: number; reason: string }[] = [];
    const record = (): void => {
      const tankSp = world.setpoint('tank');
      const carSp = world.setpoint('car');
      if (tankSp?.kind !== 'heater' || carSp?.kind !== 'charger') throw new Error('no setpoints this tick');
      ticks.push({ atMs: w.clock.nowMs(), tankAllowed: tankSp.allow, carA: carSp.currentA, reason: carSp.reason });
      // Within the cap, as decided and as drawn at the simulators.
      expect(0.5 + (tankSp.allow ? 3 : 0) + (carSp.currentA * 690) / 1000).toBeLessThanOrEqual(11 + 1e-9);
      expect(500 + tank.state().powerW + goe.powerW).toBeLessThanOrEqual(11_000);
    };
    record();
    while (w.clock.nowMs() < slotEndMs) {
      await world.car(TICK_MS);
      if (goe.nowMs === slotEndMs) carSlotKwh = (goe.totalWh - carStartWh) / 1000;
      await world.advance(TICK_MS);
      if (w.clock.nowMs() < slotEndMs) record();
    }

    // The tank first, 3 kW until its 0.375 kWh (7.5 min): 11 − 0.5 − 3 leaves the car 10 A.
    const tankTicks = ticks.filter((t) => t.tankAllowed);
    expect(tankTicks.length).toBeGreaterThanOrEqual(44);
    expect(tankTicks.length).toBeLessThanOrEqual(46);
    expect(tank.state().counterKwh).toBeCloseTo(0.375, 1);
    expect(tankTicks.slice(1).every((t) => t.carA === 10 && t.reason === 'limited by cap 11 kW')).toBe(true);

    // Then the car is behind by 0.17 kWh: it catches up over the 7.5 min left (9.7 kW, 14 A; the
    // plan's 8.28 kW alone is 12 A).
    const after = ticks.filter((t) => !t.tankAllowed && t.atMs > t0);
    expect(after[0]!.reason).toMatch(/^planned 8\.3 kW, 9\.\d kW to catch up$/);
    expect(after[0]!.carA).toBe(14);
    expect(after.filter((t) => t.carA > 12).length).toBeGreaterThan(after.length / 2);

    // The slot ends with the car's planned energy.
    expect(Math.abs(carSlotKwh - carKwh)).toBeLessThanOrEqual(0.04);
  });
});
