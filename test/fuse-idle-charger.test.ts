/**
 * Chargers under the main fuse split a line's free current only with chargers that draw or want to:
 * a second charger with a car plugged in that the plan leaves idle claims no share. With real devices
 * in the control loop (the AMS reader simulator as HAN meter, two go-e simulators, the Modbus tank),
 * a house drawing 14 A on L1 of a 25 A fuse leaves 10 A: the planned car gets all of it, not half
 * (5 A, below its 6 A minimum: it would not charge at all).
 */
import { describe, expect, it } from 'vitest';
import { useMqttDeviceWorld } from './helpers/aedes.js';
import { planOf, startLoopWorld, TICK_MS } from './helpers/loop-world.js';

const t0 = Date.UTC(2026, 0, 12, 17, 0, 0);
const w = useMqttDeviceWorld(t0, { reconnectPeriodMs: 100 });

const plan = planOf(t0, 60, [
  {
    price: 1,
    tanks: { tank: { on: false, powerKw: 0, energyKwh: 0, endTempC: 60 } },
    evs: { car: { on: true, powerKw: 11.04, energyKwh: 11.04, chargedKwh: 11.04 } },
  },
]);

describe('main fuse with a second charger the plan leaves idle', () => {
  it('gives the planned charger the whole free current of the line, and the idle one nothing', async () => {
    const world = await startLoopWorld(w, {
      tank: { elementKw: 2, initialC: 60 },
      fuse: { houseA: [14, 2, 2] },
      idleCharger: true,
      plan,
      capKw: 17,
      baseLoadKw: 0.5,
      slotMinutes: 60,
    });
    for (let i = 0; i < 12; i++) {
      await world.car(TICK_MS);
      await world.advance(5_000);
      await world.meter();
      await world.advance(5_000);
      expect(Math.max(...world.linesA())).toBeLessThanOrEqual(25);
    }
    // 25 − 1 − 14 = 10 A on L1 for the one that charges.
    expect(world.setpoint('car')).toMatchObject({ currentA: 10 });
    expect(world.goe.amp).toBe(10);
    expect(world.setpoint('car2')).toMatchObject({ currentA: 0 });
  });
});
