import { describe, expect, it } from 'vitest';
import { backoffCeilingMs, backoffMs } from './backoff.js';

const steps = { baseMs: 1000, maxMs: 60_000 };

describe('backoff', () => {
  it.each([
    [0, 1000],
    [1, 1000],
    [2, 2000],
    [3, 4000],
    [7, 60_000],
    [1e6, 60_000],
  ])('the ceiling of attempt %d is %d ms: doubling from the base, capped', (attempt, ms) => {
    expect(backoffCeilingMs(attempt, steps)).toBe(ms);
  });

  it.each([
    [0, 2000],
    [0.5, 3000],
    [1, 4000],
  ])('with equal jitter a random draw of %d waits %d ms on the third attempt: half the ceiling fixed, half drawn', (draw, ms) => {
    expect(backoffMs(3, steps, () => draw)).toBe(ms);
  });
});
