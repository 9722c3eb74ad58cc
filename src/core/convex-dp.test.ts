import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bestSlotToReach, solveStorage, StorageWorkspace, type StorageProblem } from './convex-dp.js';
import { costPieces } from './pwl.js';

/** A small duty-cycled tank: up to qMax per slot at the slot's price. */
const problemArb = fc
  .record({
    prices: fc.array(fc.double({ min: -0.2, max: 0.6, noNaN: true }), { minLength: 2, maxLength: 40 }),
    e0: fc.double({ min: 0, max: 6, noNaN: true }),
    qMax: fc.double({ min: 0.2, max: 2, noNaN: true }),
  })
  .map(({ prices, e0, qMax }): StorageProblem => ({
    a: 0.99,
    k: prices.map((_, t) => 0.2 + 0.1 * (t % 3)),
    e0,
    eMax: 6,
    eLow: -1,
    floor: prices.map(() => 1),
    terminal: 2,
    penalty: 100,
    costs: prices.map((price) => costPieces(0, 0, [[qMax, price]])),
  }));

describe('storage DP', () => {
  it('gives the same plan and legionella slot with a workspace left over from other solves', () => {
    fc.assert(
      fc.property(fc.array(problemArb, { minLength: 2, maxLength: 4 }), (problems) => {
        const ws = new StorageWorkspace();
        for (const p of problems) {
          const last = p.costs.length - 1;
          expect(bestSlotToReach(p, 5, last, ws)).toBe(bestSlotToReach(p, 5, last));
          const extra = new Map([[last, 5]]);
          expect(solveStorage(p, extra, ws)).toEqual(solveStorage(p, extra));
        }
      }),
      { numRuns: 40 },
    );
  });
});
