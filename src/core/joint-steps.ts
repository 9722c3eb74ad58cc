/**
 * The decisions `solveJoint` is made of, each a pure function of plain per-slot arrays so that
 * each can be tested on its own: what headroom is left, whether the devices contest it, how the
 * tank gives headroom back to the EV, the search for the EV's price λ, which candidate wins, and
 * the exchange that moves EV energy into its marginal slot.
 */

const TOL = 1e-9;
/** A candidate must beat the best so far by more than this to replace it. */
const BETTER_BY = 1e-9;

type Slots = readonly number[];
type Fixed = readonly (number | undefined)[];

/** What a device may still take per slot: its own cap, within the headroom the other leaves. */
export function residualCaps(cap: Slots, headroomE: Slots, used: Slots): number[] {
  return cap.map((c, t) => Math.max(0, Math.min(c, (headroomE[t] as number) - (used[t] as number))));
}

/** Whether tank and EV at their caps would want more than the headroom in some slot. */
export function headroomContested(tankCap: Slots, evCap: Slots, headroomE: Slots): boolean {
  return tankCap.some((c, t) => c + (evCap[t] as number) > (headroomE[t] as number) + TOL);
}

/**
 * Caps that make the tank give headroom back to the EV: where the EV's continuous fill `evFill`
 * ends in slots below its minimum energy `evMinE`, the tank keeps at most its energy `q` in the
 * EV's other slots and gives that much back in the EV's cheapest ones (frozen tank slots keep
 * theirs), so the EV can take it there instead. Null when there is nothing to give back.
 */
export function borrowCaps(evFill: Slots, ev: { minE: Slots; price: Slots }, tank: { cap: Slots; fixed: Fixed }, q: Slots): number[] | null {
  let short = 0;
  const partial = new Set<number>();
  evFill.forEach((v, t) => {
    if (v > TOL && v + TOL < (ev.minE[t] as number)) {
      short += v;
      partial.add(t);
    }
  });
  if (short <= TOL) return null;
  const caps = tank.cap.slice();
  const slotsByPrice = evFill
    .map((_, t) => t)
    .filter((t) => (evFill[t] as number) > TOL && !partial.has(t))
    .sort((x, y) => (ev.price[x] as number) - (ev.price[y] as number));
  // The tank may not take more of the EV's slots than it has now...
  for (const j of slotsByPrice) caps[j] = Math.min(caps[j] as number, q[j] as number);
  // ...and gives back the shortfall in the cheapest of them.
  let left = short;
  for (const j of slotsByPrice) {
    if (left <= TOL) break;
    const qj = q[j] as number;
    if (qj <= TOL || tank.fixed[j] !== undefined) continue;
    const cut = Math.min(left, qj);
    caps[j] = qj - cut;
    left -= cut;
  }
  return left < short - TOL ? caps : null;
}

/**
 * The EV energy the Lagrangian promises at price λ with the tank taking `q`: its frozen energy,
 * plus, in slots cheaper than λ, all the headroom the tank leaves (within the EV's cap).
 */
export function evDemandAt(q: Slots, lambda: number, ev: { cap: Slots; price: Slots; fixed: Fixed }, headroomE: Slots): number {
  let d = 0;
  for (let t = 0; t < headroomE.length; t++) {
    if ((ev.fixed[t] ?? -1) >= 0) d += ev.fixed[t] as number;
    else if ((ev.price[t] as number) < lambda) d += Math.min(ev.cap[t] as number, Math.max(0, (headroomE[t] as number) - (q[t] as number)));
  }
  return d;
}

/** The EV's free slots (a cap above zero, not frozen): where λ can move energy. */
export function evFreeSlots(ev: { cap: Slots; fixed: Fixed }): number[] {
  return ev.cap.map((_, t) => t).filter((t) => (ev.cap[t] as number) > TOL && ev.fixed[t] === undefined);
}

/** The distinct prices of the given slots, cheapest first: the only places the demand jumps. */
export function distinctPrices(slots: readonly number[], price: Slots): number[] {
  return [...new Set(slots.map((t) => price[t] as number))].sort((x, y) => x - y);
}

/**
 * The smallest λ at which `solveAt` is feasible (gives the EV its energy), and its solution:
 * first a bisection over the EV's slot `prices` (each just above a price), then a few halvings
 * between the two neighbouring prices. When not even the dearest price is feasible, the tank is
 * pushed out of the shared slots with λ up to half the shortfall `penalty` (`forcedAt` solves
 * there whatever the demand), with more halvings. `solveAt` is called in a fixed order, which
 * its caller may rely on to remember the dearest infeasible solve.
 */
export function searchLambda<T>(
  prices: readonly number[],
  penalty: number,
  solveAt: (lambda: number) => T | null,
  forcedAt: (lambda: number) => T,
): T | null {
  const eps = 1e-9 * (1 + Math.abs(prices[prices.length - 1] ?? 0));
  let lo: number;
  let hi: number;
  let hiSol = prices.length > 0 ? solveAt((prices[prices.length - 1] as number) + eps) : null;
  let halvings = 6;
  if (hiSol && prices.length > 0) {
    let a = -1;
    let b = prices.length - 1;
    while (b - a > 1) {
      const mid = (a + b) >> 1;
      const sol = solveAt((prices[mid] as number) + eps);
      if (sol) {
        b = mid;
        hiSol = sol;
      } else a = mid;
    }
    hi = (prices[b] as number) + eps;
    lo = a >= 0 ? (prices[a] as number) + eps : hi;
  } else {
    lo = (prices[prices.length - 1] ?? 0) + eps;
    hi = penalty / 2;
    hiSol = forcedAt(hi);
    halvings = 30;
  }
  for (let i = 0; i < halvings && hi - lo > 1e-9 * Math.max(1, Math.abs(hi)); i++) {
    const mid = (lo + hi) / 2;
    const sol = solveAt(mid);
    if (sol) {
      hi = mid;
      hiSol = sol;
    } else lo = mid;
  }
  return hiSol;
}

