import { afterEach, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { dirname } from 'node:path';
import { ManualClock } from '../src/clock.js';
import { isWattshiftError } from '../src/errors.js';
import { silentLogger } from '../src/log.js';
import { createModbusBus, type ModbusBus } from '../src/devices/modbus/bus.js';
import { createModbusDevice } from '../src/devices/modbus/modbus-device.js';
import { builtinProfileNames, loadProfile, parseProfile } from '../src/devices/modbus/profiles.js';
import { startHeartbeats } from '../src/jobs/heartbeats.js';
import { encodeRaw } from '../src/devices/modbus/codec.js';
import { float32Words, startModbusServer } from './fixtures/modbus/servers.js';
import { until } from './helpers/until.js';

const fixtures = `${dirname(fileURLToPath(import.meta.url))}/fixtures/modbus`;
const signal = new AbortController().signal;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
});

/** A register bank server: holding/input words and coils in maps, writes recorded. */
async function bank(init: { input?: Record<number, number>; holding?: Record<number, number>; coils?: Record<number, boolean> }) {
  const input = new Map(Object.entries(init.input ?? {}).map(([k, v]) => [Number(k), v]));
  const holding = new Map(Object.entries(init.holding ?? {}).map(([k, v]) => [Number(k), v]));
  const coils = new Map(Object.entries(init.coils ?? {}).map(([k, v]) => [Number(k), v]));
  const writes: string[] = [];
  const missing = (what: string, a: number) => Object.assign(new Error(`no ${what} ${a}`), { modbusErrorCode: 2 });
  const srv = await startModbusServer({
    getInputRegister: (a: number) => {
      const v = input.get(a);
      if (v === undefined) throw missing('input', a);
      return v;
    },
    getHoldingRegister: (a: number) => {
      const v = holding.get(a);
      if (v === undefined) throw missing('holding', a);
      return v;
    },
    getCoil: (a: number) => coils.get(a) ?? false,
    setCoil: (a: number, v: boolean) => {
      writes.push(`coil ${a}=${v}`);
      coils.set(a, v);
    },
    setRegister: (a: number, v: number) => {
      writes.push(`reg ${a}=${v}`);
      holding.set(a, v);
    },
  });
  cleanups.push(srv.close);
  const bus: ModbusBus = createModbusBus(
    'b',
    { type: 'tcp', host: '127.0.0.1', port: srv.port, timeoutMs: 1000 },
    { clock: new ManualClock(0), logger: silentLogger() },
  );
  cleanups.push(() => bus.close());
  const setWords = (map: 'input' | 'holding', addr: number, words: number[]) =>
    words.forEach((w, i) => (map === 'input' ? input : holding).set(addr + i, w));
  return { bus, writes, setWords, coils };
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return isWattshiftError(err) ? err.code : `other: ${String(err)}`;
  }
  return 'resolved';
}

const src = (profile: string, extra: Record<string, unknown> = {}) => ({ type: 'modbus' as const, bus: 'b', unitId: 1, profile, ...extra });

describe('profiles', () => {
  it('ships the built-in profiles, all valid', () => {
    const names = builtinProfileNames();
    for (const n of [
      'eastron-sdm120',
      'eastron-sdm630',
      'carlo-gavazzi-em24',
      'abb-ab-meter',
      'generic-relay',
      'abb-terra-ac',
      'openwb-secondary',
      'wattshift-sim-tank',
    ]) {
      expect(names).toContain(n);
    }
    for (const n of names) expect(loadProfile(n).name).toBe(n);
    expect(loadProfile('eastron-sdm630').points['energyKwh']).toMatchObject({ function: 'input', address: 0x48, type: 'float32' });
  });

  it('loads a user register map by path relative to a base dir', () => {
    const p = loadProfile('./user-meter.yaml', { baseDir: fixtures });
    expect(p.name).toBe('my-heat-pump-meter');
    expect(p.points['energyKwh']).toMatchObject({ wordOrder: 'little', scale: 0.001 });
  });

  it('rejects an invalid profile, an unknown name and a missing file with DEVICE_PROFILE_INVALID', () => {
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return isWattshiftError(e) ? e.code : 'other';
      }
      return 'ok';
    };
    expect(code(() => loadProfile('bad-profile.yaml', { baseDir: fixtures }))).toBe('DEVICE_PROFILE_INVALID');
    expect(code(() => loadProfile('no-such-profile'))).toBe('DEVICE_PROFILE_INVALID');
    expect(code(() => loadProfile('./missing.yaml', { baseDir: fixtures }))).toBe('DEVICE_PROFILE_INVALID');
    try {
      loadProfile('bad-profile.yaml', { baseDir: fixtures });
    } catch (e) {
      expect(String((e as Error).message)).toMatch(/coil points have no type/);
      expect(String((e as Error).message)).toMatch(/65535/);
    }
  });
});

