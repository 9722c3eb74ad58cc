import { describe, expect, it } from 'vitest';
import { storable, storableJson } from './pg-text.js';

describe('text PostgreSQL cannot store', () => {
  it('replaces each NUL in strings and keys, and leaves an escaped backslash before "u0000" alone', () => {
    const value = { 'k\u0000': ['a\u0000b\u0000', 'x\\u0000', '\\\u0000'], n: 1 };
    const { value: clean, nul, loneSurrogates } = storable(value);
    expect({ nul, loneSurrogates }).toEqual({ nul: 4, loneSurrogates: 0 });
    expect(clean).toEqual({ 'k\ufffd': ['a\ufffdb\ufffd', 'x\\u0000', '\\\ufffd'], n: 1 });
    expect(storableJson(clean).json).not.toMatch(/(?<!\\)(\\\\)*\\u0000/);
  });

  it('replaces each lone surrogate, high or low, in strings and keys; keeps whole pairs and an escaped backslash before "ud800"', () => {
    const value = { 'k\ud800': ['a\udbffb', '\udc00', 'pair \ud83d\ude00', 'x\\ud800', '\\\udfff', 'backwards \ude00\ud83d'], n: 1 };
    const { value: clean, nul, loneSurrogates } = storable(value);
    expect({ nul, loneSurrogates }).toEqual({ nul: 0, loneSurrogates: 6 });
    expect(clean).toEqual({ 'k\ufffd': ['a\ufffdb', '\ufffd', 'pair \ud83d\ude00', 'x\\ud800', '\\\ufffd', 'backwards \ufffd\ufffd'], n: 1 });
    expect(/\p{Cs}/u.test(storableJson(clean).json)).toBe(false);
  });

  it('returns the value itself when there is nothing to replace', () => {
    const value = { a: 'plain \\u0000 and \\ud800 text', b: '\ud83d\ude00' };
    expect(storable(value)).toEqual({ value, nul: 0, loneSurrogates: 0 });
    expect(storable(value).value).toBe(value);
  });
});
