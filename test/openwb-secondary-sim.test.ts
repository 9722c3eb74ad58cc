/**
 * The openWB secondary simulator, driven by the daemon's own Modbus device with the shipped
 * profile: what the daemon writes and reads reaches the wallbox, and openWB's watchdog stops the
 * charge 80 s after the last read. And the capability the acknowledgement rule asks: a charger
 * that stops by itself holds any cap; an OCPP charger holds one as its adapter says.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { parseConfig } from '../src/config/load.js';
import { holdsByItselfMs } from '../src/devices/cap-hold.js';
import { buildDevice } from '../src/devices/factory.js';
import { createModbusBus } from '../src/devices/modbus/bus.js';
import { createModbusDevice } from '../src/devices/modbus/modbus-device.js';
import { loadProfile } from '../src/devices/modbus/profiles.js';
import { ocppCapHoldMaxMs } from '../src/devices/ocpp/ocpp-charger.js';
import { silentLogger } from '../src/log.js';
import { createOpenWbSecondarySim, openWbWatchdogMs } from '../src/sandbox/devices/openwb-secondary-sim.js';
import { closeOpened, password, startCentral } from './helpers/ocpp-world.js';

const signal = new AbortController().signal;
const t0 = Date.UTC(2026, 0, 14, 10);
const hour = 3_600_000;
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!().catch(() => undefined);
  await closeOpened();
});

async function wallbox(clock: ManualClock) {
  const sim = createOpenWbSecondarySim({ clock, plugs: [{ atMs: t0, untilMs: t0 + 24 * hour, battery: { capacityKwh: 77, socPct: 10 } }] });
  await sim.start();
  closers.push(() => sim.close());
  const bus = createModbusBus(
    'wb',
    { type: 'tcp', host: '127.0.0.1', port: sim.port, timeoutMs: 1000 },
    { clock: new ManualClock(0), logger: silentLogger() },
  );
  closers.push(() => bus.close());
  const caps = createModbusDevice(
    { type: 'modbus', bus: 'wb', unitId: 1, profile: 'openwb-secondary' },
    { bus, profile: loadProfile('openwb-secondary'), logger: silentLogger() },
  ).capabilities('charger');
  return { sim, caps };
}

describe('an openWB wallbox in secondary mode', () => {
  it('charges at the current the daemon writes while the daemon reads it, counting whole Wh', async () => {
    const clock = new ManualClock(t0);
    const { sim, caps } = await wallbox(clock);
    expect(await caps.evState!.readEvState(signal)).toEqual({ plugged: true, charging: false });
    await caps.chargeCurrentLimit!.setCurrentA(16, signal);
    const startKwh = await caps.energyMeter!.readEnergyKwh(signal);
    for (let i = 0; i < 60; i++) {
      await clock.advance(60_000);
      await caps.evState!.readEvState(signal); // the control tick's read: openWB's heartbeat
    }
    expect(await caps.powerMeter!.readPowerW(signal)).toBe(16 * 3 * 230);
    expect((await caps.energyMeter!.readEnergyKwh(signal)) - startKwh).toBeCloseTo(11.04, 3);
    expect(sim.state().totalWh % 1).toBe(0);
  });

  it('stops charging 80 s after the last read, and only a new current starts it again', async () => {
    const clock = new ManualClock(t0);
    const { sim, caps } = await wallbox(clock);
    await caps.chargeCurrentLimit!.setCurrentA(16, signal);
    await clock.advance(openWbWatchdogMs - 1000);
    expect(sim.state()).toMatchObject({ setA: 16, charging: true, watchdogTripped: false });
    await clock.advance(2000);
    const tripped = sim.state();
    expect(tripped).toMatchObject({ setA: 0, charging: false, watchdogTripped: true });
    await clock.advance(hour);
    expect(sim.state().totalWh).toBe(tripped.totalWh);
    // Reading again is not enough: the daemon's next write of the current is.
    expect(await caps.evState!.readEvState(signal)).toEqual({ plugged: true, charging: false });
    await caps.chargeCurrentLimit!.setCurrentA(10, signal);
    expect(sim.state()).toMatchObject({ setA: 10, charging: true, watchdogTripped: false });
  });
});

describe('what a built charger can hold of a cap by itself', () => {
  const base = {
    version: 1,
    site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 11 },
    spark: { clientId: 'c', clientSecret: 'client-secret' },
    storage: { path: ':memory:' },
  };

  it('an openWB secondary, whose watchdog stops the charge: any cap', () => {
    const { config } = parseConfig(
      {
        ...base,
        modbus: { wb: { type: 'tcp', host: '127.0.0.1' } },
        devices: [
          {
            id: 'car',
            kind: 'evCharger',
            charger: { type: 'modbus', bus: 'wb', unitId: 1, profile: 'openwb-secondary' },
            model: { capacityKwh: 60 },
          },
        ],
      },
      { env: {} },
    );
    const clock = new ManualClock(t0);
    const bus = createModbusBus('wb', { type: 'tcp', host: '127.0.0.1', port: 1, timeoutMs: 1000 }, { clock, logger: silentLogger() });
    closers.push(() => bus.close());
    const built = buildDevice(config.devices[0]!, { buses: new Map([['wb', bus]]), mqtt: null, clock, logger: silentLogger() });
    expect(holdsByItselfMs(config.devices[0]!, built.capabilities)).toBe(Number.POSITIVE_INFINITY);
  });

  it("an OCPP charger: its charging profile's window, as the built device passes it on", async () => {
    const clock = new ManualClock(t0);
    const { cs } = await startCentral(clock);
    const { config } = parseConfig(
      {
        ...base,
        ocpp: {},
        devices: [{ id: 'car', kind: 'evCharger', charger: { type: 'ocpp', chargePointId: 'cp1', password }, model: { capacityKwh: 60 } }],
      },
      { env: {} },
    );
    const built = buildDevice(config.devices[0]!, { buses: new Map(), mqtt: null, ocpp: cs, clock, logger: silentLogger() });
    closers.push(async () => built.close());
    expect(holdsByItselfMs(config.devices[0]!, built.capabilities)).toBe(ocppCapHoldMaxMs);
  });
});
