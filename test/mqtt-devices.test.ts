/**
 * MQTT device adapters against the simulated Shelly and go-e over a real aedes broker.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/log.js';
import { createMqttDevice, type MqttDevice } from '../src/devices/mqtt/index.js';
import { createShellySim, type ShellySim } from '../src/sandbox/devices/shelly-sim.js';
import { createGoeSim, type GoeSim } from '../src/sandbox/devices/goe-sim.js';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';

const hourMs = 3_600_000;
const t0 = Date.UTC(2025, 0, 6, 0, 0, 0);
const sig = () => new AbortController().signal;
/** For reads that may hit a missing value: a refresh request then ends in real time, not on the manual clock. */
const quick = () => AbortSignal.timeout(500);

/** Hourly deltas of a counter sampled at hour boundaries, compared with the simulator's truth. */
function expectHoursMatch(counterKwhAtHour: Map<number, number>, truth: Map<number, number>, counterResolutionKwh: number): number {
  const hours = [...counterKwhAtHour.keys()].sort((a, b) => a - b);
  let checked = 0;
  for (let i = 0; i + 1 < hours.length; i++) {
    const h = hours[i]!;
    const metered = counterKwhAtHour.get(hours[i + 1]!)! - counterKwhAtHour.get(h)!;
    const expected = truth.get(h) ?? 0;
    const tolerance = Math.max(expected * 0.001, counterResolutionKwh);
    expect(Math.abs(metered - expected), `hour ${new Date(h).toISOString()}: ${metered} vs ${expected}`).toBeLessThanOrEqual(tolerance);
    checked++;
  }
  return checked;
}

const w = useMqttDeviceWorld(t0, { reconnectPeriodMs: 100 });

