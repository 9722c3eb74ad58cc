/**
 * EV charging with one deadline: fill the cheapest slots first (ties go to the later slot),
 * which is exact for continuous power; a minimum charging power is handled by repairing the
 * one partial slot the fill can leave, or by fewer, larger slots where the cheapest slots'
 * caps fall short and their minimums overshoot.
 */
export interface EvProblem {
  /** Price per slot used for the EV (the series price, or a fallback ranking). */
  price: ReadonlyArray<number>;
  /** Largest grid energy per slot (0 where the car is away or capped to zero). */
  cap: ReadonlyArray<number>;
  /** Smallest non-zero grid energy per slot (minimum power × slot length). */
  minE: ReadonlyArray<number>;
  /** Grid energy needed by the deadline (slots after it have cap 0). */
  need: number;
  /** Extra grid energy allowed in negative-price slots. */
  maxExtra: number;
  /** Energy fixed by the frozen window (undefined = free). */
  fixed?: ReadonlyArray<number | undefined>;
}

export interface EvSolution {
  e: number[];
  shortfall: number;
}

const TOL = 1e-9;

/** Slots free for the fill, cheapest first, ties to the later slot. */
function order(p: EvProblem): number[] {
  const idx: number[] = [];
  for (let t = 0; t < p.cap.length; t++) {
    if (p.fixed?.[t] !== undefined) continue;
    const cap = p.cap[t] as number;
    if (cap > TOL && cap + TOL >= (p.minE[t] as number)) idx.push(t);
  }
  return idx.sort((x, y) => (p.price[x] as number) - (p.price[y] as number) || y - x);
}

/**
 * Best allocation of `target` over the slot set `set` (in fill order): every slot at least its
 * minimum, the rest cheapest first up to the caps. Null when the set cannot take the target
 * (or its minimums overshoot the budget).
 */
function allocate(p: EvProblem, set: number[], target: number, budget: number): { e: Map<number, number>; cost: number } | null {
  let minSum = 0;
  let capSum = 0;
  for (const t of set) {
    minSum += p.minE[t] as number;
    capSum += p.cap[t] as number;
  }
  if (capSum + TOL < target || minSum > Math.max(target, budget) + TOL) return null;
  const e = new Map<number, number>();
  let left = target - minSum;
  let cost = 0;
  for (const t of set) {
    const add = Math.max(0, Math.min(left, (p.cap[t] as number) - (p.minE[t] as number)));
    left -= add;
    const v = (p.minE[t] as number) + add;
    e.set(t, v);
    cost += v * (p.price[t] as number);
  }
  return { e, cost };
}

/** The slot where its minimum, which covers `target`, costs least; null if no minimum covers it. */
function cheapestAtMinimum(p: EvProblem, ord: number[], target: number): { e: Map<number, number>; cost: number } | null {
  let best: { e: Map<number, number>; cost: number } | null = null;
  for (const t of ord) {
    const min = p.minE[t] as number;
    const cost = min * (p.price[t] as number);
    if (min + TOL >= target && (!best || cost < best.cost - 1e-12)) best = { e: new Map([[t, min]]), cost };
  }
  return best;
}

/**
 * For a few set sizes k (from the fewest slots whose caps can take `target`): the k cheapest
 * slots, then, while their caps fall short, the swap that buys the most cap for the least price.
 */
