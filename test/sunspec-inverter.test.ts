/**
 * The SunSpec reader against the simulated inverter over real Modbus TCP. The register map is
 * checked apart from the product: the test reads the raw registers with modbus-serial's own client
 * and decodes them by the SunSpec model definitions (model_1.json, model_103.json) by hand.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { createModbusBus } from '../src/devices/modbus/bus.js';
import { createSunSpecInverter } from '../src/devices/modbus/sunspec.js';
import { startSunSpecInverter, type SunSpecInverterOptions } from '../src/sandbox/devices/sunspec-inverter-sim.js';

/** Midsummer in Oslo: the sun is up from about 02:00 to 20:30 UTC. */
const MIDNIGHT = Date.UTC(2026, 5, 21);
const HOUR = 3_600_000;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
});

async function inverterWithReader(clock: ManualClock, options: SunSpecInverterOptions = {}) {
  const sim = await startSunSpecInverter({ clock, seed: 7, ...options });
  cleanups.push(() => sim.close());
  const bus = createModbusBus('pv', { type: 'tcp', host: sim.host, port: sim.port, timeoutMs: 1000 }, { clock, logger: silentLogger() });
  cleanups.push(() => bus.close());
  return { sim, reader: createSunSpecInverter(bus, 1) };
}

/** modbus-serial's client on its own connection: the registers as they are on the wire. */
async function rawRegisters(port: number, address: number, count: number): Promise<number[]> {
  const Client = (await import('modbus-serial')).default.default;
  const client = new Client();
  await client.connectTCP('127.0.0.1', { port });
  client.setID(1);
  try {
    return (await client.readHoldingRegisters(address, count)).data;
  } finally {
    await new Promise<void>((resolve) => client.close(() => resolve()));
  }
}

const s16 = (w: number): number => (w >= 0x8000 ? w - 0x10000 : w);
const ascii = (words: number[]): string =>
  words
    .map((w) => String.fromCharCode(w >> 8, w & 0xff))
    .join('')
    .split('\u0000')[0]!;