describe('Shelly Gen2 adapter with the simulated Plus 1PM', () => {
  let sim: ShellySim;
  let dev: MqttDevice;

  beforeEach(async () => {
    sim = createShellySim({
      url: w.broker.url,
      topicPrefix: 'shellyplus1pm-test',
      startMs: t0,
      heaterW: 3000,
      temperatureSensorId: 100,
      tank: { initialC: 40 },
    });
    await sim.start();
    w.cleanups.push(() => sim.close());
    dev = createMqttDevice(
      { type: 'shelly', topicPrefix: 'shellyplus1pm-test', temperatureSensorId: 100 },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
      { staleAfterS: 120, requestTimeoutMs: 1000 },
    );
    w.cleanups.push(() => dev.close());
  });

  const step = async (ms: number) => {
    await w.clock.advance(ms);
    await sim.advance(ms);
  };

  it('reads power, energy and the add-on temperature', async () => {
    await step(60_000);
    await eventually(async () => expect(await dev.energyMeter!.readEnergyKwh(quick())).toBeCloseTo(0.05, 6));
    await w.clock.advance(10_000);
    expect(await dev.energyMeter!.readStampedEnergyKwh!(sig())).toMatchObject({ atMs: t0 + 60_000 });
    expect(await dev.powerMeter!.readPowerW(sig())).toBe(3000);
    expect(await dev.thermometer!.readTemperatureC(sig())).toBeCloseTo(sim.temperatureC, 1);
  });

  it('blocks with toggle_after as a lease and allows again', async () => {
    await dev.heaterSwitch!.block(3_900_000, sig());
    expect(sim.output).toBe(false);
    expect(sim.toggleAtMs).toBe(t0 + 3_900_000);
    await step(60_000);
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(quick())).toBe(0));
    await dev.heaterSwitch!.allow(sig());
    expect(sim.output).toBe(true);
    expect(sim.toggleAtMs).toBeUndefined();
  });

  it('hourly energy from aenergy.total matches the simulated heater within 0.1 %', async () => {
    const samples = new Map<number, number>();
    for (let h = 0; h < 4; h++) {
      const atHour = t0 + h * hourMs;
      await eventually(async () => expect(await dev.energyMeter!.readEnergyKwh(quick())).toBeCloseTo(sim.energyWh / 1000, 6));
      samples.set(atHour, await dev.energyMeter!.readEnergyKwh(sig()));
      if (h === 3) break;
      // Block for 20 minutes in the middle of each hour; the lease is longer than the block.
      await step(15 * 60_000);
      await dev.heaterSwitch!.block(30 * 60_000, sig());
      await step(20 * 60_000);
      await dev.heaterSwitch!.allow(sig());
      await step(25 * 60_000);
    }
    const truth = sim.energyKwhByHour();
    expect(expectHoursMatch(samples, truth, 1e-6)).toBe(3);
    expect(truth.get(t0)).toBeGreaterThan(1.9); // the heater really ran ~40 minutes at 3 kW
  });

  it('requests status when values go stale and reports DEVICE_STALE when the device is silent', async () => {
    await step(60_000);
    await eventually(async () => expect(await dev.energyMeter!.readEnergyKwh(quick())).toBeGreaterThan(0));
    await w.clock.advance(121_000); // no status pushed for longer than staleAfterS
    // The device still answers Shelly.GetStatus, so the read refreshes itself.
    expect(await dev.energyMeter!.readEnergyKwh(sig())).toBeCloseTo(0.05, 6);
    sim.setSilent(true);
    await w.clock.advance(121_000);
    const read = expect(dev.energyMeter!.readEnergyKwh(sig())).rejects.toMatchObject({ code: 'DEVICE_STALE' });
    await new Promise((r) => setTimeout(r, 20));
    await w.clock.advance(1000); // the status request times out
    await read;
    const block = expect(dev.heaterSwitch!.block(60_000, sig())).rejects.toMatchObject({ code: 'DEVICE_TIMEOUT' });
    await new Promise((r) => setTimeout(r, 20));
    await w.clock.advance(1000);
    await block;
  });

  it('replaces a garbage payload by asking the device, and reports DEVICE_BAD_VALUE while it cannot ask', async () => {
    await step(60_000);
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(quick())).toBe(3000));
    const asked = () => sim.requests.get('Shelly.GetStatus') ?? 0;
    const before = asked();
    // The device notifies changes only: an unchanged apower is never sent again, so the adapter asks.
    await sim.publishRaw('status/switch:0', JSON.stringify({ id: 0, apower: 1e9 }));
    await eventually(async () => {
      expect(await dev.powerMeter!.readPowerW(quick())).toBe(3000);
      expect(asked()).toBe(before + 1);
    });
    sim.setSilent(true);
    await sim.publishRaw('status/switch:0', 'not json {');
    await sim.publishRaw('status/temperature:100', JSON.stringify({ id: 100, tC: null }));
    await new Promise((r) => setTimeout(r, 50));
    for (const read of [() => dev.energyMeter!.readEnergyKwh(sig()), () => dev.thermometer!.readTemperatureC(sig())]) {
      const failed = expect(read()).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' });
      await new Promise((r) => setTimeout(r, 20));
      await w.clock.advance(1000); // the status request goes unanswered
      await failed;
    }
    sim.setSilent(false);
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(quick())).toBe(3000));
    await eventually(async () => expect(await dev.thermometer!.readTemperatureC(quick())).toBeGreaterThan(30));
  });

  it('treats online=false (last will) as unreachable', async () => {
    await step(60_000);
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(quick())).toBe(3000));
    await sim.crash();
    await eventually(() => expect(dev.powerMeter!.readPowerW(quick())).rejects.toMatchObject({ code: 'DEVICE_UNREACHABLE' }));
  });

  it('survives a w.broker restart: reconnects, resubscribes and commands work again', async () => {
    await step(60_000);
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(quick())).toBe(3000));
    const states: string[] = [];
    w.connection.onState((s) => states.push(s));
    await w.broker.stop();
    await eventually(() => expect(w.connection.connected).toBe(false));
    await expect(dev.powerMeter!.readPowerW(sig())).rejects.toMatchObject({ code: 'MQTT_UNAVAILABLE' });
    await expect(dev.heaterSwitch!.block(60_000, sig())).rejects.toMatchObject({ code: 'MQTT_UNAVAILABLE' });
    await w.broker.start();
    await w.connection.waitConnected(AbortSignal.timeout(5000));
    expect(states).toEqual(['down', 'up']);
    await eventually(() => expect(sim.connected).toBe(true));
    // The fresh broker has no retained state: new values flow only if both sides resubscribed.
    await eventually(async () => {
      await step(60_000);
      expect(await dev.energyMeter!.readEnergyKwh(sig())).toBeCloseTo(sim.energyWh / 1000, 6);
    });
    await eventually(() => dev.heaterSwitch!.block(60_000, sig()));
    expect(sim.output).toBe(false);
  });
});

