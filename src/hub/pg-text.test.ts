import { describe, expect, it } from 'vitest';
import { jsonWithoutNul, withoutNul } from './pg-text.js';

describe('NUL characters for PostgreSQL', () => {
  it('replaces each NUL in strings and keys, and leaves an escaped backslash before "u0000" alone', () => {
    const value = { 'k\u0000': ['a\u0000b\u0000', 'x\\u0000', '\\\u0000'], n: 1 };
    const { value: clean, replaced } = withoutNul(value);
    expect(replaced).toBe(4);
    expect(clean).toEqual({ 'k\ufffd': ['a\ufffdb\ufffd', 'x\\u0000', '\\\ufffd'], n: 1 });
    expect(jsonWithoutNul(clean).json).not.toMatch(/(?<!\\)(\\\\)*\\u0000/);
  });

  it('returns the value itself when there is nothing to replace', () => {
    const value = { a: 'plain \\u0000 text' };
    expect(withoutNul(value)).toEqual({ value, replaced: 0 });
    expect(withoutNul(value).value).toBe(value);
  });
});
