import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  decodeRaw,
  decodeScaled,
  encodeRaw,
  encodeScaled,
  registerCount,
  registerTypes,
  type Endianness,
  type RegisterFormat,
  type RegisterType,
} from './codec.js';
import { isWattshiftError } from '../../errors.js';

function expectBadValue(fn: () => unknown): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(isWattshiftError(caught, 'DEVICE_BAD_VALUE')).toBe(true);
}

describe('decodeRaw: known wire examples', () => {
  const table: [string, number[], RegisterFormat, number][] = [
    ['int16 positive', [0x0102], { type: 'int16' }, 258],
    ['int16 negative', [0xffff], { type: 'int16' }, -1],
    ['int16 min', [0x8000], { type: 'int16' }, -32768],
    ['uint16 max', [0xffff], { type: 'uint16' }, 65535],
    ['uint16 byte-swapped', [0x0201], { type: 'uint16', byteOrder: 'little' }, 258],
    ['int32 ABCD', [0xfffe, 0x7960], { type: 'int32' }, -100000],
    ['int32 CDAB (Carlo Gavazzi)', [0x7960, 0xfffe], { type: 'int32', wordOrder: 'little' }, -100000],
    ['uint32 ABCD', [0x0001, 0x0000], { type: 'uint32' }, 65536],
    ['uint32 BADC', [0x0100, 0x0000], { type: 'uint32', byteOrder: 'little' }, 65536],
    ['uint32 DCBA', [0x0000, 0x0100], { type: 'uint32', wordOrder: 'little', byteOrder: 'little' }, 65536],
    ['uint32 max', [0xffff, 0xffff], { type: 'uint32' }, 4294967295],
    ['float32 1.0 (Eastron)', [0x3f80, 0x0000], { type: 'float32' }, 1],
    ['float32 230.5', [0x4366, 0x8000], { type: 'float32' }, 230.5],
    ['float32 -2.5 CDAB', [0x0000, 0xc020], { type: 'float32', wordOrder: 'little' }, -2.5],
    ['uint64 ABB energy 0.01 kWh', [0x0000, 0x0000, 0x0001, 0x86a0], { type: 'uint64' }, 100000],
    ['int64 -1', [0xffff, 0xffff, 0xffff, 0xffff], { type: 'int64' }, -1],
    ['int64 little word order', [0x86a0, 0x0001, 0x0000, 0x0000], { type: 'int64', wordOrder: 'little' }, 100000],
    ['float64 1.5 (Alfen energy)', [0x3ff8, 0, 0, 0], { type: 'float64' }, 1.5],
  ];
  it.each(table)('%s', (_name, words, fmt, expected) => {
    expect(decodeRaw(words, fmt)).toBe(expected);
    expect(encodeRaw(expected, fmt)).toEqual(words);
  });
});

describe('decodeRaw: rejects', () => {
  it.each([
    ['float32 NaN', [0x7fc0, 0x0000], 'float32'],
    ['float32 +Inf', [0x7f80, 0x0000], 'float32'],
    ['float32 -Inf', [0xff80, 0x0000], 'float32'],
    ['float64 NaN', [0x7ff8, 0, 0, 0], 'float64'],
  ] as const)('%s', (_name, words, type) => {
    expectBadValue(() => decodeRaw(words, { type }));
  });

  it('rejects a wrong word count and out-of-range words', () => {
    expectBadValue(() => decodeRaw([1], { type: 'float32' }));
    expectBadValue(() => decodeRaw([1, 2, 3], { type: 'uint32' }));
    expectBadValue(() => decodeRaw([0x10000], { type: 'uint16' }));
    expectBadValue(() => decodeRaw([-1], { type: 'uint16' }));
    expectBadValue(() => decodeRaw([1.5], { type: 'uint16' }));
  });

  it('rejects values that do not fit on encode', () => {
    expectBadValue(() => encodeRaw(65536, { type: 'uint16' }));
    expectBadValue(() => encodeRaw(-1, { type: 'uint32' }));
    expectBadValue(() => encodeRaw(32768, { type: 'int16' }));
    expectBadValue(() => encodeRaw(1.5, { type: 'int32' }));
    expectBadValue(() => encodeRaw(Number.NaN, { type: 'float32' }));
    expectBadValue(() => encodeRaw(1e39, { type: 'float32' }));
  });
});

