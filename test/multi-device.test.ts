/**
 * A home with two chargers and two tanks, the whole daemon against real peers: the demo world (the
 * sandbox API, the broker, the Modbus tank, the go-e charger `car` over MQTT) plus an OCPP 1.6J
 * charge point `car2` speaking to the daemon's central system and a second Modbus tank `tank2` on
 * its own server. `car2` must leave
 * at 23:30, `car` at 03:00; two 11 kW chargers do not fit the 17 kW location limit together. Each
 * device is planned and driven on its own plan (before, the second charger followed the first's).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { localAt } from '../src/demo/environment.js';
import { findFreePort, startSimulatedTank, type SimulatedTank } from '../src/sandbox/devices/modbus-tank.js';
import { createOcppChargePointSim, type OcppChargePointSim } from '../src/sandbox/devices/ocpp-charge-point-sim.js';
import { demoHome } from './helpers/demo-home.js';

const H = 3_600_000;
const day0 = Date.UTC(2026, 0, 14, 12);
const startMs = localAt(day0, 0, 17, 0);
const car2LeavesMs = localAt(day0, 0, 23, 30);
const carLeavesMs = localAt(day0, 1, 3, 0);
const endMs = carLeavesMs + 10 * 60_000;
const limitKw = 17;
const password = 'second-charger-secret-1';

interface Sample {
  atMs: number;
  /** Power of all four devices together, W, as the simulators draw it once the tick's commands are applied. */
  devicesW: number;
  /** The second charger's own power then, W. */
  car2W: number;
}

