import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DiscreteWorkspace, dominanceWeights, solveDiscrete, type DiscreteProblem } from './discrete-dp.js';

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

/** The DP's own objective of a plan: each slot's cost, below the floors at their penalties, the terminal floor. */
function objectiveOf(p: DiscreteProblem, q: ReadonlyArray<number>, e: ReadonlyArray<number>): number {
  let v = 0;
  q.forEach((qt, t) => {
    const et = e[t] as number;
    v += p.cost(t, qt) + p.penalty * Math.max(0, (p.floor[t] as number) - et);
    if (p.hardFloor) v += p.hardFloor.penalty * Math.max(0, (p.hardFloor.floor[t] as number) - et);
  });
  const last = e[e.length - 1] ?? p.e0;
  return v + p.penalty * Math.max(0, p.terminal - last);
}

/** The least objective over every on/off sequence, by enumeration (one "on" level a slot). */
function bestOfAll(p: DiscreteProblem): number {
  const n = p.k.length;
  let best = Infinity;
  for (let mask = 0; mask < 2 ** n; mask++) {
    const q: number[] = [];
    const e: number[] = [];
    let state = Math.min(p.e0, p.eMax);
    for (let t = 0; t < n; t++) {
      const base = p.a * state - (p.k[t] as number);
      const level = (mask >> t) & 1 ? (p.onLevels[t]?.[0] ?? 0) : 0;
      const qt = Math.max(0, Math.min(level, (p.eMaxAt?.[t] ?? p.eMax) - base));
      state = Math.max(p.eLow, base + qt);
      q.push(qt);
      e.push(state);
    }
    best = Math.min(best, objectiveOf(p, q, e));
  }
  return best;
}

/** A room on a relay: one "on" level per slot, a ceiling, a frost floor; no anti-cycling rule, no `reach`. */
const relayArb = fc
  .record({
    prices: fc.array(fc.double({ min: -0.5, max: 0.6, noNaN: true }), { minLength: 2, maxLength: 12 }),
    e0: fc.double({ min: 0, max: 6, noNaN: true }),
    level: fc.double({ min: 0.3, max: 2.5, noNaN: true }),
    ceiling: fc.double({ min: 3, max: 6, noNaN: true }),
  })
  .map(({ prices, e0, level, ceiling }): DiscreteProblem => ({
    a: 0.95,
    k: prices.map((_, t) => 0.3 + 0.1 * (t % 3)),
    e0,
    eMax: 6,
    eLow: 0,
    eMaxAt: prices.map((_, t) => (t % 4 === 3 ? ceiling : 6)),
    floor: prices.map((_, t) => (t % 6 < 3 ? 2 : 1)),
    hardFloor: { floor: prices.map(() => 0.5), penalty: 1000 },
    terminal: 1.5,
    penalty: 100,
    onLevels: prices.map((_, t) => (t % 5 === 4 ? [] : [level])),
    cost: (t, q) => (prices[t] as number) * q,
    step: 1e-4,
    dayIndex: prices.map(() => 0),
  }));

describe('solveDiscrete with dominance', () => {
  it('finds the best plan of every on/off sequence, negative prices and ceilings included', () => {
    fc.assert(
      fc.property(relayArb, (p) => {
        const pruned = solveDiscrete({ ...p, dominance: dominanceWeights(p.k.length, (t) => p.cost(t, 1)) });
        expect(objectiveOf(p, pruned.q, pruned.e)).toBeCloseTo(bestOfAll(p), 6);
      }),
      { numRuns: 150 },
    );
  });

  // Two slots, a room that the first slot's heat would nearly fill: heating then earns 0.01 a kWh,
  // heating in the second slot earns 1 a kWh but only what the ceiling leaves room for.
  const twoSlots: DiscreteProblem = {
    a: 1,
    k: [0, 0],
    e0: 0,
    eMax: 2,
    eLow: 0,
    floor: [0, 0],
    terminal: 0,
    penalty: 100,
    onLevels: [[1.8], [2]],
    cost: (t, q) => (t === 0 ? -0.01 : -1) * q,
    step: 1e-3,
  };
  it.each([
    { case: 'the later negative price counted', weights: dominanceWeights(2, (t) => (t === 0 ? -0.01 : -1)), q: [0, 2] },
    { case: 'no weight (a warmer state always wins)', weights: [0, 0], q: [1.8, 0.2] },
  ])('$case: plans $q', ({ weights, q }) => {
    expect(dominanceWeights(2, (t) => (t === 0 ? -0.01 : -1))).toEqual([1, 0]);
    expect(solveDiscrete({ ...twoSlots, dominance: weights }).q.map((x) => Number(x.toFixed(9)))).toEqual(q);
  });

  it('keeps some ten states a slot of a relay room that the 0.1 K grid keeps a few hundred of', () => {
    const n = 48;
    const c = 0.43;
    const p: DiscreteProblem = {
      a: Math.exp(-0.024 / c),
      k: Array.from({ length: n }, (_, t) => -(1 - Math.exp(-0.024 / c)) * c * (-5 + 3 * Math.sin(t / 4) + 0.1 / 0.024)),
      e0: 18 * c,
      eMax: 21 * c,
      eLow: 6 * c,
      floor: Array.from({ length: n }, () => 17 * c),
      terminal: 6 * c,
      penalty: 100,
      onLevels: Array.from({ length: n }, () => [0.99]),
      cost: (t, q) => (0.1 + 0.05 * Math.sin(t / 3)) * q,
      step: 0.1 * c,
    };
    const ws = new DiscreteWorkspace();
    const exact = solveDiscrete(p, ws);
    const grid = ws.size;
    const pruned = solveDiscrete({ ...p, dominance: dominanceWeights(n, (t) => p.cost(t, 1)) }, ws);
    expect(ws.size).toBeLessThan(grid / 10);
    expect(objectiveOf(p, pruned.q, pruned.e)).toBeLessThanOrEqual(objectiveOf(p, exact.q, exact.e) + 1e-9);
  });
});