describe('meters', () => {
  it('reads an Eastron SDM120 (float32 input registers)', async () => {
    const b = await bank({ input: {} });
    b.setWords('input', 0x48, float32Words(1234.5));
    b.setWords('input', 0x0c, float32Words(-850.25));
    const dev = createModbusDevice(src('eastron-sdm120'), { bus: b.bus, profile: loadProfile('eastron-sdm120'), logger: silentLogger() });
    const caps = dev.capabilities('meter');
    expect(await caps.energyMeter!.readEnergyKwh(signal)).toBe(1234.5);
    expect(await caps.powerMeter!.readPowerW(signal)).toBe(-850.25);
  });

  it('reads a Carlo Gavazzi EM24-DIN (int32 low word first, scaled): kWh (+) TOT at 0x3E, not PAR or the EM21/E1 address', async () => {
    const b = await bank({});
    // EM24-DIN PFA/PFB/X map: 0x3E kWh (+) TOT, 0x42 kWh (+) PAR (resettable partial counter);
    // 0x34 is kWh (+) TOT only on the EM21 and the EM24_E1. Three different values tell them apart.
    b.setWords('input', 0x34, encodeRaw(1111, { type: 'int32', wordOrder: 'little' }));
    b.setWords('input', 0x3e, encodeRaw(123456, { type: 'int32', wordOrder: 'little' }));
    b.setWords('input', 0x42, encodeRaw(2222, { type: 'int32', wordOrder: 'little' }));
    b.setWords('input', 0x28, encodeRaw(-15, { type: 'int32', wordOrder: 'little' }));
    const profile = loadProfile('carlo-gavazzi-em24');
    expect(profile.points['energyKwh']).toMatchObject({ function: 'input', address: 0x3e, type: 'int32', wordOrder: 'little', scale: 0.1 });
    expect(profile.points['frequencyHz']).toMatchObject({ address: 0x37, type: 'int16', scale: 0.1 });
    expect(profile.maxRegistersPerRead).toBe(11); // "maximum 11 register (word) with a single request"
    const dev = createModbusDevice(src('carlo-gavazzi-em24'), { bus: b.bus, profile, logger: silentLogger() });
    expect(await dev.energyMeter().readEnergyKwh(signal)).toBeCloseTo(12345.6, 9);
    expect(await dev.powerMeter().readPowerW(signal)).toBeCloseTo(-1.5, 9);
    // LSW first: 0x0001E240 = 123456 arrives as [0xE240, 0x0001]
    b.setWords('input', 0x3e, [0xe240, 0x0001]);
    expect(await dev.energyMeter().readEnergyKwh(signal)).toBeCloseTo(12345.6, 9);
    // overflow ("EEEE"): 7FFFh in the most significant word is rejected
    b.setWords('input', 0x3e, [0x0000, 0x7fff]);
    expect(await codeOf(dev.energyMeter().readEnergyKwh(signal))).toBe('DEVICE_BAD_VALUE');
  });

  it('decodes the worked examples of the ABB A43/A44 manual (chapter 9)', async () => {
    const b = await bank({});
    b.setWords('holding', 0x5000, [0x0000, 0x0000, 0x0003, 0x1292]); // 0000000000031292h -> 2013.62 kWh
    b.setWords('holding', 0x5b14, [0x0001, 0xe8e4]); // active total power 0001E8E4h -> 1251.56 W
    b.setWords('holding', 0x5b2c, [0x1383]); // frequency 1383h -> 49.95 Hz
    const abb = createModbusDevice(src('abb-ab-meter'), { bus: b.bus, profile: loadProfile('abb-ab-meter'), logger: silentLogger() });
    expect(await abb.energyMeter().readEnergyKwh(signal)).toBeCloseTo(2013.62, 9);
    expect(await abb.powerMeter().readPowerW(signal)).toBeCloseTo(1251.56, 9);
    expect((await abb.probe(signal))['frequencyHz']).toMatchObject({ unit: 'Hz' });
    expect((await abb.probe(signal))['frequencyHz']?.value).toBeCloseTo(49.95, 9);
    b.setWords('holding', 0x5b14, [0xffff, 0xd04a]); // a signed power: FFFFD04Ah -> -122.14
    expect(await abb.powerMeter().readPowerW(signal)).toBeCloseTo(-122.14, 9);
  });

  it('reads an ABB A/B meter (uint64 holding) and a user map with a temperature offset', async () => {
    const b = await bank({});
    b.setWords('holding', 0x5000, encodeRaw(98765432, { type: 'uint64' }));
    b.setWords('holding', 100, encodeRaw(4_500_250, { type: 'uint32', wordOrder: 'little' }));
    b.setWords('holding', 104, [1000]);
    const abb = createModbusDevice(src('abb-ab-meter'), { bus: b.bus, profile: loadProfile('abb-ab-meter'), logger: silentLogger() });
    expect(await abb.energyMeter().readEnergyKwh(signal)).toBeCloseTo(987654.32, 6);
    const user = createModbusDevice(src('user-meter.yaml'), {
      bus: b.bus,
      profile: loadProfile('user-meter.yaml', { baseDir: fixtures }),
      logger: silentLogger(),
    });
    expect(await user.energyMeter().readEnergyKwh(signal)).toBeCloseTo(4500.25, 9);
    expect(await user.capabilities('thermometer').thermometer!.readTemperatureC(signal)).toBeCloseTo(50, 9);
  });

  it('rejects NaN, out-of-range and "not available" readings with DEVICE_BAD_VALUE', async () => {
    const b = await bank({});
    const dev = createModbusDevice(src('eastron-sdm120'), { bus: b.bus, profile: loadProfile('eastron-sdm120'), logger: silentLogger() });
    b.setWords('input', 0x48, [0x7fc0, 0]); // NaN
    expect(await codeOf(dev.energyMeter().readEnergyKwh(signal))).toBe('DEVICE_BAD_VALUE');
    b.setWords('input', 0x48, float32Words(-3)); // a counter below zero
    expect(await codeOf(dev.energyMeter().readEnergyKwh(signal))).toBe('DEVICE_BAD_VALUE');
    b.setWords('input', 0x0c, float32Words(1e7)); // 10 MW on a 45 A meter
    expect(await codeOf(dev.powerMeter().readPowerW(signal))).toBe('DEVICE_BAD_VALUE');
    b.setWords('holding', 0x5000, [0xffff, 0xffff, 0xffff, 0xffff]); // ABB "not available"
    const abb = createModbusDevice(src('abb-ab-meter'), { bus: b.bus, profile: loadProfile('abb-ab-meter'), logger: silentLogger() });
    expect(await codeOf(abb.energyMeter().readEnergyKwh(signal))).toBe('DEVICE_BAD_VALUE');
  });

  it('refuses metered values out of their physical bounds even where the register map sets none', async () => {
    const b = await bank({});
    const profile = parseProfile(
      [
        'name: unbounded-meter',
        'kind: meter',
        'points:',
        '  energyKwh: { function: holding, address: 0, type: float32 }',
        '  powerW: { function: holding, address: 2, type: float32 }',
        '  temperatureC: { function: holding, address: 4, type: float32 }',
      ].join('\n'),
      'test',
    );
    const dev = createModbusDevice(src('unbounded-meter'), { bus: b.bus, profile, logger: silentLogger() });
    b.setWords('holding', 0, float32Words(-5)); // a counter below zero
    b.setWords('holding', 2, float32Words(1e9)); // 1 GW through a home
    b.setWords('holding', 4, float32Words(1000)); // a tank at 1000 °C
    expect(await codeOf(dev.energyMeter().readEnergyKwh(signal))).toBe('DEVICE_BAD_VALUE');
    expect(await codeOf(dev.powerMeter().readPowerW(signal))).toBe('DEVICE_BAD_VALUE');
    expect(await codeOf(dev.capabilities('thermometer').thermometer!.readTemperatureC(signal))).toBe('DEVICE_BAD_VALUE');
    b.setWords('holding', 2, float32Words(-11_000)); // exporting 11 kW is a reading
    expect(await dev.powerMeter().readPowerW(signal)).toBe(-11_000);
  });

  it('refuses a role the profile cannot fill', () => {
    const b = { bus: {} as ModbusBus, logger: silentLogger() };
    const meter = createModbusDevice(src('eastron-sdm120'), { ...b, profile: loadProfile('eastron-sdm120') });
    expect(() => meter.capabilities('switch')).toThrow(/no point "relay"/);
    expect(() => meter.capabilities('charger')).toThrow(/currentLimitA/);
    const relay = createModbusDevice(src('generic-relay', { channel: 16 }), { ...b, profile: loadProfile('generic-relay') });
    expect(() => relay.capabilities('switch')).toThrow(/channel 16 out of range/);
  });

  it('probes every readable point, reporting failures per point', async () => {
    const b = await bank({});
    b.setWords('input', 0x48, float32Words(5));
    const dev = createModbusDevice(src('eastron-sdm120'), { bus: b.bus, profile: loadProfile('eastron-sdm120'), logger: silentLogger() });
    const out = await dev.probe(signal);
    expect(out['energyKwh']).toEqual({ value: 5, unit: 'kWh' });
    expect(out['voltageV']?.error?.code).toBe('DEVICE_REJECTED');
  });
});

