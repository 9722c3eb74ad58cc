/** The HAN-port main meter (AMS reader firmware, JSON classic) against its simulator on aedes. */
import { describe, expect, it } from 'vitest';
import { accumulate, initialMeteringState, type HourEnergy, type MeteringState } from '../src/core/metering.js';
import { createMqttDevice, type MqttDevice } from '../src/devices/mqtt/index.js';
import { createAmsReaderSim, type AmsReaderSim } from '../src/sandbox/devices/amsreader-sim.js';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';
import { memoryLogger } from './fixtures/modbus/servers.js';
import { superviseDevice } from '../src/devices/supervisor.js';

const t0 = Date.UTC(2026, 0, 12, 0, 0, 0);
const hourMs = 3_600_000;
const never = new AbortController().signal;
const w = useMqttDeviceWorld(t0, { reconnectPeriodMs: 100 });

/** 2 kW at night, 6 kW from 01:00, and 1.5 kW exported between 02:00 and 03:00. */
const load = (atMs: number): { importW: number; exportW: number } => {
  const h = (atMs - t0) / hourMs;
  if (h >= 2 && h < 3) return { importW: 0, exportW: 1500 };
  return { importW: h < 1 ? 2000 : 6000, exportW: 0 };
};

async function setUp(
  opts: { unmeasuredLines?: number[] } = {},
): Promise<{ sim: AmsReaderSim; dev: MqttDevice; lines: Record<string, unknown>[]; step(ms: number): Promise<void> }> {
  const sim = createAmsReaderSim({ url: w.broker.url, topic: 'ams/meter', startMs: t0, load, importKwh: 12_345.5, exportKwh: 10, ...opts });
  await sim.start();
  w.cleanups.push(() => sim.close());
  const { logger, lines } = memoryLogger();
  const dev = createMqttDevice({ type: 'amsreader', topic: 'ams/meter' }, { connection: w.connection, clock: w.clock, logger }, { staleAfterS: 60 });
  w.cleanups.push(() => dev.close());
  // The broker drops what is published before the subscription holds: wait until the device hears a list.
  await eventually(async () => {
    await sim.publishRaw('', '{"data":{"P":0}}');
    await dev.powerMeter!.readPowerW(never);
  });
  return {
    sim,
    dev,
    lines,
    async step(ms) {
      for (let t = 0; t < ms; t += 10_000) {
        await w.clock.advance(10_000);
        await sim.advance(10_000);
        // Lets the broker's deliveries in before the clock moves on.
        await new Promise((r) => setTimeout(r, 1));
      }
    },
  };
}

