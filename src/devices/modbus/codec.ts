/**
 * Pure conversion between Modbus register words (16-bit, as they travel on the wire) and numbers.
 *
 * Canonical order is "big": the high word first, and within a word the high byte first
 * (Eastron's "ABCD"). `wordOrder: 'little'` swaps the words (Carlo Gavazzi's "CDAB"),
 * `byteOrder: 'little'` swaps the bytes inside each word ("BADC"); both give "DCBA".
 */
import { WattshiftError } from '../../errors.js';

export const registerTypes = ['int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64', 'float32', 'float64'] as const;
export type RegisterType = (typeof registerTypes)[number];
export type Endianness = 'big' | 'little';

export interface RegisterFormat {
  type: RegisterType;
  /** Order of the 16-bit words; 'big' = high word first. Default 'big'. */
  wordOrder?: Endianness;
  /** Order of the bytes inside each word; 'big' = high byte first (the Modbus norm). Default 'big'. */
  byteOrder?: Endianness;
}

export interface ScaledFormat extends RegisterFormat {
  /** engineering value = raw · scale + offset. Default 1. */
  scale?: number;
  /** Default 0. */
  offset?: number;
}

const wordCounts: Record<RegisterType, number> = {
  int16: 1,
  uint16: 1,
  int32: 2,
  uint32: 2,
  int64: 4,
  uint64: 4,
  float32: 2,
  float64: 4,
};

/** How many 16-bit registers a value of this type occupies. */
export function registerCount(type: RegisterType): number {
  return wordCounts[type];
}

function badValue(message: string, details?: Record<string, unknown>): WattshiftError {
  return new WattshiftError('DEVICE_BAD_VALUE', message, { details });
}

/** Words in wire order → a buffer in canonical big-endian order. */
function toCanonical(words: readonly number[], fmt: RegisterFormat): Buffer {
  const n = registerCount(fmt.type);
  if (words.length !== n) throw badValue(`expected ${n} registers for ${fmt.type}, got ${words.length}`);
  const ordered = fmt.wordOrder === 'little' ? [...words].reverse() : words;
  const buf = Buffer.alloc(n * 2);
  ordered.forEach((w, i) => {
    if (!Number.isInteger(w) || w < 0 || w > 0xffff) throw badValue(`register word out of range: ${w}`);
    const v = fmt.byteOrder === 'little' ? ((w & 0xff) << 8) | (w >> 8) : w;
    buf.writeUInt16BE(v, i * 2);
  });
  return buf;
}

/** Canonical big-endian buffer → words in wire order. */
function fromCanonical(buf: Buffer, fmt: RegisterFormat): number[] {
  const words: number[] = [];
  for (let i = 0; i < buf.length; i += 2) {
    const w = buf.readUInt16BE(i);
    words.push(fmt.byteOrder === 'little' ? ((w & 0xff) << 8) | (w >> 8) : w);
  }
  return fmt.wordOrder === 'little' ? words.reverse() : words;
}

/**
 * Decodes the raw (unscaled) value. 64-bit integers become the nearest double (exact below 2^53).
 * NaN and ±Infinity are rejected with DEVICE_BAD_VALUE: a meter never means them as a reading.
 */
export function decodeRaw(words: readonly number[], fmt: RegisterFormat): number {
  const buf = toCanonical(words, fmt);
  let value: number;
  switch (fmt.type) {
    case 'int16':
      value = buf.readInt16BE(0);
      break;
    case 'uint16':
      value = buf.readUInt16BE(0);
      break;
    case 'int32':
      value = buf.readInt32BE(0);
      break;
    case 'uint32':
      value = buf.readUInt32BE(0);
      break;
    case 'int64':
      value = Number(buf.readBigInt64BE(0));
      break;
    case 'uint64':
      value = Number(buf.readBigUInt64BE(0));
      break;
    case 'float32':
      value = buf.readFloatBE(0);
      break;
    case 'float64':
      value = buf.readDoubleBE(0);
      break;
  }
  if (!Number.isFinite(value)) throw badValue(`${fmt.type} register holds ${value}`, { words: [...words] });
  return value;
}

/** raw · scale + offset, rejecting non-finite results. */
export function decodeScaled(words: readonly number[], fmt: ScaledFormat): number {
  const value = decodeRaw(words, fmt) * (fmt.scale ?? 1) + (fmt.offset ?? 0);
  if (!Number.isFinite(value)) throw badValue(`scaled value is ${value}`);
  return value;
}

const intRanges: Partial<Record<RegisterType, readonly [bigint, bigint]>> = {
  int16: [-(2n ** 15n), 2n ** 15n - 1n],
  uint16: [0n, 2n ** 16n - 1n],
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
};

/**
 * Encodes a raw value into words in wire order. Integers must be integral and in range; floats
 * must be finite (float32 rounds to the nearest representable value).
 */
export function encodeRaw(value: number, fmt: RegisterFormat): number[] {
  if (!Number.isFinite(value)) throw badValue(`cannot encode ${value}`);
  const buf = Buffer.alloc(registerCount(fmt.type) * 2);
  const range = intRanges[fmt.type];
  if (range) {
    if (!Number.isInteger(value)) throw badValue(`${fmt.type} needs an integer, got ${value}`);
    const big = BigInt(value);
    if (big < range[0] || big > range[1]) throw badValue(`${value} does not fit ${fmt.type}`);
  }
  switch (fmt.type) {
    case 'int16':
      buf.writeInt16BE(value, 0);
      break;
    case 'uint16':
      buf.writeUInt16BE(value, 0);
      break;
    case 'int32':
      buf.writeInt32BE(value, 0);
      break;
    case 'uint32':
      buf.writeUInt32BE(value, 0);
      break;
    case 'int64':
      buf.writeBigInt64BE(BigInt(value), 0);
      break;
    case 'uint64':
      buf.writeBigUInt64BE(BigInt(value), 0);
      break;
    case 'float32': {
      if (Math.abs(value) > 3.4028234663852886e38) throw badValue(`${value} does not fit float32`);
      buf.writeFloatBE(value, 0);
      break;
    }
    case 'float64':
      buf.writeDoubleBE(value, 0);
      break;
  }
  return fromCanonical(buf, fmt);
}

/**
 * Encodes an engineering value: raw = (value − offset) / scale, rounded to the nearest integer
 * for integer types.
 */
export function encodeScaled(value: number, fmt: ScaledFormat): number[] {
  let raw = (value - (fmt.offset ?? 0)) / (fmt.scale ?? 1);
  if (!fmt.type.startsWith('float')) raw = Math.round(raw);
  return encodeRaw(raw, fmt);
}
