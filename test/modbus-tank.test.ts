import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { isWattshiftError } from '../src/errors.js';
import { silentLogger } from '../src/log.js';
import { createModbusBus } from '../src/devices/modbus/bus.js';
import { createModbusDevice } from '../src/devices/modbus/modbus-device.js';
import { loadProfile } from '../src/devices/modbus/profiles.js';
import { accumulate, closeHoursBefore, initialMeteringState, type HourEnergy, type MeteringState } from '../src/core/metering.js';
import { TankPhysics, profileMDraws } from '../src/sandbox/devices/tank-physics.js';
import { counterGlitchKwh, startSimulatedTank, type SimulatedTank } from '../src/sandbox/devices/modbus-tank.js';

const T0 = Date.UTC(2026, 0, 15);
const MIN = 60_000;
const HOUR = 3_600_000;
const signal = new AbortController().signal;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
});

async function tankWithAdapter(clock: ManualClock, options: Parameters<typeof startSimulatedTank>[0] = {}) {
  const tank: SimulatedTank = await startSimulatedTank({ clock, ...options });
  cleanups.push(() => tank.close());
  const bus = createModbusBus(
    'sim',
    { type: 'tcp', host: tank.host, port: tank.port, timeoutMs: 1000 },
    {
      clock,
      logger: silentLogger(),
      backoff: { initialMs: 1000, maxMs: 60_000 },
    },
  );
  cleanups.push(() => bus.close());
  const source = { type: 'modbus' as const, bus: 'sim', unitId: 1, profile: 'wattshift-sim-tank' };
  const dev = createModbusDevice(source, { bus, profile: loadProfile('wattshift-sim-tank'), logger: silentLogger() });
  return {
    tank,
    bus,
    sw: dev.capabilities('switch').heaterSwitch!,
    meter: dev.capabilities('meter'),
    thermo: dev.capabilities('thermometer').thermometer!,
  };
}

describe('tank physics', () => {
  it('loses standing heat when blocked and uses no energy', () => {
    const t = new TankPhysics({ startMs: T0, initialC: 75, draws: [] });
    t.setBlocked(true);
    t.advanceTo(T0 + 24 * HOUR);
    // UA·ΔT·24 h ≈ 1.6 W/K · ~50 K · 24 h ≈ 1.9 kWh ≈ 8 K on 200 L
    expect(t.tempC).toBeGreaterThan(65);
    expect(t.tempC).toBeLessThan(69);
    expect(t.trueEnergyKwh).toBe(0);
  });

  it('holds the thermostat band, and the element energy balances draws and losses', () => {
    const t = new TankPhysics({ startMs: T0, initialC: 72, initialCounterKwh: 10 });
    let minC = Infinity;
    let maxC = -Infinity;
    for (let m = 1; m <= 24 * 60; m++) {
      t.advanceTo(T0 + m * MIN);
      minC = Math.min(minC, t.tempC);
      maxC = Math.max(maxC, t.tempC);
    }
    expect(maxC).toBeLessThan(75.1);
    expect(minC).toBeGreaterThan(55); // the 1.4 kWh shower drops ~6 K
    expect(t.drawnKwh).toBeCloseTo(
      profileMDraws.reduce((a, d) => a + d.kwh, 0),
      9,
    );
    const storedChange = (t.tempC - 72) * t.capacityKwhPerK;
    const lossKwh = t.trueEnergyKwh - t.drawnKwh - storedChange;
    expect(lossKwh).toBeGreaterThan(1.5);
    expect(lossKwh).toBeLessThan(2.3);
    const hourly = [...t.hourlyTruthKwh().values()].reduce((a, b) => a + b, 0);
    expect(hourly).toBeCloseTo(t.trueEnergyKwh, 9);
    expect(t.counterKwh - 10).toBeCloseTo(t.trueEnergyKwh, 9);
  });
});