describe('AMS reader (HAN port) main meter', () => {
  it('reads power, per-phase currents and voltages from list 2', async () => {
    const { dev, step } = await setUp();
    await step(10_000);
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(never)).toBe(2000));
    const phases = await dev.phaseMeter!.readPhases(never);
    expect(phases.currentsA).toEqual([2.9, 2.9, 2.9]); // 2000 W / (3 × 230 V)
    expect(phases.voltagesV).toEqual([230, 230, 230]);
    // No hourly list yet: no register to meter.
    await expect(dev.energyMeter!.readEnergyKwh(never)).rejects.toMatchObject({ code: 'DEVICE_STALE' });
  });

  it('is up while its first hourly list is still to come, and down when it stays away past the hour', async () => {
    const { dev, step, lines } = await setUp();
    const meter = superviseDevice(
      { id: 'han', kind: 'meter', capabilities: dev, leaseMs: 600_000, readTimeoutMs: 5_000 },
      { clock: w.clock, logger: memoryLogger().logger },
    );
    // The first list of the next hour is 50 minutes away: power and currents come every 10 s meanwhile.
    await step(10_000);
    await eventually(async () => expect((await dev.phaseMeter!.readPhases(never)).currentsA).toHaveLength(3));
    for (let i = 0; i < 5; i++) {
      await step(10_000);
      const r = await meter.read(never);
      expect(r.errors, JSON.stringify(r.errors)).toEqual([{ capability: 'energyMeter', code: 'DEVICE_STALE' }]);
    }
    expect(meter.health().state).toBe('up');
    expect(lines.filter((l) => l.level === 'warn')).toEqual([]);
    // A start an hour and a quarter ago with no list since: the registers are a fault now.
    await w.clock.advance(75 * 60_000);
    await step(10_000);
    await meter.read(never);
    await meter.read(never);
    expect(meter.health().state).toBe('down');
    await meter.stop();
  });

  it('meters the hourly registers at the meter clock into exact hours, export included', async () => {
    const { sim, dev, step } = await setUp();
    let state: MeteringState = initialMeteringState('counter');
    const hours: HourEnergy[] = [];
    for (let i = 0; i < 4 * 6; i++) {
      await step(10 * 60_000);
      const r = await dev.energyMeter!.readStampedEnergyKwh!(never).catch(() => undefined);
      if (!r) continue;
      const res = accumulate(state, { atMs: r.atMs, kwh: r.kwh });
      state = res.state;
      hours.push(...res.closedHours);
    }
    const truth = sim.energyKwhByHour();
    expect(hours.map((h) => h.hourStartMs)).toEqual([t0 + hourMs, t0 + 2 * hourMs]);
    expect(hours.every((h) => h.quality === 'complete')).toBe(true);
    expect(hours[0]?.kwh).toBeCloseTo(truth.get(t0 + hourMs) ?? NaN, 3); // 6 kWh
    expect(hours[1]?.kwh).toBeCloseTo(0, 3); // the exporting hour imports nothing
    expect(await dev.energyMeter!.readExportEnergyKwh!(never)).toBeCloseTo(11.5, 3);
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(never)).toBe(6000));
    expect(sim.published.list3).toBe(3);
  });

  it('a malformed payload is DEVICE_BAD_VALUE until a good list comes; a silent reader goes stale', async () => {
    const { sim, dev, lines, step } = await setUp();
    await step(10_000);
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(never)).toBe(2000));
    await sim.publishRaw('', '{"data":{"P":"lots"}}');
    await eventually(async () => expect(dev.powerMeter!.readPowerW(never)).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' }));
    await sim.publishRaw('', '{"data":{"P":12'); // cut short: not JSON
    await sim.publishRaw('', '{"data":{"P":"lots"}}');
    await eventually(async () => expect(dev.powerMeter!.readPowerW(never)).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' }));
    // A run of bad payloads is one warning, not one per list.
    expect(lines.filter((l) => l['code'] === 'DEVICE_BAD_VALUE')).toHaveLength(1);
    await step(10_000);
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(never)).toBe(2000));
    expect(lines.some((l) => l['msg'] === 'AMS reader payloads usable again')).toBe(true);
    sim.setSilent(true);
    await step(70_000);
    await expect(dev.powerMeter!.readPowerW(never)).rejects.toMatchObject({ code: 'DEVICE_STALE' });
    await expect(dev.phaseMeter!.readPhases(never)).rejects.toMatchObject({ code: 'DEVICE_STALE' });
  });

  it('stamps phase currents with the list that carried them, however long list 1 power goes on after', async () => {
    const { sim, dev, step } = await setUp();
    await step(10_000);
    const listed = await eventually(async () => {
      const r = await dev.phaseMeter!.readPhases(never);
      expect(r.currentsA).toEqual([2.9, 2.9, 2.9]);
      return r.atMs;
    });
    // Only list 1 (power) for 100 s: the currents stay those of the last list 2, with its time, so
    // the main fuse sees them age and stops crediting headroom from them.
    for (let i = 0; i < 40; i++) {
      await w.clock.advance(2_500);
      await sim.publishRaw('', '{"data":{"P":2000}}');
    }
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(never)).toBe(2000));
    expect((await dev.phaseMeter!.readPhases(never)).atMs).toBe(listed);
  });

  it('keeps a phase the meter does not measure in its place, as not measured', async () => {
    const { dev, step } = await setUp({ unmeasuredLines: [2] });
    await step(10_000);
    await eventually(async () => expect((await dev.phaseMeter!.readPhases(never)).currentsA).toEqual([2.9, NaN, 2.9]));
  });

  const list2 = { P: 2000, I1: 2.9, I2: 2.9, I3: 2.9, U1: 230, U2: 230, U3: 230 };
  const rtc = (): number => Math.floor(w.clock.nowMs() / 1000);
  const read = {
    phases: (dev: MqttDevice) => dev.phaseMeter!.readPhases(never),
    power: (dev: MqttDevice) => dev.powerMeter!.readPowerW(never),
    registers: (dev: MqttDevice) => dev.energyMeter!.readStampedEnergyKwh!(never),
  };
  const outOfBounds: [string, () => Record<string, number>, keyof typeof read, () => Record<string, number>][] = [
    ['1e9 A on L1', () => ({ ...list2, I1: 1e9 }), 'phases', () => list2],
    ['-1000 A on L2 (an "empty" line)', () => ({ ...list2, I2: -1000 }), 'phases', () => list2],
    ['400 V on L3', () => ({ ...list2, U3: 400 }), 'phases', () => list2],
    ['1e9 W import', () => ({ P: 1e9 }), 'power', () => ({ P: 2000 })],
    ['negative import power', () => ({ P: -5000 }), 'power', () => ({ P: 2000 })],
    ['a negative register', () => ({ P: 2000, tPI: -1, rtc: rtc() }), 'registers', () => ({ P: 2000, tPI: 12_400, rtc: rtc() })],
    [
      'a meter clock in 2100',
      () => ({ P: 2000, tPI: 12_400, rtc: Date.UTC(2100, 0, 1) / 1000 }),
      'registers',
      () => ({ P: 2000, tPI: 12_400, rtc: rtc() }),
    ],
  ];

  it.each(outOfBounds)('refuses %s: the quantity is missing (DEVICE_BAD_VALUE), never credited', async (_name, badList, quantity, goodList) => {
    const { sim, dev } = await setUp();
    await eventually(async () => {
      await sim.publishRaw('', JSON.stringify({ data: goodList() }));
      await read[quantity](dev);
    });
    await sim.publishRaw('', JSON.stringify({ data: badList() }));
    await eventually(async () => expect(read[quantity](dev)).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' }));
    // A good list makes it usable again.
    await sim.publishRaw('', JSON.stringify({ data: goodList() }));
    await eventually(async () => read[quantity](dev));
  });

  it('a meter flapping between good and out-of-bounds lists logs a handful of warnings', async () => {
    const { sim, dev, lines } = await setUp();
    for (let i = 0; i < 40; i++) {
      await sim.publishRaw('', JSON.stringify({ data: i % 2 === 0 ? { ...list2, I1: -1000 } : list2 }));
    }
    await eventually(async () => expect(await read.phases(dev)).toMatchObject({ currentsA: [2.9, 2.9, 2.9] }));
    expect(lines.filter((l) => l['code'] === 'DEVICE_BAD_VALUE').length).toBeGreaterThan(0);
    expect(lines.filter((l) => l['code'] === 'DEVICE_BAD_VALUE').length).toBeLessThanOrEqual(5);
  });
});