function fewerLargerSlots(p: EvProblem, ord: number[], target: number, budget: number): { e: Map<number, number>; cost: number } | null {
  const cap = (t: number): number => p.cap[t] as number;
  const price = (t: number): number => p.price[t] as number;
  const largest = ord.map(cap).sort((x, y) => y - x);
  let kMin = 0;
  for (let sum = 0; kMin < largest.length && sum + TOL < target; kMin++) sum += largest[kMin] as number;
  let best: { e: Map<number, number>; cost: number } | null = null;
  for (let k = kMin; k <= Math.min(ord.length, kMin + 2); k++) {
    const inSet = new Set(ord.slice(0, k));
    let sum = [...inSet].reduce((a, t) => a + cap(t), 0);
    while (sum + TOL < target) {
      let swap: [number, number] | null = null;
      let rate = Infinity;
      for (const i of inSet) {
        for (const j of ord) {
          if (inSet.has(j) || cap(j) <= cap(i) + TOL) continue;
          const r = (price(j) - price(i)) / (cap(j) - cap(i));
          if (r < rate) [swap, rate] = [[i, j], r];
        }
      }
      if (!swap) break;
      inSet.delete(swap[0]);
      inSet.add(swap[1]);
      sum += cap(swap[1]) - cap(swap[0]);
    }
    const a = allocate(
      p,
      ord.filter((t) => inSet.has(t)),
      target,
      budget,
    );
    if (a && (!best || a.cost < best.cost - 1e-12)) best = a;
  }
  return best;
}

export function solveEv(p: EvProblem): EvSolution {
  const n = p.cap.length;
  const e = new Array<number>(n).fill(0);
  let got = 0;
  for (let t = 0; t < n; t++) {
    const f = p.fixed?.[t];
    if (f !== undefined) {
      e[t] = f;
      got += f;
    }
  }
  const ord = order(p);
  const target = Math.max(0, p.need - got);
  const budget = Math.max(target, p.need + p.maxExtra - got);
  if (target > TOL) {
    // k0: fewest cheapest slots that can take the target.
    let k0 = 0;
    let capSum = 0;
    while (k0 < ord.length && capSum + TOL < target) capSum += p.cap[ord[k0++] as number] as number;
    let best = capSum + TOL >= target ? null : allocate(p, ord, Math.min(target, capSum), budget);
    const consider = (set: number[]): void => {
      const a = allocate(p, set, target, budget);
      if (a && (!best || a.cost < best.cost - 1e-12)) best = a;
    };
    if (capSum + TOL >= target) {
      // The cheapest k slots for a few k (more slots at their minimum can beat a partial one),
      // and the cheapest k0 − 1 plus any one other slot in place of the partial one.
      for (let k = k0; k <= Math.min(ord.length, k0 + 3); k++) consider(ord.slice(0, k));
      // (head + ord[j] is already in fill order: j comes after every slot of the head.)
      const head = ord.slice(0, Math.max(0, k0 - 1));
      for (let j = k0; j < ord.length; j++) consider([...head, ord[j] as number]);
    }
    // Less is needed than any slot's minimum (the rest of a frozen slot fell just short): the
    // cheapest slot at its minimum, a small overshoot. Not every slot at full power.
    if (!best && capSum + TOL >= target) best = cheapestAtMinimum(p, ord, target);
    // The cheapest slots' minimums overshoot while their caps fall short (caps just above the
    // minimum, as under a capacity hold): fewer, larger slots.
    if (!best && capSum + TOL >= target) best = fewerLargerSlots(p, ord, target, budget);
    if (!best) {
      // Nothing takes the target: everything at full power (a shortfall).
      best = { e: new Map(ord.map((t) => [t, p.cap[t] as number])), cost: 0 };
    }
    for (const [t, v] of (best as { e: Map<number, number> }).e) e[t] = v;
  }
  // Negative prices: take up to the extra budget where it pays.
  let extra = p.need + p.maxExtra - e.reduce((x, y) => x + y, 0);
  for (const t of ord) {
    if (extra <= TOL || (p.price[t] as number) >= 0) break;
    const cur = e[t] as number;
    const add = Math.min((p.cap[t] as number) - cur, extra);
    if (add > TOL && (cur > TOL || add + TOL >= (p.minE[t] as number))) {
      e[t] = cur + add;
      extra -= add;
    }
  }
  let total = 0;
  for (const v of e) total += v;
  return { e, shortfall: Math.max(0, p.need - total) };
}

/** Charging power from current per phase, number of phases and phase voltage (default 230 V). */
export function evPowerKw(currentA: number, phases: 1 | 2 | 3, voltageV = 230): number {
  return (currentA * phases * voltageV) / 1000;
}
