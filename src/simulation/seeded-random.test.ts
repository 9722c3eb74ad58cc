import { afterEach, describe, expect, it } from 'vitest';
import { seedMathRandom } from './seeded-random.js';

const draws = (n: number): number[] => Array.from({ length: n }, () => Math.random());

const original = Math.random;
afterEach(() => {
  Math.random = original;
});

describe('seedMathRandom', () => {
  it('draws the same sequence from the same seed, and another from another seed', () => {
    const restoreFirst = seedMathRandom(42);
    const first = draws(8);
    restoreFirst();
    const restoreSecond = seedMathRandom(42);
    const second = draws(8);
    restoreSecond();
    const restoreOther = seedMathRandom(43);
    const other = draws(8);
    restoreOther();
    expect(second).toEqual(first);
    expect(other).not.toEqual(first);
    for (const x of [...first, ...other]) {
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
    }
  });

  it('puts the original Math.random back', () => {
    const restore = seedMathRandom(7);
    expect(Math.random).not.toBe(original);
    restore();
    expect(Math.random).toBe(original);
  });
});
