import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DiscreteWorkspace, solveDiscrete, type DiscreteProblem } from './discrete-dp.js';

/** A small on/off storage problem (tank-like), with anti-cycling and a "reach once" rule. */
const problemArb = fc
  .record({
    prices: fc.array(fc.double({ min: -0.2, max: 0.6, noNaN: true }), { minLength: 4, maxLength: 40 }),
    e0: fc.double({ min: 0, max: 6, noNaN: true }),
    level: fc.double({ min: 0.3, max: 2, noNaN: true }),
    minOn: fc.integer({ min: 1, max: 3 }),
    maxStarts: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
    reachAt: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
  })
  .map(({ prices, e0, level, minOn, maxStarts, reachAt }): DiscreteProblem => ({
    a: 0.99,
    k: prices.map((_, t) => 0.2 + 0.1 * (t % 3)),
    e0,
    eMax: 6,
    eLow: 0,
    floor: prices.map(() => 1),
    terminal: 2,
    penalty: 100,
    onLevels: prices.map((_, t) => (t % 5 === 4 ? [] : [level / 2, level])),
    cost: (t, q) => (prices[t] as number) * q,
    step: 0.05,
    minOnSlots: minOn,
    maxStartsPerDay: maxStarts,
    dayIndex: prices.map((_, t) => Math.floor(t / 8)),
    reach: reachAt === undefined ? null : { level: 5, bySlot: Math.min(prices.length - 1, 4 * reachAt + 3) },
  }));

describe('solveDiscrete', () => {
  it('gives the same plan with a workspace left over from other solves as with a fresh one', () => {
    fc.assert(
      fc.property(fc.array(problemArb, { minLength: 2, maxLength: 4 }), (problems) => {
        const ws = new DiscreteWorkspace();
        for (const p of problems) expect(solveDiscrete(p, ws)).toEqual(solveDiscrete(p));
      }),
      { numRuns: 40 },
    );
  });

  it('replays each slot with the storage model from the action the DP chose', () => {
    fc.assert(
      fc.property(problemArb, (p) => {
        const sol = solveDiscrete(p);
        let e = Math.min(p.e0, p.eMax);
        sol.q.forEach((q, t) => {
          const base = p.a * e - (p.k[t] as number);
          const delivered = (level: number): number => Math.max(0, Math.min(level, p.eMax - base));
          expect(sol.on[t] ? (p.onLevels[t] ?? []).map(delivered) : [0]).toContain(q);
          e = Math.max(p.eLow, base + q);
          expect(sol.e[t]).toBe(e);
        });
      }),
      { numRuns: 60 },
    );
  });
});