describe('simulated tank over Modbus TCP', () => {
  it('is read and switched by the real adapter through the built-in profile', async () => {
    const clock = new ManualClock(T0);
    const { tank, sw, meter, thermo } = await tankWithAdapter(clock, { initialC: 60, initialCounterKwh: 100, draws: [] });
    expect(await thermo.readTemperatureC(signal)).toBeCloseTo(60, 1);
    expect(await meter.powerMeter!.readPowerW(signal)).toBe(2000);
    await clock.advance(30 * MIN);
    expect(await meter.energyMeter!.readEnergyKwh(signal)).toBeCloseTo(101, 4);
    await sw.block(10 * MIN, signal);
    expect(await sw.readBlocked(signal)).toBe(true);
    expect(await meter.powerMeter!.readPowerW(signal)).toBe(0);
    expect(tank.state()).toMatchObject({ blocked: true, heating: false, leaseRemainingS: 600 });
    await sw.allow(signal);
    expect(tank.state()).toMatchObject({ blocked: false, heating: true, leaseRemainingS: 0 });
  });

  it('releases a block on the device when the lease is not renewed, even while unreachable', async () => {
    const clock = new ManualClock(T0);
    const { tank, sw, meter } = await tankWithAdapter(clock, { initialC: 60, draws: [] });
    await sw.block(120_000, signal);
    await clock.advance(60_000);
    expect(await sw.readBlocked(signal)).toBe(true);
    await tank.stopServer();
    expect(await meter.energyMeter!.readEnergyKwh(signal).catch((e) => (isWattshiftError(e) ? e.code : e))).toBe('DEVICE_UNREACHABLE');
    await clock.advance(61_000);
    expect(tank.state()).toMatchObject({ blocked: false, heating: true }); // safe state: heating allowed
    await tank.startServer();
    await clock.advance(60_000); // past the reconnect back-off
    expect(await sw.readBlocked(signal)).toBe(false);
  });

  it('injects faults: NaN, ±Inf, out-of-range, counter glitches, silence and exceptions', async () => {
    const clock = new ManualClock(T0);
    const { tank, meter, thermo } = await tankWithAdapter(clock, { draws: [], initialCounterKwh: 100 });
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e) => (isWattshiftError(e) ? e.code : String(e)),
      );
    const trueKwh = tank.state().counterKwh;
    tank.setFault('nan');
    expect(await code(meter.energyMeter!.readEnergyKwh(signal))).toBe('DEVICE_BAD_VALUE');
    tank.setFault('inf');
    expect(await code(meter.energyMeter!.readEnergyKwh(signal))).toBe('DEVICE_BAD_VALUE');
    expect(await code(meter.powerMeter!.readPowerW(signal))).toBe('DEVICE_BAD_VALUE');
    tank.setFault('counter-low');
    expect(await meter.energyMeter!.readEnergyKwh(signal)).toBeCloseTo(trueKwh - counterGlitchKwh, 3);
    tank.setFault('counter-high');
    expect(await meter.energyMeter!.readEnergyKwh(signal)).toBeCloseTo(trueKwh + counterGlitchKwh, 3);
    tank.setFault('out-of-range');
    expect(await code(meter.energyMeter!.readEnergyKwh(signal))).toBe('DEVICE_BAD_VALUE');
    expect(await code(meter.powerMeter!.readPowerW(signal))).toBe('DEVICE_BAD_VALUE');
    expect(await code(thermo.readTemperatureC(signal))).toBe('DEVICE_BAD_VALUE');
    tank.setFault('exception');
    expect(await code(meter.energyMeter!.readEnergyKwh(signal))).toBe('DEVICE_REJECTED');
    tank.setFault('silent');
    expect(await code(meter.energyMeter!.readEnergyKwh(signal))).toBe('DEVICE_TIMEOUT');
    tank.setFault(null);
    expect(await code(meter.energyMeter!.readEnergyKwh(signal))).toBe('ok');
  });

  it('a simulated day: hourly totals from core/metering match the ground truth within 0.1 %, through outages, lease expiry and a counter reset', async () => {
    const clock = new ManualClock(T0);
    const { tank, sw, meter } = await tankWithAdapter(clock, { initialC: 62, initialCounterKwh: 100 });
    let state: MeteringState = initialMeteringState('counter');
    const closed: HourEnergy[] = [];
    const failures: string[] = [];
    let releasedWhileDown = false;
    let serverDown = false;

    const sample = async (): Promise<void> => {
      try {
        const kwh = await meter.energyMeter!.readEnergyKwh(signal);
        const r = accumulate(state, { atMs: clock.nowMs(), kwh });
        state = r.state;
        closed.push(...r.closedHours);
      } catch (err) {
        failures.push(isWattshiftError(err) ? err.code : String(err));
        const r = closeHoursBefore(state, clock.nowMs());
        state = r.state;
        closed.push(...r.closedHours);
      }
    };

    await sample();
    for (let m = 0; m < 24 * 60; m++) {
      // control for minute m, then time passes, then the metering read at the minute's end
      const wantBlocked = m < 360 || (m >= 840 && m < 860);
      const down = (m >= 560 && m < 570) || (m >= 845 && m < 875);
      if (down && !serverDown) await tank.stopServer();
      if (!down && serverDown) await tank.startServer();
      serverDown = down;
      if (!down) {
        if (wantBlocked) await sw.block(5 * MIN, signal).catch(() => undefined);
        else if (m === 360 || m === 875) await sw.allow(signal).catch(() => undefined);
      }
      if (m === 870) releasedWhileDown = !tank.state().blocked;
      if (m === 1300) tank.physics.resetCounter(0); // 21:40, while reheating after the 21:30 shower
      await clock.advance(MIN);
      await sample();
    }

    expect(releasedWhileDown).toBe(true);
    expect(failures.length).toBeGreaterThanOrEqual(40);
    expect(new Set(failures)).toEqual(new Set(['DEVICE_UNREACHABLE']));

    const truth = tank.physics.hourlyTruthKwh();
    expect(closed.map((h) => h.hourStartMs)).toEqual(Array.from({ length: 24 }, (_, i) => T0 + i * HOUR));
    let worstRel = 0;
    for (const h of closed) {
      const t = truth.get(h.hourStartMs) ?? 0;
      const hour = (h.hourStartMs - T0) / HOUR;
      if (hour === 21) {
        // counter reset at 21:40: the minute around it is unknown, marked, never invented
        expect(h.quality).toBe('partial');
        expect(h.discontinuities).toBe(1);
        expect(h.kwh).toBeLessThanOrEqual(t + 1e-5);
        expect(h.kwh).toBeGreaterThanOrEqual(t - 2 / 60 - 1e-5);
        expect(h.kwh).toBeGreaterThan(0.5); // the energy before and after the reset is kept
        continue;
      }
      expect(h.quality, `hour ${hour}`).toBe('complete');
      expect(Math.abs(h.kwh - t), `hour ${hour}: ${h.kwh} vs ${t}`).toBeLessThanOrEqual(Math.max(0.001 * t, 1e-5));
      if (t > 0.1) worstRel = Math.max(worstRel, Math.abs(h.kwh - t) / t);
      if (hour < 6) expect(h.kwh).toBe(0); // blocked all night
    }
    expect(worstRel).toBeLessThan(0.001);
    const dayTruth = [...truth.values()].reduce((a, b) => a + b, 0);
    expect(dayTruth).toBeGreaterThan(5); // draws of profile M were reheated
  });
});
