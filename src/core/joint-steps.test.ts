import { describe, expect, it } from 'vitest';
import {
  borrowCaps,
  cheapest,
  deficitCaps,
  distinctPrices,
  evDemandAt,
  evFreeSlots,
  evRoom,
  exchangeIntoMarginal,
  giveBackOrders,
  headroomContested,
  improveOn,
  marginalEvSlot,
  mayRechooseLegionella,
  residualCaps,
  searchLambda,
} from './joint-steps.js';

describe('residualCaps', () => {
  it.each([
    ['keeps the cap where the headroom leaves more than it', [2, 2], [5, 5], [1, 1], [2, 2]],
    ['cuts the cap to the headroom the other device leaves', [2, 2], [3, 2.5], [2, 1], [1, 1.5]],
    ['gives zero where the other device uses all the headroom or more', [2, 2], [3, 3], [3, 4], [0, 0]],
  ])('%s', (_name, cap, headroom, used, expected) => {
    expect(residualCaps(cap, headroom, used)).toEqual(expected);
  });
});

describe('headroomContested', () => {
  it.each([
    ['is not contested when both caps fit the headroom in every slot', [1, 2], [2, 1], [3, 3], false],
    ['is not contested when the caps fill the headroom exactly', [1, 2], [2, 1], [3, 3 - 1e-10], false],
    ['is contested when one slot asks for more than its headroom', [1, 2], [2, 2], [3, 3], true],
  ])('%s', (_name, tankCap, evCap, headroom, expected) => {
    expect(headroomContested(tankCap, evCap, headroom)).toBe(expected);
  });
});

describe('borrowCaps', () => {
  const ev = { minE: [2, 2, 2, 2], price: [3, 1, 2, 4] };
  it.each([
    [
      'gives nothing back when the fill ends at or above the minimum everywhere',
      [0, 2, 3, 0],
      [1, 1, 1, 1],
      [undefined, undefined, undefined, undefined],
      null,
    ],
    [
      "gives the partial slot's energy back in the EV's cheapest full slot",
      [0.5, 2, 3, 0],
      [1, 1, 1, 1],
      [undefined, undefined, undefined, undefined],
      [1, 0.5, 1, 1],
    ],
    [
      'spreads the give-back over the next cheapest slot when the cheapest has too little',
      [1.5, 2, 3, 0],
      [1, 1, 1, 1],
      [undefined, undefined, undefined, undefined],
      [1, 0, 0.5, 1],
    ],
    [
      'skips frozen tank slots and holds them to what the tank has',
      [0.5, 2, 3, 0],
      [1, 1, 1, 1],
      [undefined, 1, undefined, undefined],
      [1, 1, 0.5, 1],
    ],
    [
      "gives nothing back when the tank has nothing in the EV's slots",
      [0.5, 2, 3, 0],
      [1, 0, 0, 1],
      [undefined, undefined, undefined, undefined],
      null,
    ],
  ])('%s', (_name, fill, q, fixed, expected) => {
    expect(borrowCaps(fill, ev, { cap: [1, 1, 1, 1], fixed }, q)).toEqual(expected);
  });
});

describe('evDemandAt', () => {
  const headroom = [3, 3, 3];
  it.each([
    ['counts nothing when λ is below every EV price', [1, 1, 1], 0.5, [undefined, undefined, undefined], 0],
    ['counts the headroom the tank leaves in slots cheaper than λ', [1, 2, 1], 2.5, [undefined, undefined, undefined], 2 + 1],
    ["never counts more than the EV's cap", [0, 0, 0], 10, [undefined, undefined, undefined], 2.5 * 3],
    ['counts frozen EV energy whatever λ is', [1, 1, 1], 0, [undefined, 1.5, undefined], 1.5],
    ['counts a tank above the headroom as leaving nothing', [4, 4, 4], 10, [undefined, undefined, undefined], 0],
  ])('%s', (_name, q, lambda, fixed, expected) => {
    expect(evDemandAt(q, lambda, { cap: [2.5, 2.5, 2.5], price: [1, 2, 3], fixed }, headroom)).toBeCloseTo(expected, 12);
  });
});

describe('evFreeSlots and distinctPrices', () => {
  it.each([
    ['lists slots with a cap that are not frozen', [1, 0, 2, 3], [undefined, undefined, 1, undefined], [0, 3]],
    ['lists none when the car is away', [0, 0], [undefined, undefined], []],
  ])('evFreeSlots %s', (_name, cap, fixed, expected) => {
    expect(evFreeSlots({ cap, fixed })).toEqual(expected);
  });

  it.each([
    ['sorts the prices of the slots cheapest first', [0, 1, 2], [3, 1, 2], [1, 2, 3]],
    ['keeps each price once', [0, 1, 2], [2, 1, 2], [1, 2]],
    ['gives none for no slots', [], [1], []],
  ])('distinctPrices %s', (_name, slots, price, expected) => {
    expect(distinctPrices(slots, price)).toEqual(expected);
  });
});