describe('scale and offset', () => {
  it('applies scale and offset on decode and inverts them on encode', () => {
    // Carlo Gavazzi EM24 import energy: INT32 low word first, /10 → kWh
    const fmt = { type: 'int32', wordOrder: 'little', scale: 0.1 } as const;
    expect(decodeScaled([12345, 0], fmt)).toBeCloseTo(1234.5, 9);
    expect(encodeScaled(1234.5, fmt)).toEqual([12345, 0]);
    // ABB Terra current limit: mA in uint32
    expect(encodeScaled(16, { type: 'uint32', scale: 0.001 })).toEqual([0, 16000]);
    // temperature with offset: raw 0 = -40 °C, 0.1 K steps
    expect(decodeScaled([1000], { type: 'uint16', scale: 0.1, offset: -40 })).toBeCloseTo(60, 9);
    expect(encodeScaled(60, { type: 'uint16', scale: 0.1, offset: -40 })).toEqual([1000]);
  });

  it('rounds integer encodings to the nearest step', () => {
    expect(encodeScaled(6.0004, { type: 'uint16', scale: 0.01 })).toEqual([600]);
    expect(encodeScaled(6.006, { type: 'uint16', scale: 0.01 })).toEqual([601]);
  });

  it('counts registers', () => {
    expect(registerTypes.map(registerCount)).toEqual([1, 1, 2, 2, 4, 4, 2, 4]);
  });
});

describe('round trips (property)', () => {
  const orders: Endianness[] = ['big', 'little'];
  const arbFormat = (type: RegisterType) =>
    fc.record({ wordOrder: fc.constantFrom(...orders), byteOrder: fc.constantFrom(...orders) }).map((o) => ({ type, ...o }));
  const intArb: Record<string, fc.Arbitrary<number>> = {
    int16: fc.integer({ min: -32768, max: 32767 }),
    uint16: fc.integer({ min: 0, max: 65535 }),
    int32: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
    uint32: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
    int64: fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
    uint64: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  };

  it.each(Object.keys(intArb))('%s value → words → value is exact', (type) => {
    fc.assert(
      fc.property(intArb[type]!, arbFormat(type as RegisterType), (v, fmt) => {
        const words = encodeRaw(v, fmt);
        expect(words).toHaveLength(registerCount(fmt.type));
        expect(decodeRaw(words, fmt)).toBe(v);
      }),
      { numRuns: 300 },
    );
  });

  it('float32 value → words → value equals Math.fround(value)', () => {
    fc.assert(
      fc.property(fc.float({ noNaN: true, noDefaultInfinity: true }), arbFormat('float32'), (v, fmt) => {
        expect(Object.is(decodeRaw(encodeRaw(v, fmt), fmt), Math.fround(v))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('float64 value → words → value is exact', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), arbFormat('float64'), (v, fmt) => {
        expect(Object.is(decodeRaw(encodeRaw(v, fmt), fmt), v)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('any words → value → same words, for every integer type and order', () => {
    const types: RegisterType[] = ['int16', 'uint16', 'int32', 'uint32'];
    fc.assert(
      fc.property(
        fc.constantFrom(...types),
        fc.array(fc.integer({ min: 0, max: 65535 }), { minLength: 2, maxLength: 2 }),
        fc.constantFrom(...orders),
        fc.constantFrom(...orders),
        (type, pair, wordOrder, byteOrder) => {
          const fmt = { type, wordOrder, byteOrder };
          const words = pair.slice(0, registerCount(type));
          expect(encodeRaw(decodeRaw(words, fmt), fmt)).toEqual(words);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('word and byte swaps are the documented permutations', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (v) => {
        const abcd = encodeRaw(v, { type: 'uint32' });
        const cdab = encodeRaw(v, { type: 'uint32', wordOrder: 'little' });
        const badc = encodeRaw(v, { type: 'uint32', byteOrder: 'little' });
        const swap = (w: number) => ((w & 0xff) << 8) | (w >> 8);
        expect(cdab).toEqual([abcd[1], abcd[0]]);
        expect(badc).toEqual([swap(abcd[0]!), swap(abcd[1]!)]);
      }),
    );
  });
});
