/**
 * A PV inverter read over SunSpec (the SunSpec Information Model, https://github.com/sunspec/models:
 * `json/model_1.json` Common, `json/model_101.json`..`model_103.json` Inverter,
 * `json/model_111.json`..`model_113.json` Inverter FLOAT): the map starts with "SunS" at holding
 * register 40000 (some devices use 0 or 50000), and each model after it is its ID and length L
 * followed by L registers, until the end model ID 0xFFFF. The reader walks that chain once, finds
 * the inverter model (101 single-phase, 102 split-phase, 103 three-phase: one layout, L 50, values
 * with scale factors; or 111..113: L 60, float32 values) and then reads that whole block in one
 * request, so every value comes with the scale factor written beside it at the same instant (W_SF
 * may change with the power).
 *
 * Production, never consumption: the power is the inverter's AC output (W) and the energy its
 * lifetime counter (WH, acc32 or float32). Not-implemented values (int16 and sunssf 0x8000, float32
 * NaN) and an inverter
 * that is off, sleeping or on standby mean no production: such an inverter stops updating its
 * registers at night, and the W it shows then is the last value of the evening. A counter whose
 * scale factor is not implemented is no reading (DEVICE_BAD_VALUE).
 */
import { z } from 'zod';
import { WattshiftError, isWattshiftError } from '../../errors.js';
import { metered } from '../../core/metered-bounds.js';
import type { EnergyMeter, PowerMeter } from '../../ports.js';
import type { ModbusBus } from './bus.js';
import { decodeRaw } from './codec.js';

export const sunspecBaseAddresses = [40000, 0, 50000] as const;
const marker = [0x5375, 0x6e53];
const endModelId = 0xffff;
export const sunspecInverterModels = [101, 102, 103, 111, 112, 113] as const;
/** Enough for any real map (a walk that does not end is a wrong map, not a long one). */
const maxModels = 64;

/** Each inverter layout: its length L and its points' offsets from the ID register (the model definitions, points in order). */
const layouts = {
  scaled: { length: 50, W: 14, W_SF: 15, WH: 24, WH_SF: 26, St: 38 },
  float: { length: 60, W: 22, WH: 32, St: 48 },
} as const;
const layoutOf = (modelId: number) => (modelId >= 111 ? layouts.float : layouts.scaled);
/** Operating states (St, enum16) in which the inverter produces nothing. */
const idleStates = new Set([1 /* OFF */, 2 /* SLEEPING */, 8 /* STANDBY */]);
const notImplementedInt16 = 0x8000;

/** The schema of an answer of `length` registers, built once per length (a read parses one every tick). */
const wordSchemas = new Map<number, z.ZodType<number[]>>();
/** `length` register values, or DEVICE_BAD_VALUE (an answer that does not fit the map). */
function registerWords(length: number): { parse(value: unknown): number[] } {
  let schema = wordSchemas.get(length);
  if (!schema) wordSchemas.set(length, (schema = z.array(z.number().int().min(0).max(0xffff)).length(length)));
  const known = schema;
  return {
    parse: (value) => {
      const r = known.safeParse(value);
      if (!r.success) throw new WattshiftError('DEVICE_BAD_VALUE', `SunSpec: expected ${length} register values, got ${JSON.stringify(value)}`);
      return r.data;
    },
  };
}
/** A scale factor: int16 −10..10 (the model definitions' sunssf). */
const scaleFactor = z.number().int().min(-10).max(10);

export interface SunSpecInverterInfo {
  baseAddress: number;
  /** Register of the inverter model's ID. */
  modelAddress: number;
  modelId: (typeof sunspecInverterModels)[number];
  manufacturer: string;
  model: string;
  serial: string;
}

export interface SunSpecReading {
  /** Production now, W (0 when idle or not implemented). */
  powerW: number;
  /** Lifetime production, kWh. */
  energyKwh: number;
  /** St, the operating state (0xFFFF: not implemented). */
  state: number;
}

