/**
 * The control loop applies a tick's lowering commands before its raising ones, so the location
 * never carries both the old and the new load at once. Observed at the devices: the simulated
 * Modbus tank's relay and the go-e simulator's `amp`, paced tick by tick on a manual clock. Under a
 * 13 kW cap (0.5 kW base load) the planned tank (2 kW) and the car (16 A, 11 kW) do not both fit:
 * when the tank's slot starts, the car must be lowered before the tank is let on; when it ends,
 * the tank must be off before the car goes back up.
 */
import { describe, expect, it } from 'vitest';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';
import { planOf, startLoopWorld, TICK_MS } from './helpers/loop-world.js';

const minute = 60_000;
/** The tank's slot, 17:00–17:15; the loop starts 30 s before it. */
const s = Date.UTC(2026, 0, 12, 17, 0, 0);
const t0 = s - 30_000;
const w = useMqttDeviceWorld(t0, { reconnectPeriodMs: 100 });

const car = { on: true, powerKw: 11.04, energyKwh: 2.76, chargedKwh: 2.76 };
const off = { on: false, powerKw: 0, energyKwh: 0, endTempC: 50 };
const plan = planOf(s - 15 * minute, 15, [
  { price: 1, tanks: { tank: off }, evs: { car } },
  { price: 0.5, tanks: { tank: { on: true, powerKw: 2, energyKwh: 0.5, endTempC: 52 } }, evs: { car } },
  { price: 1, tanks: { tank: off }, evs: { car } },
]);

describe('the control loop with a tank and a charger under one cap', () => {
  it('lowers the charger before letting the tank on, and switches the tank off before raising the charger', async () => {
    const world = await startLoopWorld(w, { tank: { elementKw: 2, initialC: 50 }, plan, capKw: 13, baseLoadKw: 0.5, slotMinutes: 15 });
    const { tank, goe } = world;
    // Each time the tank's relay changes: the clock, and the current the charger simulator has then.
    const relay: { atMs: number; blocked: boolean; carAmp: number }[] = [];
    const setBlocked = tank.physics.setBlocked.bind(tank.physics);
    tank.physics.setBlocked = (blocked: boolean): void => {
      if (blocked !== tank.physics.blocked) relay.push({ atMs: w.clock.nowMs(), blocked, carAmp: goe.amp });
      setBlocked(blocked);
    };
    const step = async (): Promise<void> => {
      await world.car(TICK_MS);
      await world.advance(TICK_MS);
    };

    // Before the tank's slot: the tank is off, the car at its maximum.
    await step();
    await eventually(() => expect(tank.state().blocked).toBe(true));
    expect(world.setpoint('car')).toMatchObject({ currentA: 16 });
    expect(goe.amp).toBe(16);
    relay.length = 0;
    await step();
    await step();
    expect(w.clock.nowMs()).toBe(s);

    // 17:00, one tick: the tank is let on (+2 kW), the car comes down to 15 A (−0.69 kW).
    expect(world.setpoint('tank')).toMatchObject({ allow: true });
    expect(world.setpoint('car')).toMatchObject({ currentA: 15, reason: 'limited by cap 13 kW' });
    expect(goe.amp).toBe(15);
    expect(tank.state()).toMatchObject({ blocked: false, heating: true });
    // When the tank's relay let it on, the charger had already taken its lower current.
    expect(relay).toEqual([{ atMs: s, blocked: false, carAmp: 15 }]);

    while (w.clock.nowMs() < s + 15 * minute) await step();
    // 17:15, one tick: the tank is switched off, the car goes back up to 16 A.
    expect(world.setpoint('tank')).toMatchObject({ allow: false, reason: 'not planned' });
    expect(world.setpoint('car')).toMatchObject({ currentA: 16 });
    expect(goe.amp).toBe(16);
    expect(tank.state().blocked).toBe(true);
    // When the tank's relay switched it off, the charger still had its lower current.
    expect(relay).toEqual([
      { atMs: s, blocked: false, carAmp: 15 },
      { atMs: s + 15 * minute, blocked: true, carAmp: 15 },
    ]);
  });
});
