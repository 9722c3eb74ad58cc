/**
 * The main fuse keeps room for a heater whose current the phase reading does not hold yet, with
 * real devices in the control loop: the AMS reader simulator (HAN meter, main fuse 25 A, TN) on
 * aedes, the go-e simulator (3-phase, up to 16 A) and the simulated Modbus tank (2 kW element on
 * L1). The house draws 5 A on L1, 2 A on L2 and L3. In a paid-to-consume slot the tank is allowed
 * but idle on its own thermostat; a hot water draw restarts it between two HAN lists, and the HAN
 * meter then skips a list (its reading lags): the charger must keep room for the element's 8.7 A
 * until a phase reading taken after the tank was first seen drawing (+5 s) arrives, and then
 * follow that reading, which holds the tank, with no room kept besides.
 *
 * The clock is paced by hand: the meter publishes its list halfway between two control ticks.
 */
import { describe, expect, it } from 'vitest';
import { useMqttDeviceWorld } from './helpers/aedes.js';
import { planOf, startLoopWorld, TICK_MS } from './helpers/loop-world.js';

const t0 = Date.UTC(2026, 0, 12, 17, 0, 0);
const w = useMqttDeviceWorld(t0, { reconnectPeriodMs: 100 });

/** Consuming is paid for (negative price): the tank may heat to 80 °C, the car charges at 11 kW. */
const plan = planOf(t0, 60, [
  {
    price: -0.2,
    tanks: { tank: { on: false, powerKw: 0, energyKwh: 0, endTempC: 74 } },
    evs: { car: { on: true, powerKw: 11.04, energyKwh: 11.04, chargedKwh: 11.04 } },
  },
]);
const kept = 'main fuse: 8.7 A kept for a heater switching on';

describe('main fuse and a tank its thermostat restarts', () => {
  it("keeps the element's current free for the charger until a phase reading after the restart holds it, every line under the fuse", async () => {
    // 74 °C: above the thermostat's 70 °C restart point, so the tank idles though allowed.
    const world = await startLoopWorld(w, {
      tank: { elementKw: 2, initialC: 74, thermostatC: 75, maxC: 80 },
      fuse: { houseA: [5, 2, 2] },
      plan,
      capKw: 17,
      baseLoadKw: 0.5,
      slotMinutes: 60,
    });
    const { tank, goe } = world;
    const highestA: number[] = [];
    /** One control tick: the car runs on, the HAN meter publishes 5 s before the tick unless it lags. */
    const step = async (o: { meterLags?: boolean; hotWaterDrawKwh?: number } = {}): Promise<void> => {
      await world.car(TICK_MS);
      await world.advance(5_000);
      if (!o.meterLags) await world.meter();
      if (o.hotWaterDrawKwh !== undefined) {
        // 2 s before the tick: a shower cools the tank below 70 °C, its thermostat closes.
        await world.advance(3_000);
        tank.sync();
        tank.physics.draw(o.hotWaterDrawKwh);
        expect(tank.state().heating).toBe(true);
        await world.advance(2_000);
      } else {
        await world.advance(5_000);
      }
      highestA.push(Math.max(...world.linesA()));
      expect(Math.max(...world.linesA())).toBeLessThanOrEqual(25);
    };

    // Allowed and idle: its 8.7 A may start at any moment and is kept free: 25 − 1 − 5 − 8.7 → 10 A.
    for (let i = 0; i < 4; i++) await step();
    expect(world.setpoint('tank')).toMatchObject({ allow: true, reason: 'paid to consume: heating to 80 °C' });
    expect(tank.state()).toMatchObject({ blocked: false, heating: false });
    expect(world.setpoint('car')).toMatchObject({ currentA: 10, reason: kept });
    expect(goe.amp).toBe(10);

    // The thermostat restarts it; the phase reading (5 s before the tick, 3 s before the restart) does not hold it.
    await step({ hotWaterDrawKwh: 1.5 });
    const seenAtMs = w.clock.nowMs();
    expect(world.control.last()!.readings.get('tank')!.powerW).toBe(2000);
    expect(world.control.last()!.readings.get('han')!.phases!.atMs).toBe(seenAtMs - 5_000);
    expect(world.setpoint('car')).toMatchObject({ currentA: 10, reason: kept });
    expect(goe.amp).toBe(10);

    // The meter skips a list: the reading is older still, the room stays kept.
    await step({ meterLags: true });
    expect(world.control.last()!.readings.get('han')!.phases!.atMs).toBe(seenAtMs - 5_000);
    expect(world.setpoint('car')).toMatchObject({ currentA: 10, reason: kept });

    // A reading taken 15 s after the tank was seen drawing holds its current: L1 at 5 + 10 + 8.7 A.
    // The fuse leaves 25 − 1 − 13.7 = 10.3 A, and nothing more is kept for the tank.
    await step();
    expect(world.control.last()!.readings.get('han')!.phases!.atMs).toBe(seenAtMs + 15_000);
    expect(world.setpoint('car')).toMatchObject({ currentA: 10, reason: 'main fuse 25 A: L1 at 23.7 A' });
    for (let i = 0; i < 3; i++) await step();
    expect(world.setpoint('car')).toMatchObject({ currentA: 10, reason: 'main fuse 25 A: L1 at 23.7 A' });
    expect(goe.amp).toBe(10);
    expect(tank.state().heating).toBe(true);
    // L1 carried 15 A while the tank idled, 23.7 A since it runs.
    expect(Math.max(...highestA)).toBeCloseTo(23.7, 1);
  });
});