describe('go-e adapter with the simulated charger and car', () => {
  let sim: GoeSim;
  let dev: MqttDevice;

  const start = async (plugs: Parameters<typeof createGoeSim>[0]['plugs']) => {
    sim = createGoeSim({ url: w.broker.url, topicPrefix: 'go-eCharger/123456', startMs: t0, phases: 3, amp: 16, plugs });
    await sim.start();
    w.cleanups.push(() => sim.close());
    dev = createMqttDevice(
      { type: 'goe', topicPrefix: 'go-eCharger/123456' },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
      { staleAfterS: 120, requestTimeoutMs: 2000 },
    );
    w.cleanups.push(() => dev.close());
    // The charger publishes on change only: nothing may change before the adapter listens.
    await eventually(async () => expect(await dev.energyMeter!.readEnergyKwh(quick())).toBe(0));
  };
  const step = async (ms: number) => {
    await w.clock.advance(ms);
    await sim.advance(ms);
  };

  it('reads car state, power and energy; sets current and pauses', async () => {
    await start([{ atMs: t0 + 60_000, battery: { capacityKwh: 60, socPct: 20 } }]);
    await eventually(async () =>
      expect(await dev.evStateReader!.readEvState(quick())).toEqual({ plugged: false, charging: false, sessionKwh: expect.any(Number) }),
    );
    await step(120_000);
    await eventually(async () =>
      expect(await dev.evStateReader!.readEvState(quick())).toEqual({ plugged: true, charging: true, sessionKwh: expect.any(Number) }),
    );
    // go-e publishes each key when it changes: the power may arrive a message after the state.
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(quick())).toBe(16 * 3 * 230));
    await dev.chargeCurrentLimit!.setCurrentA(10.7, sig());
    expect(sim.amp).toBe(10);
    expect(sim.frc).toBe(2);
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(quick())).toBe(10 * 3 * 230));
    await dev.chargeCurrentLimit!.setCurrentA(0, sig());
    expect(sim.frc).toBe(1);
    await eventually(async () =>
      expect(await dev.evStateReader!.readEvState(quick())).toEqual({ plugged: true, charging: false, sessionKwh: expect.any(Number) }),
    );
    expect(sim.car).toBe(3);
    await expect(dev.chargeCurrentLimit!.setCurrentA(-1, sig())).rejects.toMatchObject({ code: 'MQTT_COMMAND_INVALID' });
  });

  it('hourly energy from eto matches the simulated charger within 0.1 % and charging stops when full', async () => {
    // 20 kWh at 50 % needs 10 kWh / 0.9 = 11.1 kWh at 11.04 kW: full about 1 h after plugging.
    await start([{ atMs: t0 + 30 * 60_000, battery: { capacityKwh: 20, socPct: 50, efficiency: 0.9 } }]);
    const samples = new Map<number, number>();
    for (let h = 0; h <= 3; h++) {
      await eventually(async () => expect(await dev.energyMeter!.readEnergyKwh(quick())).toBe(Math.floor(sim.totalWh) / 1000));
      samples.set(t0 + h * hourMs, await dev.energyMeter!.readEnergyKwh(sig()));
      if (h === 3) break;
      for (let m = 0; m < 4; m++) await step(15 * 60_000);
    }
    const truth = sim.energyKwhByHour();
    expect(expectHoursMatch(samples, truth, 0.001)).toBe(3);
    expect(sim.totalWh / 1000).toBeCloseTo(10 / 0.9, 6);
    expect(sim.battery?.socPct).toBeCloseTo(100, 6);
    expect(sim.car).toBe(4);
    await eventually(async () =>
      expect(await dev.evStateReader!.readEvState(quick())).toEqual({ plugged: true, charging: false, sessionKwh: expect.any(Number) }),
    );
    expect(await dev.powerMeter!.readPowerW(sig())).toBe(0);
  });

  it('stamps the energy counter with the time it arrived, not the time it is read', async () => {
    await start([{ atMs: t0, battery: { capacityKwh: 60, socPct: 20 } }]);
    await step(60_000);
    await eventually(async () => expect(await dev.energyMeter!.readEnergyKwh(quick())).toBe(Math.floor(sim.totalWh) / 1000));
    await w.clock.advance(30_000);
    expect(await dev.energyMeter!.readStampedEnergyKwh!(sig())).toEqual({ kwh: Math.floor(sim.totalWh) / 1000, atMs: t0 + 60_000 });
  });

  it('rejects garbage values with DEVICE_BAD_VALUE and goes stale without updates', async () => {
    await start([]);
    await eventually(async () => expect(await dev.energyMeter!.readEnergyKwh(quick())).toBe(0));
    await sim.publishRaw('nrg', '[230, 230]');
    await eventually(() => expect(dev.powerMeter!.readPowerW(quick())).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' }));
    await sim.publishRaw('eto', '-5');
    await eventually(() => expect(dev.energyMeter!.readEnergyKwh(quick())).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' }));
    await sim.publishRaw('car', '"plugged"');
    await eventually(() => expect(dev.evStateReader!.readEvState(quick())).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' }));
    // The charger publishes a key again only when it changes, so a garbled key stays unusable.
    await step(60_000);
    await expect(dev.energyMeter!.readEnergyKwh(quick())).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' });
    // A charger that keeps sending garbage (malformed JSON, then the wrong type) and then recovers.
    for (const garbage of ['{"eto":', '"12 kWh"', null]) {
      sim.corrupt('eto', garbage);
      await step(10_000);
      if (garbage === null) await eventually(async () => expect(await dev.energyMeter!.readEnergyKwh(quick())).toBe(0));
      else await eventually(() => expect(dev.energyMeter!.readEnergyKwh(quick())).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' }));
    }
    await w.clock.advance(121_000);
    await expect(dev.energyMeter!.readEnergyKwh(sig())).rejects.toMatchObject({ code: 'DEVICE_STALE' });
    await expect(dev.evStateReader!.readEvState(sig())).rejects.toMatchObject({ code: 'DEVICE_STALE' });
  });
  it('keeps an unchanged key current while the charger is heard from, and is stale only when it is silent', async () => {
    await start([]);
    // An idle charger: nothing changes but its uptime (rbt), for three stale periods.
    for (let i = 0; i < 12; i++) {
      await step(30_000);
      // Valid as of the last word from the charger, though `eto` itself last changed at the start
      // (after a minute unchanged: a fresher value keeps its arrival time).
      const stamp = async (): Promise<number> => (await dev.energyMeter!.readStampedEnergyKwh!(quick())).atMs;
      await eventually(async () => expect(await stamp()).toBe(i >= 2 ? w.clock.nowMs() : t0));
    }
    expect(await dev.energyMeter!.readEnergyKwh(sig())).toBe(0);
    expect(await dev.evStateReader!.readEvState(sig())).toEqual({ plugged: false, charging: false, sessionKwh: expect.any(Number) });
    // Silent (hung): stale once the stale time has passed without a word.
    sim.setSilent(true);
    await w.clock.advance(121_000);
    await expect(dev.energyMeter!.readEnergyKwh(sig())).rejects.toMatchObject({ code: 'DEVICE_STALE' });
    sim.setSilent(false);
    await step(1_000);
    await eventually(async () => expect(await dev.energyMeter!.readEnergyKwh(quick())).toBe(0));
    // Its Last Will: retained values are not its state any more.
    await sim.publishRaw('mcc', 'false');
    await eventually(() => expect(dev.energyMeter!.readEnergyKwh(quick())).rejects.toMatchObject({ code: 'DEVICE_UNREACHABLE' }));
    await sim.publishRaw('mcc', 'true');
    await eventually(async () => expect(await dev.energyMeter!.readEnergyKwh(quick())).toBe(0));
  });

  it('writes amp and frc only when they change, and its limit never forces a charge on', async () => {
    await start([{ atMs: t0, battery: { capacityKwh: 60, socPct: 20 } }]);
    await step(60_000);
    for (let i = 0; i < 5; i++) await dev.chargeCurrentLimit!.setCurrentA(10, sig());
    expect([sim.setsOf('amp'), sim.setsOf('frc')]).toEqual([1, 1]);
    await dev.chargeCurrentLimit!.setCurrentA(0, sig());
    await dev.chargeCurrentLimit!.setCurrentA(0, sig());
    expect(sim.frc).toBe(1);
    expect(sim.setsOf('frc')).toBe(2);
    // Paused: a safe limit of 6 A keeps it paused (it lowers amp at most).
    await dev.chargeCurrentLimit!.limitCurrentA!(6, sig());
    expect([sim.frc, sim.amp, sim.powerW]).toEqual([1, 6, 0]);
    // Charging at 16 A: the limit lowers the current and leaves the charge as it was.
    await dev.chargeCurrentLimit!.setCurrentA(16, sig());
    await dev.chargeCurrentLimit!.limitCurrentA!(6, sig());
    expect([sim.frc, sim.amp]).toEqual([2, 6]);
    await dev.chargeCurrentLimit!.limitCurrentA!(0, sig());
    expect(sim.frc).toBe(1);
  });
});