describe('a home with two chargers and two tanks', () => {
  const home = demoHome({ name: 'multi', startMs });
  const { clock, planAtHour } = home;
  let car2: OcppChargePointSim;
  let tank2: SimulatedTank;
  const samples: Sample[] = [];
  let car2WhAtDeparture: number | null = null;
  let carWhAtDeparture: number | null = null;

  beforeAll(async () => {
    const env = await home.startWorld();
    const ocppPort = await findFreePort();
    car2 = createOcppChargePointSim({
      url: `ws://127.0.0.1:${ocppPort}/ocpp`,
      identity: 'cp2',
      password,
      startMs,
      phases: 3,
      maxCurrentA: 16,
      plugs: [
        { atMs: localAt(day0, 0, 17, 45), untilMs: car2LeavesMs, battery: { capacityKwh: 40, socPct: 20, targetSocPct: 100, efficiency: 0.9 } },
      ],
    });
    tank2 = await startSimulatedTank({ clock, startMs, initialC: 52, params: { volumeL: 300, elementKw: 3, thermostatC: 75 } });
    const input = env.config;
    const config = parseConfig({
      ...input,
      ocpp: { host: '127.0.0.1', port: ocppPort },
      modbus: { ...input.modbus, sim2: { type: 'tcp', host: tank2.host, port: tank2.port, timeoutMs: 2000 } },
      devices: [
        ...(input.devices ?? []).map((d) => (d.kind === 'evCharger' ? { ...d, model: { ...d.model, departure: '03:00' } } : d)),
        {
          id: 'tank2',
          name: 'Second tank',
          kind: 'hotWaterTank',
          staleAfterS: 900,
          switch: { type: 'modbus', bus: 'sim2', unitId: 1, profile: 'wattshift-sim-tank' },
          meter: { type: 'modbus', bus: 'sim2', unitId: 1, profile: 'wattshift-sim-tank' },
          thermometer: { type: 'modbus', bus: 'sim2', unitId: 1, profile: 'wattshift-sim-tank' },
          model: { volumeL: 300, elementKw: 3, floorC: 45, maxC: 75 },
        },
        {
          id: 'car2',
          name: 'Second charger',
          kind: 'evCharger',
          staleAfterS: 900,
          safeCurrentA: 6,
          charger: { type: 'ocpp', chargePointId: 'cp2', password },
          model: { capacityKwh: 40, targetEnergyKwh: 15, departure: '23:30', minCurrentA: 6, maxCurrentA: 16, phases: 3 },
        },
      ],
    }).config;
    await home.register(config);
    await home.startApp(config, {
      controlTickMs: 60_000,
      onControlTick: (snap) => {
        const devicesW = env.charger.powerW + car2.powerW + env.tank.state().powerW + tank2.state().powerW;
        samples.push({ atMs: snap.atMs, devicesW, car2W: car2.powerW });
        if (carWhAtDeparture === null && snap.atMs >= carLeavesMs) carWhAtDeparture = env.charger.totalWh;
      },
    });
    // The charge point connects to the daemon's central system and lives on the same clock.
    await car2.start();
    home.every(30_000, () => car2.advance(clock.nowMs() - car2.nowMs));
    await home.until(endMs);
    // The charge point's meter moves in steps of its clock; long after its car left, its total is what the car got.
    car2WhAtDeparture = car2.totalWh;
  }, 150_000);

  afterAll(() =>
    home.close(async () => {
      await car2?.close();
      await tank2?.close();
    }),
  );

  it('plans each tank and each charger under its own id', () => {
    const evening = planAtHour.get(Math.floor(localAt(day0, 0, 19) / H) * H);
    expect(Object.keys(evening?.tanks ?? {}).sort()).toEqual(['tank', 'tank2']);
    expect(Object.keys(evening?.evs ?? {}).sort()).toEqual(['car', 'car2']);
    // The car that leaves at 23:30 has all its energy planned before then.
    const car2Planned = evening!.slots.filter((s) => s.startMs < car2LeavesMs).reduce((sum, s) => sum + (s.evs?.car2?.energyKwh ?? 0), 0);
    expect(car2Planned * 0.9).toBeGreaterThanOrEqual(15 - 0.01);
    expect(evening!.slots.filter((s) => s.endMs > car2LeavesMs + H).every((s) => (s.evs?.car2?.energyKwh ?? 0) === 0)).toBe(true);
  });

  it('gets each car its energy by its own departure', () => {
    expect(car2WhAtDeparture).not.toBeNull();
    expect(carWhAtDeparture).not.toBeNull();
    // Grid energy for 15 and 25 kWh into the batteries at 90 %, less 3 %. On the virtual clock the
    // run has no stalls and the figures are the same every run: the second car gets 98.2 % of it
    // (16.36 of 16.67 kWh), a shortfall of the plan or its control, not of timing.
    expect(car2WhAtDeparture! / 1000).toBeGreaterThanOrEqual((15 / 0.9) * 0.97);
    expect(carWhAtDeparture! / 1000).toBeGreaterThanOrEqual((25 / 0.9) * 0.97);
  });

  it('drives the second charger by its own plan: nothing in the hours its plan leaves empty', () => {
    let emptyHours = 0;
    for (const [hour, plan] of planAtHour) {
      const slot = plan.slots.find((s) => s.startMs === hour);
      if (!slot || (slot.evs?.car2?.energyKwh ?? 0) > 0 || hour >= car2LeavesMs || hour < localAt(day0, 0, 18)) continue;
      emptyHours += 1;
      // From the second tick of the hour on (the first may still carry the last hour's current).
      const charging = samples.filter((s) => s.atMs >= hour + 2 * 60_000 && s.atMs < hour + H && s.car2W > 0);
      expect(charging, new Date(hour).toISOString()).toEqual([]);
    }
    expect(emptyHours).toBeGreaterThan(0);
  });

  it('keeps all the devices together within the location limit at every sampled instant', () => {
    // A tick a simulated minute from 17:00 to 03:10, every one of them.
    expect(samples.length).toBe((endMs - startMs) / 60_000 + 1);
    const worst = Math.max(...samples.map((s) => s.devicesW));
    expect(worst / 1000).toBeLessThanOrEqual(limitKw);
    // Both chargers did charge at the same time somewhere (so the limit was shared, not avoided).
    expect(samples.some((s) => s.car2W > 0 && s.devicesW - s.car2W > 3000)).toBe(true);
  });

  it('shows all four devices in its view, each with its own plan', () => {
    const view = home.app.view();
    expect(view.devices.map((d) => d.id).sort()).toEqual(['car', 'car2', 'tank', 'tank2']);
    expect(Object.keys(view.plan?.slots[0]?.devices ?? {}).sort()).toEqual(expect.arrayContaining(['tank', 'tank2']));
  });
});