describe('SunSpec inverter simulator and reader', () => {
  it('serves the map as the model definitions lay it out (decoded apart from the product)', async () => {
    const clock = new ManualClock(MIDNIGHT + 11 * HOUR);
    const { sim } = await inverterWithReader(clock, { serial: 'PV-42', peakW: 8000 });
    const words = await rawRegisters(sim.port, 40000, 124);
    expect(ascii(words.slice(0, 2))).toBe('SunS');
    expect(words.slice(2, 4)).toEqual([1, 66]);
    expect(ascii(words.slice(4, 20))).toBe('wattshift');
    expect(ascii(words.slice(52, 68))).toBe('PV-42');
    const inv = 70;
    expect(words.slice(inv, inv + 2)).toEqual([103, 50]);
    const w = s16(words[inv + 14]!) * 10 ** s16(words[inv + 15]!);
    const wh = (words[inv + 24]! * 65536 + words[inv + 25]!) * 10 ** s16(words[inv + 26]!);
    const truth = sim.state();
    expect(words[inv + 38]).toBe(4); // MPPT
    expect(w).toBeCloseTo(truth.powerW, -1);
    expect(wh).toBe(truth.counterWh);
    // Points the simulator does not have read as not implemented.
    expect(words[inv + 34]).toBe(0x8000); // TmpSnk (int16)
    expect(words[inv + 19]).toBe(0x8000); // VA_SF (sunssf)
    expect(words.slice(inv + 52, inv + 54)).toEqual([0xffff, 0]);
  });

  it.each([40000, 0, 50000] as const)('finds the map at %i and reads W and WH with their own scale factors', async (baseAddress) => {
    const clock = new ManualClock(MIDNIGHT + 12 * HOUR);
    const { sim, reader } = await inverterWithReader(clock, { baseAddress, whScaleFactor: 1, initialWh: 12_345_670 });
    const r = await reader.read();
    expect(reader.info()).toMatchObject({ baseAddress, modelId: 103, modelAddress: baseAddress + 70, manufacturer: 'wattshift' });
    const truth = sim.state();
    expect(r.state).toBe(4);
    expect(r.powerW).toBeGreaterThan(3000); // W_SF 0 here, WH_SF 1
    expect(r.powerW).toBeCloseTo(truth.powerW, -1);
    expect(r.energyKwh).toBeCloseTo(truth.counterWh / 1000, 6);
    // Towards evening the power drops below 3 kW and W_SF becomes −1: the reader follows it.
    clock.set(MIDNIGHT + 18 * HOUR);
    const evening = await reader.read();
    expect(evening.powerW).toBeLessThan(3000);
    expect(evening.powerW).toBeCloseTo(sim.state().powerW, 0);
  });

  it('reads no production at night though the registers still show the last evening value', async () => {
    const clock = new ManualClock(MIDNIGHT + 19.5 * HOUR);
    const { sim, reader } = await inverterWithReader(clock, { model: 101, cloudiness: 0 });
    const dusk = await reader.read();
    expect(dusk.powerW).toBeGreaterThan(0);
    clock.set(MIDNIGHT + 23 * HOUR);
    const night = await reader.read();
    const words = await rawRegisters(sim.port, 40000 + 70, 52);
    expect(words[0]).toBe(101);
    expect(words[38]).toBe(2); // SLEEPING
    expect(s16(words[14]!)).not.toBe(0); // stale: the last value of the evening
    expect(night).toMatchObject({ powerW: 0, state: 2 });
    expect(night.energyKwh).toBeGreaterThanOrEqual(dusk.energyKwh);
    expect(night.energyKwh).toBe(sim.state().counterWh / 1000);
  });

  it('takes a not-implemented W as no production and keeps the counter', async () => {
    const clock = new ManualClock(MIDNIGHT + 12 * HOUR);
    const { sim, reader } = await inverterWithReader(clock);
    sim.setFault('w-not-implemented');
    const r = await reader.read();
    expect(r.powerW).toBe(0);
    expect(r.energyKwh).toBe(sim.state().counterWh / 1000);
  });

  it('reads the float model 113 (float32 values, no scale factors), asleep at night and NaN as not implemented', async () => {
    const clock = new ManualClock(MIDNIGHT + 12 * HOUR);
    const { sim, reader } = await inverterWithReader(clock, { model: 113, initialWh: 987_654 });
    const words = await rawRegisters(sim.port, 40070, 64);
    const f32 = (i: number): number => {
      const b = Buffer.alloc(4);
      b.writeUInt16BE(words[i]!, 0);
      b.writeUInt16BE(words[i + 1]!, 2);
      return b.readFloatBE(0);
    };
    expect(words.slice(0, 2)).toEqual([113, 60]);
    expect(words.slice(62, 64)).toEqual([0xffff, 0]);
    expect(words[48]).toBe(4);
    expect(Number.isNaN(f32(26))).toBe(true); // VA: not implemented
    const r = await reader.read();
    expect(reader.info()).toMatchObject({ modelId: 113, modelAddress: 40070 });
    expect(r.powerW).toBeCloseTo(f32(22), 3);
    expect(r.powerW).toBeCloseTo(sim.state().powerW, 0);
    expect(r.energyKwh).toBeCloseTo(f32(32) / 1000, 9);
    sim.setFault('w-not-implemented');
    expect((await reader.read()).powerW).toBe(0);
    sim.setFault(null);
    clock.set(MIDNIGHT + 23.5 * HOUR);
    expect(await reader.read()).toMatchObject({ powerW: 0, state: 2 });
  });

  it('counts the day’s production: the counter rises by what the curve gives', async () => {
    const clock = new ManualClock(MIDNIGHT);
    const { sim, reader } = await inverterWithReader(clock, { cloudiness: 0 });
    const start = await reader.readEnergyKwh(new AbortController().signal);
    clock.set(MIDNIGHT + 24 * HOUR);
    const end = await reader.readEnergyKwh(new AbortController().signal);
    // A clear midsummer day on a 6 kWp array in Oslo: tens of kWh, and never more than 24 h at peak.
    expect(end - start).toBeGreaterThan(20);
    expect(end - start).toBeLessThan(6 * 24);
    expect(end).toBeCloseTo(sim.state().trueEnergyWh / 1000, 2);
  });
});