describe('heater switch on a relay board', () => {
  it('energises the coil of its channel to block and releases it to allow; no device lease', async () => {
    const b = await bank({});
    const dev = createModbusDevice(src('generic-relay', { channel: 2 }), {
      bus: b.bus,
      profile: loadProfile('generic-relay'),
      logger: silentLogger(),
    });
    const sw = dev.capabilities('switch').heaterSwitch!;
    expect(sw.deviceLease).toBe(false);
    await sw.block(60_000, signal);
    expect(await sw.readBlocked(signal)).toBe(true);
    await sw.allow(signal);
    expect(await sw.readBlocked(signal)).toBe(false);
    expect(b.writes).toEqual(['coil 2=true', 'coil 2=false']);
  });

  it('writes the release timer before energising when the profile has a lease', async () => {
    const b = await bank({ holding: { 0x200: 0 } });
    const dev = createModbusDevice(src('wattshift-sim-tank'), { bus: b.bus, profile: loadProfile('wattshift-sim-tank'), logger: silentLogger() });
    const sw = dev.heaterSwitch();
    expect(sw.deviceLease).toBe(true);
    await sw.block(90_500, signal);
    expect(b.writes).toEqual([`reg ${0x200}=91`, 'coil 0=true']);
  });
});

describe('EV chargers', () => {
  it('ABB Terra AC: sets the current limit in mA with FC16 and decodes the charging state', async () => {
    const b = await bank({ holding: { 0x4100: 0, 0x4101: 0 } });
    const dev = createModbusDevice(src('abb-terra-ac'), { bus: b.bus, profile: loadProfile('abb-terra-ac'), logger: silentLogger() });
    const caps = dev.capabilities('charger');
    await caps.chargeCurrentLimit!.setCurrentA(16, signal);
    expect(b.writes).toEqual([`reg ${0x4100}=0`, `reg ${0x4101}=16000`]);
    for (const [state, plugged, charging] of [
      [0, false, false],
      [2, true, false],
      [4, true, true],
      [5, false, false],
    ] as const) {
      b.setWords('holding', 0x400c, [0x0000, (state << 8) | 0x80 | 0x12]); // high bit and low byte are noise
      expect(await caps.evState!.readEvState(signal)).toEqual({ plugged, charging });
    }
    expect(await codeOf(caps.chargeCurrentLimit!.setCurrentA(40, signal))).toBe('DEVICE_BAD_VALUE');
    expect(b.writes).toHaveLength(2); // nothing written for the refused value
  });

  it('openWB secondary: FC06 current in 0.01 A, and no heartbeat write (its watchdog is fed by reads)', async () => {
    const b = await bank({ input: { 10114: 1, 10115: 0 } });
    const dev = createModbusDevice(src('openwb-secondary'), { bus: b.bus, profile: loadProfile('openwb-secondary'), logger: silentLogger() });
    const caps = dev.capabilities('charger');
    await caps.chargeCurrentLimit!.setCurrentA(6.5, signal);
    expect(caps.heartbeat).toBeUndefined();
    expect(b.writes).toEqual(['reg 10171=650']);
    expect(await caps.evState!.readEvState(signal)).toEqual({ plugged: true, charging: false });
  });

  it("a charger profile with a socPct point gives the car's state of charge; an unusable one is unknown, not a failed charger", async () => {
    const b = await bank({ input: { 100: 1, 101: 1, 102: 637 } });
    const profile = parseProfile(
      [
        'name: soc-charger',
        'kind: charger',
        'points:',
        '  plugged: { function: input, address: 100, type: uint16, trueValues: [1] }',
        '  charging: { function: input, address: 101, type: uint16, trueValues: [1] }',
        '  socPct: { function: input, address: 102, type: uint16, scale: 0.1, unit: "%", min: 0, max: 100 }',
        '  currentLimitA: { function: holding, address: 200, type: uint16, unit: A, min: 0, max: 32, access: write, writeWith: single }',
      ].join('\n'),
      'test',
    );
    const caps = createModbusDevice(src('soc-charger'), { bus: b.bus, profile, logger: silentLogger() }).capabilities('charger');
    expect(await caps.evState!.readEvState(signal)).toEqual({ plugged: true, charging: true, socPct: 63.7 });
    b.setWords('input', 102, [0xffff]); // a car that tells the charger nothing: the SoC is unknown, the state still good
    expect(await caps.evState!.readEvState(signal)).toEqual({ plugged: true, charging: true });
  });

  it("a profile's heartbeat is written over the bus at its pace by the heartbeat job", async () => {
    const b = await bank({ holding: { 6000: 0 } });
    const profile = parseProfile(
      [
        'name: watchdog-charger',
        'kind: charger',
        'heartbeat: { point: alive, value: 1, everyS: 5 }',
        'points:',
        '  alive: { function: holding, address: 6000, type: uint16, access: write, writeWith: single }',
        '  currentLimitA: { function: holding, address: 6001, type: uint16, unit: A, min: 0, max: 32, access: write, writeWith: single }',
      ].join('\n'),
      'test',
    );
    const caps = createModbusDevice(src('watchdog-charger'), { bus: b.bus, profile, logger: silentLogger() }).capabilities('charger');
    const clock = new ManualClock(Date.UTC(2025, 0, 6));
    const handle = startHeartbeats([{ device: 'wb', heartbeat: caps.heartbeat! }], { clock, logger: silentLogger() })!;
    // Time moves only once the job has written its beat and gone to sleep until the next.
    const asleepAfter = (beats: number) => () => b.writes.length === beats && clock.nextWakeMs() === clock.nowMs() + 5000;
    for (let i = 1; i <= 3; i++) {
      await until(asleepAfter(i), `heartbeat ${i} written`);
      await clock.advance(5000);
    }
    await until(asleepAfter(4), 'heartbeat 4 written');
    await handle.stop();
    expect(b.writes).toEqual(['reg 6000=1', 'reg 6000=1', 'reg 6000=1', 'reg 6000=1']);
  });

  it("openWB secondary: energy is int32 Wh, so the server's failed value (FFFF FFFF) is rejected", async () => {
    const b = await bank({});
    const dev = createModbusDevice(src('openwb-secondary'), { bus: b.bus, profile: loadProfile('openwb-secondary'), logger: silentLogger() });
    b.setWords('input', 10102, [0x0001, 0xe240]); // 123456 Wh, high word first
    expect(await dev.energyMeter().readEnergyKwh(signal)).toBeCloseTo(123.456, 9);
    b.setWords('input', 10100, [0xffff, 0xfc18]); // -1000 W
    expect(await dev.powerMeter().readPowerW(signal)).toBe(-1000);
    b.setWords('input', 10102, [0xffff, 0xffff]); // openWB fills both registers with -1 when it fails
    expect(await codeOf(dev.energyMeter().readEnergyKwh(signal))).toBe('DEVICE_BAD_VALUE');
  });
});