describe('searchLambda', () => {
  /** A solve that is feasible from λ ≥ `threshold` on and records the λ it was asked at. */
  const feasibleFrom = (threshold: number) => {
    const asked: number[] = [];
    const solveAt = (lambda: number): number | null => {
      asked.push(lambda);
      return lambda >= threshold ? lambda : null;
    };
    return { asked, solveAt };
  };
  const forced = (lambda: number): number => -lambda;

  it.each([
    ['lands just above the cheapest price when that is already feasible', [1, 2, 3], 0, 1 + 3e-9],
    ['lands between two prices where the demand jumps', [1, 2, 3], 1.5, 1.5],
    ['lands just above the dearest price when only that is feasible', [1, 2, 3], 3, 3 + 4e-9],
  ])('%s', (_name, prices, threshold, expected) => {
    const { solveAt } = feasibleFrom(threshold);
    const sol = searchLambda(prices, 1000, solveAt, forced);
    expect(sol).not.toBeNull();
    expect(sol as number).toBeGreaterThanOrEqual(threshold);
    expect(sol as number).toBeCloseTo(expected, 1);
  });

  it.each([
    ['pushes λ up to half the penalty when not even the dearest price is feasible', [1, 2, 3], 400, 400],
    ['pushes λ up to half the penalty when the EV has no free slot', [], 0, 0],
  ])('%s', (_name, prices, threshold, expectedAtLeast) => {
    const { solveAt, asked } = feasibleFrom(threshold);
    const sol = searchLambda(prices, 1000, solveAt, forced);
    expect(sol as number).toBeGreaterThanOrEqual(expectedAtLeast);
    expect(sol as number).toBeLessThanOrEqual(500);
    // The forced solve at half the penalty stands when no halving is feasible; halvings go no further than 30.
    expect(asked.length).toBeLessThanOrEqual(31);
  });

  it('first asks just above the dearest price, then bisects the prices', () => {
    const { solveAt, asked } = feasibleFrom(2);
    searchLambda([1, 2, 3, 4], 1000, solveAt, forced);
    const eps = 1e-9 * 5;
    expect(asked.slice(0, 3)).toEqual([4 + eps, 2 + eps, 1 + eps]);
  });
});

describe('giveBackOrders', () => {
  it.each([
    [
      'as listed, cheapest first with ties to the later slot, and reversed',
      [0, 1, 2],
      [2, 1, 1],
      [
        [0, 1, 2],
        [2, 1, 0],
        [2, 1, 0],
      ],
    ],
    ['three empty orders for no shared slot', [], [1], [[], [], []]],
  ])('%s', (_name, shared, price, expected) => {
    expect(giveBackOrders(shared, price)).toEqual(expected);
  });
});

describe('deficitCaps', () => {
  it.each([
    ["holds the tank to its energy in the EV's slots and cuts the deficit along the order", [2, 2, 2], [1, 1, 1], [0, 1], [1, 0], 1.5, [0.5, 0, 2]],
    ['stops cutting once the deficit is given back', [2, 2, 2], [1, 1, 1], [0, 1], [0, 1], 0.5, [0.5, 1, 2]],
    ['gives null when the order has nothing to give back', [2, 2, 2], [0, 0, 1], [0, 1], [0, 1], 0.5, null],
  ])('%s', (_name, tankCap, q, evSlots, order, deficit, expected) => {
    expect(deficitCaps(tankCap, q, evSlots, order, deficit)).toEqual(expected);
  });
});

describe('improveOn and cheapest', () => {
  const value = (c: number): number => c;
  it.each([
    ['keeps the best when no candidate beats it', 5, [6, 5], 5, false],
    ['ignores a candidate better only by a rounding error', 5, [5 - 1e-10], 5, false],
    ['takes a better candidate and a still better later one', 5, [4, 6, 3], 3, true],
  ])('improveOn %s', (_name, best, candidates, expected, improved) => {
    expect(improveOn(best, best, candidates, value)).toEqual({ best: expected, bestV: expected, improved });
  });

  it.each([
    ['picks the cheapest', [3, 1, 2], 1],
    ['keeps the earlier of two equal ones', [2, 2], 2],
    ['takes a single candidate', [7], 7],
  ])('cheapest %s', (_name, candidates, expected) => {
    expect(cheapest(candidates, value).best).toBe(expected);
  });
});

