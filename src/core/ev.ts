/**
 * EV charging with one deadline: fill the cheapest slots first (ties go to the later slot),
 * which is exact for continuous power; a minimum charging power is handled by repairing the
 * one partial slot the fill can leave.
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
  let remaining = Math.max(0, p.need - got);
  for (const t of ord) {
    if (remaining <= TOL) break;
    const take = Math.min(p.cap[t] as number, remaining);
    e[t] = take;
    remaining -= take;
  }
  // Negative prices: take up to the extra budget where it pays.
  let extra = p.need + p.maxExtra - e.reduce((x, y) => x + y, 0);
  for (const t of ord) {
    if (extra <= TOL || (p.price[t] as number) >= 0) break;
    const add = Math.min((p.cap[t] as number) - (e[t] as number), extra);
    if (add > TOL) {
      e[t] = (e[t] as number) + add;
      extra -= add;
    }
  }
  repairMinPower(p, e, ord);
  let total = 0;
  for (const v of e) total += v;
  return { e, shortfall: Math.max(0, p.need - total) };
}

/** A slot below its minimum power is raised to it, paid by the dearest other slot if possible. */
function repairMinPower(p: EvProblem, e: number[], ord: number[]): void {
  for (const t of ord) {
    const v = e[t] as number;
    const minE = p.minE[t] as number;
    if (v <= TOL || v + TOL >= minE) continue;
    const d = minE - v;
    // (b) take d from the dearest other charging slot that stays above its minimum.
    let donor = -1;
    for (const j of ord) {
      if (j === t) continue;
      const ej = e[j] as number;
      if (ej - d + TOL >= (p.minE[j] as number) && ej > TOL && (donor < 0 || (p.price[j] as number) > (p.price[donor] as number))) donor = j;
    }
    const costRaise = d * (p.price[t] as number);
    const costSwap = donor >= 0 ? d * ((p.price[t] as number) - (p.price[donor] as number)) : Infinity;
    // (c) drop the partial slot into spare room of slots already charging (none when the fill was greedy
    // and full), else raise.
    if (costSwap <= costRaise) e[donor] = (e[donor] as number) - d;
    e[t] = minE;
  }
}