/**
 * The orders in which the tank tries giving back the EV's deficit in the shared slots: as
 * listed, cheapest EV price first (ties to the later slot), and reversed.
 */
export function giveBackOrders(shared: readonly number[], evPrice: Slots): number[][] {
  return [shared.slice(), shared.slice().sort((x, y) => (evPrice[x] as number) - (evPrice[y] as number) || y - x), shared.slice().reverse()];
}

/**
 * Tank caps that hold it to its energy `q` in the EV's slots and give back `deficit` along
 * `order`; null when nothing could be given back.
 */
export function deficitCaps(tankCap: Slots, q: Slots, evSlots: readonly number[], order: readonly number[], deficit: number): number[] | null {
  const caps = tankCap.slice();
  for (const j of evSlots) caps[j] = Math.min(caps[j] as number, q[j] as number);
  let left = deficit;
  for (const j of order) {
    if (left <= TOL) break;
    const cut = Math.min(left, q[j] as number);
    caps[j] = (q[j] as number) - cut;
    left -= cut;
  }
  return left < deficit - TOL ? caps : null;
}

/**
 * Walks `candidates` in order and keeps the first that beats `best` (value `bestV`) by more than
 * a rounding error, then any later one that beats that.
 */
export function improveOn<C>(
  best: C,
  bestV: number,
  candidates: readonly C[],
  value: (c: C) => number,
): { best: C; bestV: number; improved: boolean } {
  let improved = false;
  for (const c of candidates) {
    const v = value(c);
    if (v < bestV - BETTER_BY) {
      best = c;
      bestV = v;
      improved = true;
    }
  }
  return { best, bestV, improved };
}

/** The cheapest of `candidates` (at least one); ties keep the earlier. */
export function cheapest<C>(candidates: readonly C[], value: (c: C) => number): { best: C; bestV: number } {
  const first = candidates[0] as C;
  const { best, bestV } = improveOn(first, value(first), candidates.slice(1), value);
  return { best, bestV };
}

/** Room the EV has per slot: its cap, within the headroom the tank's `q` leaves. */
export function evRoom(evCap: Slots, headroomE: Slots, q: Slots): number[] {
  return evCap.map((c, t) => Math.min(c, (headroomE[t] as number) - (q[t] as number)));
}

/**
 * The EV's marginal slot: the dearest free one it fills only partly (above its minimum, below
 * its `room`); -1 when there is none. Slots held at the minimum power cannot take more.
 */
export function marginalEvSlot(evE: Slots, room: Slots, ev: { minE: Slots; price: Slots; fixed: Fixed }): number {
  let j = -1;
  evE.forEach((v, t) => {
    if (v <= TOL || ev.fixed[t] !== undefined) return;
    if (v > (ev.minE[t] as number) + TOL && v < (room[t] as number) - TOL && (j < 0 || (ev.price[t] as number) > (ev.price[j] as number))) j = t;
  });
  return j;
}

/**
 * The EV energy after moving energy into its marginal slot `j` (up to its spare room) out of
 * cheaper shared slots where the headroom holds the tank back (cheapest slot price first), so
 * that the tank can take the headroom freed there. A slot left with some energy keeps at least
 * its minimum. Returns the EV energy unchanged (a copy) when nothing can move.
 */
export function exchangeIntoMarginal(
  j: number,
  spare: number,
  current: { q: Slots; ev: Slots },
  ev: { minE: Slots; price: Slots; fixed: Fixed },
  tank: { cap: Slots; fixed: Fixed },
  headroomE: Slots,
  slotPrice: Slots,
): number[] {
  const { q, ev: evE } = current;
  const moved = evE.slice();
  const shared = evE
    .map((_, t) => t)
    .filter(
      (t) =>
        t !== j &&
        (evE[t] as number) > TOL &&
        ev.fixed[t] === undefined &&
        tank.fixed[t] === undefined &&
        (ev.price[t] as number) < (ev.price[j] as number) &&
        (q[t] as number) + (evE[t] as number) >= (headroomE[t] as number) - TOL &&
        (q[t] as number) < (tank.cap[t] as number) - TOL,
    )
    .sort((x, y) => (slotPrice[x] as number) - (slotPrice[y] as number));
  for (const i of shared) {
    if (spare <= TOL) break;
    const ei = moved[i] as number;
    let d = Math.min(spare, (tank.cap[i] as number) - (q[i] as number), ei);
    if (ei - d > TOL && ei - d < (ev.minE[i] as number)) d = ei - (ev.minE[i] as number);
    if (d <= TOL) continue;
    moved[i] = ei - d;
    moved[j] = (moved[j] as number) + d;
    spare -= d;
  }
  return moved;
}

/**
 * Whether the legionella slot, chosen for the tank alone, is worth choosing again on what the
 * EV leaves: only for a continuous tank without anti-cycling that contests the headroom and
 * reaches the legionella level in some slot.
 */
export function mayRechooseLegionella(p: {
  contested: boolean;
  legionella: boolean;
  legSlot: number;
  control: 'continuous' | 'relay' | undefined;
  antiCycling: boolean;
}): boolean {
  return p.contested && p.legionella && p.legSlot >= 0 && p.control === 'continuous' && !p.antiCycling;
}
