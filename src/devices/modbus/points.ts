/**
 * Reading and writing one named point of a profile over a bus, with decoding, bit extraction,
 * scaling and the profile's sane range (out of range → DEVICE_BAD_VALUE).
 */
import { WattshiftError } from '../../errors.js';
import type { ModbusBus } from './bus.js';
import { decodeRaw, encodeScaled, registerCount } from './codec.js';
import type { ModbusProfile, ProfilePoint } from './profile-schema.js';

export type PointValue = number | boolean;

export function getPoint(profile: ModbusProfile, name: string): ProfilePoint {
  const p = profile.points[name];
  if (!p) {
    throw new WattshiftError('DEVICE_PROFILE_INVALID', `profile ${profile.name} has no point "${name}"`, {
      details: { points: Object.keys(profile.points) },
    });
  }
  return p;
}

function isBits(p: ProfilePoint): boolean {
  return p.function === 'coil' || p.function === 'discrete';
}

/** Protocol address of a point on a channel (0-based). */
export function pointAddress(p: ProfilePoint, channel = 0): number {
  if (!Number.isInteger(channel) || channel < 0 || channel >= p.channels) {
    throw new WattshiftError('DEVICE_PROFILE_INVALID', `channel ${channel} out of range (point has ${p.channels})`);
  }
  const stride = p.channelStride ?? (isBits(p) ? 1 : registerCount(p.type ?? 'uint16'));
  return p.address + channel * stride;
}

function checkRange(name: string, p: ProfilePoint, value: number, what: 'read' | 'write'): void {
  if ((p.min !== undefined && value < p.min) || (p.max !== undefined && value > p.max)) {
    throw new WattshiftError('DEVICE_BAD_VALUE', `${name} ${what} ${value}${p.unit ?? ''} outside ${p.min ?? '-∞'}..${p.max ?? '∞'}`, {
      retryable: what === 'read',
      details: { point: name, value },
    });
  }
}

/** Pure: converts the words (or bit) read from a point to its value. */
export function decodePoint(name: string, p: ProfilePoint, words: readonly number[] | boolean): PointValue {
  if (typeof words === 'boolean') return words;
  const fmt = { type: p.type ?? 'uint16', wordOrder: p.wordOrder, byteOrder: p.byteOrder } as const;
  let raw = decodeRaw(words, fmt);
  if (p.bitShift !== undefined || p.bitMask !== undefined) {
    const shifted = BigInt(raw) >> BigInt(p.bitShift ?? 0);
    raw = Number(p.bitMask === undefined ? shifted : shifted & BigInt(p.bitMask));
  }
  if (p.trueValues) return p.trueValues.includes(raw);
  const value = raw * p.scale + p.offset;
  if (!Number.isFinite(value)) throw new WattshiftError('DEVICE_BAD_VALUE', `${name} decoded to ${value}`);
  checkRange(name, p, value, 'read');
  return value;
}

export async function readPoint(
  bus: ModbusBus,
  unitId: number,
  profile: ModbusProfile,
  name: string,
  channel: number,
  signal?: AbortSignal,
): Promise<PointValue> {
  const p = getPoint(profile, name);
  if (p.access === 'write') throw new WattshiftError('DEVICE_PROFILE_INVALID', `point ${name} of ${profile.name} is write-only`);
  const address = pointAddress(p, channel);
  if (isBits(p)) {
    const [bit] = await bus.readBits(unitId, p.function as 'coil' | 'discrete', address, 1, signal);
    return decodePoint(name, p, bit === true);
  }
  const words = await bus.readRegisters(unitId, p.function as 'holding' | 'input', address, registerCount(p.type ?? 'uint16'), signal);
  return decodePoint(name, p, words);
}

export async function readNumber(
  bus: ModbusBus,
  unitId: number,
  profile: ModbusProfile,
  name: string,
  channel: number,
  signal?: AbortSignal,
): Promise<number> {
  const v = await readPoint(bus, unitId, profile, name, channel, signal);
  return typeof v === 'boolean' ? Number(v) : v;
}

export async function readBoolean(
  bus: ModbusBus,
  unitId: number,
  profile: ModbusProfile,
  name: string,
  channel: number,
  signal?: AbortSignal,
): Promise<boolean> {
  const v = await readPoint(bus, unitId, profile, name, channel, signal);
  return typeof v === 'boolean' ? v : v !== 0;
}

export async function writePoint(
  bus: ModbusBus,
  unitId: number,
  profile: ModbusProfile,
  name: string,
  value: PointValue,
  channel: number,
  signal?: AbortSignal,
): Promise<void> {
  const p = getPoint(profile, name);
  const writable =
    p.access === 'write' || p.access === 'readWrite' || (p.access === undefined && (p.function === 'coil' || p.function === 'holding'));
  if (!writable || p.function === 'input' || p.function === 'discrete') {
    throw new WattshiftError('DEVICE_PROFILE_INVALID', `point ${name} of ${profile.name} is not writable`);
  }
  const address = pointAddress(p, channel);
  if (p.function === 'coil') {
    await bus.writeCoil(unitId, address, value === true || value === 1, signal);
    return;
  }
  const n = typeof value === 'boolean' ? Number(value) : value;
  if (!Number.isFinite(n)) throw new WattshiftError('DEVICE_BAD_VALUE', `${name}: cannot write ${n}`, { retryable: false });
  checkRange(name, p, n, 'write');
  const words = encodeScaled(n, { type: p.type ?? 'uint16', wordOrder: p.wordOrder, byteOrder: p.byteOrder, scale: p.scale, offset: p.offset });
  const single = (p.writeWith ?? (words.length === 1 ? 'single' : 'multiple')) === 'single';
  if (single && words.length === 1) await bus.writeRegister(unitId, address, words[0]!, signal);
  else await bus.writeRegisters(unitId, address, words, signal);
}