const int16 = (w: number): number => decodeRaw([w], { type: 'int16' });
const text = (words: readonly number[]): string =>
  Buffer.from(words.flatMap((w) => [w >> 8, w & 0xff]))
    .toString('latin1')
    .replace(/\0+$/, '')
    .trim();

/** Does the map start here? A missing register (exception 2) is no. */
async function hasMarker(bus: ModbusBus, unitId: number, address: number, signal?: AbortSignal): Promise<boolean> {
  try {
    const words = registerWords(2).parse(await bus.readRegisters(unitId, 'holding', address, 2, signal));
    return words[0] === marker[0] && words[1] === marker[1];
  } catch (err) {
    if (isWattshiftError(err, 'DEVICE_REJECTED')) return false;
    throw err;
  }
}

/** Finds the SunSpec map and its inverter model; DEVICE_PROFILE_INVALID when there is none. */
export async function discoverSunSpec(
  bus: ModbusBus,
  unitId: number,
  options: { baseAddress?: number; signal?: AbortSignal } = {},
): Promise<SunSpecInverterInfo> {
  const bases = options.baseAddress !== undefined ? [options.baseAddress] : sunspecBaseAddresses;
  let base: number | undefined;
  for (const candidate of bases) {
    if (await hasMarker(bus, unitId, candidate, options.signal)) {
      base = candidate;
      break;
    }
  }
  if (base === undefined) {
    throw new WattshiftError('DEVICE_PROFILE_INVALID', `unit ${unitId}: no SunSpec map ("SunS") at ${bases.join(', ')}`);
  }
  const found: Partial<SunSpecInverterInfo> = { baseAddress: base, manufacturer: '', model: '', serial: '' };
  let address = base + 2;
  for (let i = 0; i < maxModels && address + 2 <= 0x10000; i++) {
    const [id, length] = registerWords(2).parse(await bus.readRegisters(unitId, 'holding', address, 2, options.signal));
    if (id === endModelId) break;
    if (id === 1 && length! >= 64) {
      const body = registerWords(64).parse(await bus.readRegisters(unitId, 'holding', address + 2, 64, options.signal));
      found.manufacturer = text(body.slice(0, 16));
      found.model = text(body.slice(16, 32));
      found.serial = text(body.slice(48, 64));
    }
    if ((sunspecInverterModels as readonly number[]).includes(id!) && found.modelAddress === undefined) {
      const expected = layoutOf(id!).length;
      if (length !== expected) {
        throw new WattshiftError('DEVICE_PROFILE_INVALID', `unit ${unitId}: SunSpec model ${id} has length ${length}, not ${expected}`);
      }
      found.modelAddress = address;
      found.modelId = id as SunSpecInverterInfo['modelId'];
    }
    address += 2 + length!;
  }
  if (found.modelAddress === undefined) {
    throw new WattshiftError('DEVICE_PROFILE_INVALID', `unit ${unitId}: the SunSpec map at ${base} has no inverter model (101..103 or 111..113)`);
  }
  return found as SunSpecInverterInfo;
}

/** A float32 from two registers, high word first; NaN is not implemented. */
function float32(hi: number, lo: number): number {
  const b = Buffer.alloc(4);
  b.writeUInt16BE(hi, 0);
  b.writeUInt16BE(lo, 2);
  return b.readFloatBE(0);
}

/** Decodes one inverter block (ID, L and the registers after them). */
export function decodeInverterBlock(words: readonly number[]): SunSpecReading {
  const modelId = words[0] ?? 0;
  if (!(sunspecInverterModels as readonly number[]).includes(modelId))
    throw new WattshiftError('DEVICE_BAD_VALUE', `SunSpec: model ${modelId} is not an inverter model`);
  return modelId >= 111 ? decodeFloatBlock(words) : decodeScaledBlock(words);
}