describe('evRoom', () => {
  it('is the EV cap within the headroom the tank leaves, negative where the tank is over it', () => {
    expect(evRoom([2, 2, 2], [3, 3, 3], [0, 2, 4])).toEqual([2, 1, -1]);
  });
});

describe('marginalEvSlot', () => {
  const ev = { minE: [1, 1, 1, 1], price: [1, 4, 3, 2], fixed: [undefined, undefined, undefined, undefined] as (number | undefined)[] };
  it.each([
    ['picks the dearest slot filled above the minimum and below its room', [1.5, 1.5, 1.5, 0], [2, 2, 2, 2], 1],
    ['skips a slot filled to its room', [1.5, 2, 1.5, 0], [2, 2, 2, 2], 2],
    ['skips a slot held at its minimum', [1.5, 1, 1, 0], [2, 2, 2, 2], 0],
    ['finds none when every slot is empty, full or at its minimum', [0, 2, 1, 0], [2, 2, 2, 2], -1],
  ])('%s', (_name, evE, room, expected) => {
    expect(marginalEvSlot(evE, room, ev)).toBe(expected);
  });

  it('skips frozen slots', () => {
    expect(marginalEvSlot([1.5, 1.5], [2, 2], { minE: [1, 1], price: [1, 2], fixed: [undefined, 1.5] })).toBe(0);
  });
});

describe('exchangeIntoMarginal', () => {
  const free = [undefined, undefined, undefined];
  const ev = { minE: [0, 0, 0], price: [1, 2, 3], fixed: free };
  const headroom = [3, 3, 3];
  it.each([
    [
      'moves energy out of cheaper slots, cheapest first, each up to what the tank could take more',
      1,
      { q: [1, 1, 1], ev: [2, 2, 1] },
      [1.5, 2, 1],
      [1.5, 1.5, 2],
    ],
    ['moves nothing out of slots where the tank is at its cap', 1, { q: [2, 1, 1], ev: [1, 2, 1] }, [2, 1, 2], [1, 2, 1]],
    ['moves nothing out of slots with headroom to spare', 1, { q: [1, 1, 1], ev: [1, 1, 1] }, [2, 2, 2], [1, 1, 1]],
    ['moves no more than the spare room', 0.25, { q: [1, 1, 1], ev: [2, 2, 1] }, [2, 2, 2], [1.75, 2, 1.25]],
  ])('%s', (_name, spare, current, tankCap, expected) => {
    const out = exchangeIntoMarginal(2, spare, current, ev, { cap: tankCap, fixed: free }, headroom, [1, 2, 3]);
    out.forEach((v, t) => expect(v).toBeCloseTo(expected[t] as number, 12));
  });

  it.each([
    ['empties a slot when the tank can take all of its energy', 3, [0, 3]],
    ['leaves a slot at its minimum rather than below it', 1.8, [1.5, 1.5]],
  ])('%s', (_name, tankCap0, expected) => {
    const out = exchangeIntoMarginal(
      1,
      5,
      { q: [1, 1], ev: [2, 1] },
      { minE: [1.5, 0], price: [1, 2], fixed: [undefined, undefined] },
      { cap: [tankCap0, 3], fixed: [undefined, undefined] },
      [3, 3],
      [1, 2],
    );
    out.forEach((v, t) => expect(v).toBeCloseTo(expected[t] as number, 12));
  });

  it('moves nothing out of frozen tank slots', () => {
    const out = exchangeIntoMarginal(
      1,
      5,
      { q: [1, 1], ev: [2, 1] },
      { minE: [0, 0], price: [1, 2], fixed: [undefined, undefined] },
      { cap: [3, 3], fixed: [1, undefined] },
      [3, 3],
      [1, 2],
    );
    expect(out).toEqual([2, 1]);
  });
});

describe('mayRechooseLegionella', () => {
  const base = { contested: true, legionella: true, legSlot: 3, control: 'continuous' as const, antiCycling: false };
  it.each([
    ['chooses again for a contested continuous tank with a legionella slot', {}, true],
    ['keeps the slot when the headroom is not contested', { contested: false }, false],
    ['keeps the slot without a legionella rule', { legionella: false }, false],
    ['keeps the slot when the tank reaches the level in no slot', { legSlot: -1 }, false],
    ['keeps the slot of a relay tank', { control: 'relay' as const }, false],
    ['keeps the slot of a tank with anti-cycling', { antiCycling: true }, false],
  ])('%s', (_name, change, expected) => {
    expect(mayRechooseLegionella({ ...base, ...change })).toBe(expected);
  });
});
