/**
 * The simulated SG Ready heat pump over real Modbus TCP, driven by wattshift's own stack: the
 * `wattshift-sim-heat-pump` profile's two relay channels as contacts (createSgReadyInput) and the
 * supervisor. The pump follows the label's four states and ends a lock by itself after 2 hours.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { createModbusBus } from '../src/devices/modbus/bus.js';
import { createModbusDevice } from '../src/devices/modbus/modbus-device.js';
import { loadProfile } from '../src/devices/modbus/profiles.js';
import { createSgReadyInput } from '../src/devices/sg-ready.js';
import { superviseDevice } from '../src/devices/supervisor.js';
import type { HeaterSwitch } from '../src/ports.js';
import { startSgReadyHeatPump, type SgReadyHeatPump } from '../src/sandbox/devices/sg-ready-heat-pump.js';

const T0 = Date.UTC(2026, 0, 15);
const MIN = 60_000;
const signal = new AbortController().signal;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
});

async function pumpWithDriver(clock: ManualClock, options: Parameters<typeof startSgReadyHeatPump>[0] = {}) {
  const pump: SgReadyHeatPump = await startSgReadyHeatPump({ clock, draws: [], ...options });
  cleanups.push(() => pump.close());
  const bus = createModbusBus(
    'hp',
    { type: 'tcp', host: pump.host, port: pump.port, timeoutMs: 1000 },
    {
      clock,
      logger: silentLogger(),
      backoff: { initialMs: 1000, maxMs: 60_000 },
    },
  );
  cleanups.push(() => bus.close());
  const profile = loadProfile('wattshift-sim-heat-pump');
  const relay = (channel: number): HeaterSwitch =>
    createModbusDevice(
      { type: 'modbus', bus: 'hp', unitId: 1, profile: 'wattshift-sim-heat-pump', channel },
      { bus, profile, logger: silentLogger() },
    ).capabilities('switch').heaterSwitch!;
  const meter = createModbusDevice(
    { type: 'modbus', bus: 'hp', unitId: 1, profile: 'wattshift-sim-heat-pump' },
    { bus, profile, logger: silentLogger() },
  );
  return { pump, relay1: relay(0), relay2: relay(1), meter };
}

describe('simulated SG Ready heat pump', () => {
  it('follows the four states: normal holds its setpoint, boost raises it, start command runs to max, lock stops it', async () => {
    const clock = new ManualClock(T0);
    const { pump, relay1, relay2 } = await pumpWithDriver(clock, { tank: { initialC: 44 } });
    const input = createSgReadyInput(relay1, relay2);
    // Normal: below normalC − hysteresis the pump heats by itself, and stops at normalC (50 °C).
    clock.advance(3 * 3_600_000);
    let s = pump.state();
    expect(s.contacts).toBe('normal');
    expect(s.tempC).toBeGreaterThan(45);
    expect(s.tempC).toBeLessThanOrEqual(50.1);
    // Electric power is the heat over the COP: 0.5 kW while running.
    expect(s.electricKwh).toBeCloseTo(s.heatKwh / 2.8, 6);

    await input.setState('boost', 600 * 60_000, signal);
    expect(pump.state().contacts).toBe('boost');
    clock.advance(4 * 3_600_000);
    s = pump.state();
    expect(s, JSON.stringify(s)).toMatchObject({ contacts: 'boost' });
    expect(s.tempC).toBeGreaterThan(55);
    expect(s.tempC).toBeLessThanOrEqual(60.1);

    await input.setState('forced', 600 * 60_000, signal);
    expect(pump.state()).toMatchObject({ contacts: 'forced', heating: true, powerW: 500 });
    clock.advance(4 * 3_600_000);
    expect(pump.state().tempC).toBeGreaterThan(64);

    await input.setState('block', 600 * 60_000, signal);
    expect(pump.state()).toMatchObject({ contacts: 'block', operating: 'block', heating: false, powerW: 0 });
  });

  it('ends a lock by itself after 2 hours (SG Ready: at most 2 h of hard lock) and runs normally until the contact opens', async () => {
    const clock = new ManualClock(T0);
    const { pump, relay1, relay2 } = await pumpWithDriver(clock, { tank: { initialC: 44 } });
    const input = createSgReadyInput(relay1, relay2);
    await input.setState('block', 10 * 3_600_000, signal);
    clock.advance(119 * MIN);
    expect(pump.state()).toMatchObject({ operating: 'block', heating: false });
    clock.advance(2 * MIN);
    const s = pump.state();
    // The contacts still say lock; the pump runs its normal thermostat (below 50 − 5 °C).
    expect(s).toMatchObject({ contacts: 'block', operating: 'normal', heating: true });
    expect(pump.history().map((h) => h.operating)).toEqual(['normal', 'block', 'normal']);
    expect(pump.history()[2]!.atMs - pump.history()[1]!.atMs).toBe(120 * MIN);
  });

  it("falls back to normal operation when the relays' release timers run out (a lost daemon)", async () => {
    const clock = new ManualClock(T0);
    const { pump, relay1, relay2 } = await pumpWithDriver(clock);
    const input = createSgReadyInput(relay1, relay2);
    expect(input.deviceLease).toBe(true);
    await input.setState('forced', 5 * MIN, signal);
    expect(pump.state().contacts).toBe('forced');
    clock.advance(5 * MIN + 1000);
    expect(pump.state().contacts).toBe('normal');
  });

  it('never passes through the start command or the lock on the way between other states', async () => {
    const clock = new ManualClock(T0);
    const { pump, relay1, relay2 } = await pumpWithDriver(clock, { tank: { initialC: 30 } });
    const input = createSgReadyInput(relay1, relay2);
    const seen: string[] = [];
    const watch = (r: HeaterSwitch): HeaterSwitch => ({
      deviceLease: r.deviceLease,
      block: async (ms, s) => {
        await r.block(ms, s);
        seen.push(pump.state().contacts);
      },
      allow: async (s) => {
        await r.allow(s);
        seen.push(pump.state().contacts);
      },
    });
    const watched = createSgReadyInput(watch(relay1), watch(relay2));
    const path = async (from: 'block' | 'boost' | 'forced' | 'normal', to: 'block' | 'boost' | 'forced' | 'normal'): Promise<string[]> => {
      await input.setState(from, 3_600_000, signal);
      await watched.setState(from, 3_600_000, signal);
      seen.length = 0;
      await watched.setState(to, 3_600_000, signal);
      return [...seen];
    };
    expect(await path('block', 'boost')).toEqual(['normal', 'boost']);
    expect(await path('boost', 'block')).toEqual(['normal', 'block']);
    expect(await path('normal', 'forced')).toEqual(['boost', 'forced']);
    expect(await path('forced', 'normal')).toEqual(['boost', 'normal']);
  });

  it('is held in normal operation by the supervisor on stop, with the lock renewed as a lease meanwhile', async () => {
    const clock = new ManualClock(T0);
    const { pump, relay1, relay2, meter } = await pumpWithDriver(clock);
    const sup = superviseDevice(
      {
        id: 'hp',
        kind: 'heatPump',
        capabilities: { sgReady: createSgReadyInput(relay1, relay2), ...meter.capabilities('meter') },
        leaseMs: 10 * MIN,
        readTimeoutMs: 1000,
      },
      { clock, logger: silentLogger() },
    );
    await sup.applySgReady('block');
    expect(sup.health()).toMatchObject({ sgState: 'block', blocked: true });
    expect(pump.state().contacts).toBe('block');
    await sup.stop();
    expect(pump.state().contacts).toBe('normal');
  });
});