function decodeFloatBlock(words: readonly number[]): SunSpecReading {
  const at = layouts.float;
  const block = registerWords(2 + at.length).parse(words);
  const state = block[at.St]!;
  const w = float32(block[at.W]!, block[at.W + 1]!);
  // An inverter's own draw at dusk shows as a few negative watts: production is never below zero.
  const powerW = idleStates.has(state) || Number.isNaN(w) ? 0 : Math.max(0, metered('powerW', w, 'SunSpec W'));
  const wh = float32(block[at.WH]!, block[at.WH + 1]!);
  if (Number.isNaN(wh)) throw new WattshiftError('DEVICE_BAD_VALUE', 'SunSpec WH is not implemented: the energy counter cannot be read');
  return { powerW, energyKwh: metered('energyKwh', wh / 1000, 'SunSpec WH'), state };
}

function decodeScaledBlock(words: readonly number[]): SunSpecReading {
  const at = layouts.scaled;
  const block = registerWords(2 + at.length).parse(words);
  const state = block[at.St]!;
  const wRaw = block[at.W]!;
  const wSfRaw = block[at.W_SF]!;
  let powerW = 0;
  if (!idleStates.has(state) && wRaw !== notImplementedInt16 && wSfRaw !== notImplementedInt16) {
    const sf = scaleFactor.safeParse(int16(wSfRaw));
    if (!sf.success) throw new WattshiftError('DEVICE_BAD_VALUE', `SunSpec W_SF ${int16(wSfRaw)} is not a scale factor (−10..10)`);
    powerW = Math.max(0, metered('powerW', int16(wRaw) * 10 ** sf.data, 'SunSpec W'));
  }
  const whSfRaw = block[at.WH_SF]!;
  if (whSfRaw === notImplementedInt16)
    throw new WattshiftError('DEVICE_BAD_VALUE', 'SunSpec WH_SF is not implemented: the energy counter cannot be read');
  const whSf = scaleFactor.safeParse(int16(whSfRaw));
  if (!whSf.success) throw new WattshiftError('DEVICE_BAD_VALUE', `SunSpec WH_SF ${int16(whSfRaw)} is not a scale factor (−10..10)`);
  // acc32: an unsigned 32-bit counter, high word first.
  const wh = decodeRaw([block[at.WH]!, block[at.WH + 1]!], { type: 'uint32' }) * 10 ** whSf.data;
  return { powerW, energyKwh: metered('energyKwh', wh / 1000, 'SunSpec WH'), state };
}

export interface SunSpecInverter extends EnergyMeter, PowerMeter {
  /** The whole reading; concurrent callers share one request. */
  read(signal?: AbortSignal): Promise<SunSpecReading>;
  /** What the walk found (after the first read). */
  info(): SunSpecInverterInfo | undefined;
}

/**
 * The inverter's meters. The map is walked on the first read and again after a read that fails
 * with an answer that no longer fits it (a firmware update moves models).
 */
export function createSunSpecInverter(bus: ModbusBus, unitId: number, options: { baseAddress?: number } = {}): SunSpecInverter {
  let info: SunSpecInverterInfo | undefined;
  let inFlight: Promise<SunSpecReading> | null = null;
  const readOnce = async (signal?: AbortSignal): Promise<SunSpecReading> => {
    info ??= await discoverSunSpec(bus, unitId, { ...options, ...(signal ? { signal } : {}) });
    const words = await bus.readRegisters(unitId, 'holding', info.modelAddress, 2 + layoutOf(info.modelId).length, signal);
    if (words[0] !== info.modelId) {
      const was = info.modelId;
      info = undefined;
      throw new WattshiftError('DEVICE_BAD_VALUE', `unit ${unitId}: SunSpec model ${was} is no longer where it was; the map is walked again`);
    }
    return decodeInverterBlock(words);
  };
  const read = (signal?: AbortSignal): Promise<SunSpecReading> => {
    inFlight ??= readOnce(signal).finally(() => {
      inFlight = null;
    });
    return inFlight;
  };
  return {
    read,
    info: () => info,
    readPowerW: async (signal) => (await read(signal)).powerW,
    readEnergyKwh: async (signal) => (await read(signal)).energyKwh,
  };
}
