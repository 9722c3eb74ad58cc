/**
 * Exact dynamic programme for one storage with continuous energy per slot (the duty-cycled
 * tank): the cost-to-go over stored energy is convex piecewise linear, so it is carried
 * exactly (no energy grid) through the backward pass; the plan is recovered forwards.
 *
 * Floors are soft with a large penalty, so infeasible inputs still give the best possible
 * plan (least energy below the floor) instead of failing. A "reach at least X once before
 * slot d" rule (legionella) is placed exactly by a forward + backward pass.
 */
import { addFloorPenalty, backwardStep, argminShifted, evalPwl, infConv, type Pwl, pwlEnd, restrict, Segments } from './pwl.js';

export interface StorageProblem {
  a: number;
  /** E[t+1] = a·E[t] − k[t] + q[t]. */
  k: ReadonlyArray<number>;
  e0: number;
  eMax: number;
  /** Soft floor on E at the end of each slot. */
  floor: ReadonlyArray<number>;
  /** Soft floor on the final state. */
  terminal: number;
  /** Convex cost of q in each slot; its domain is the slot's allowed energy range. */
  costs: ReadonlyArray<Pwl>;
  /** Penalty per kWh below a floor (≫ any price). */
  penalty: number;
  /** Lowest state the model represents (below every floor). */
  eLow: number;
  /** A second, harder floor per slot (a room's frost floor) and its penalty per kWh below it. */
  hardFloor?: { floor: ReadonlyArray<number>; penalty: number };
  /**
   * A lower ceiling than `eMax` per slot (a room's comfort band): heat never takes the state above
   * it. It must be at least what the slot reaches without heat from the slot before's ceiling.
   */
  eMaxAt?: ReadonlyArray<number>;
}

export interface StorageSolution {
  q: number[];
  /** State at the end of each slot. */
  e: number[];
}

/**
 * Memory the backward pass reuses from one solve to the next: the segments of every u[t] in one
 * buffer, and two buffers the cost-to-go alternates between.
 */
export class StorageWorkspace {
  readonly u = new Segments();
  readonly scratch = [new Segments(), new Segments()] as const;
  /** Per slot: where u[t]'s segments start and end in `u`, its start point and value there. */
  from = new Int32Array(0);
  to = new Int32Array(0);
  x0 = new Float64Array(0);
  v0 = new Float64Array(0);

  /** Prepares for a pass over n slots. */
  reset(n: number): void {
    this.u.size = 0;
    if (this.from.length < n) {
      this.from = new Int32Array(n);
      this.to = new Int32Array(n);
      this.x0 = new Float64Array(n);
      this.v0 = new Float64Array(n);
    }
  }

  uAt(t: number): Pwl {
    return this.u.view(this.x0[t] as number, this.v0[t] as number, this.from[t] as number, this.to[t] as number);
  }
}

/** Fills the workspace with u[t] for every slot (read back with `ws.uAt(t)`). */
function backward(p: StorageProblem, floor: ReadonlyArray<number>, ws: StorageWorkspace): void {
  const n = p.costs.length;
  ws.reset(n);
  let w: Pwl = addFloorPenalty({ x0: p.eLow, v0: 0, len: [p.eMax - p.eLow], slope: [0] }, p.terminal, p.penalty);
  for (let t = n - 1; t >= 0; t--) {
    const from = ws.u.size;
    if (p.hardFloor) w = addFloorPenalty(w, p.hardFloor.floor[t] as number, p.hardFloor.penalty);
    const hi = p.eMaxAt?.[t] ?? p.eMax;
    const r = backwardStep(w, floor[t] as number, p.penalty, p.eLow, hi, p.costs[t] as Pwl, p.a, p.k[t] as number, ws.u, ws.scratch[t & 1]);
    ws.from[t] = from;
    ws.to[t] = ws.u.size;
    ws.x0[t] = r.u.x0;
    ws.v0[t] = r.u.v0;
    w = r.next;
  }
}

function recover(p: StorageProblem, ws: StorageWorkspace): StorageSolution {
  const q: number[] = [];
  const e: number[] = [];
  let state = Math.min(p.e0, p.eMax);
  for (let t = 0; t < p.costs.length; t++) {
    const base = p.a * state - (p.k[t] as number);
    const cost = p.costs[t] as Pwl;
    let qt = argminShifted(cost, ws.uAt(t), base);
    qt = Math.min(pwlEnd(cost), Math.max(cost.x0, qt));
    // The thermostat: never above eMax.
    const hi = p.eMaxAt?.[t] ?? p.eMax;
    if (base + qt > hi) qt = Math.max(cost.x0, hi - base);
    q.push(qt);
    state = base + qt;
    e.push(state);
  }
  return { q, e };
}

/** Solves the storage problem; `extraFloor` adds hard-ish floors at given slots. */
export function solveStorage(p: StorageProblem, extraFloor?: ReadonlyMap<number, number>, ws = new StorageWorkspace()): StorageSolution {
  let floor = p.floor;
  if (extraFloor && extraFloor.size > 0) {
    const f = floor.slice();
    for (const [t, v] of extraFloor) if (t >= 0 && t < f.length) f[t] = Math.max(f[t] as number, v);
    floor = f;
  }
  backward(p, floor, ws);
  return recover(p, ws);
}

/** min over x in [lo, hi] of f(x) + g(x); Infinity when the domains do not meet. */
function minSum(f: Pwl, g: Pwl, lo: number, hi: number): number {
  const a = Math.max(lo, f.x0, g.x0);
  const b = Math.min(hi, pwlEnd(f), pwlEnd(g));
  if (a > b + 1e-9) return Infinity;
  // Convex sum: walk right from a while the summed right-slope is negative.
  let x = a;
  let fi = 0;
  let fx = f.x0;
  while (fi < f.len.length && fx + (f.len[fi] as number) <= x + 1e-13) fx += f.len[fi++] as number;
  let gi = 0;
  let gx = g.x0;
  while (gi < g.len.length && gx + (g.len[gi] as number) <= x + 1e-13) gx += g.len[gi++] as number;
  while (x < b - 1e-13) {
    const fs = fi < f.slope.length ? (f.slope[fi] as number) : 0;
    const gs = gi < g.slope.length ? (g.slope[gi] as number) : 0;
    if (fs + gs >= 0) break;
    const fNext = fi < f.len.length ? fx + (f.len[fi] as number) : Infinity;
    const gNext = gi < g.len.length ? gx + (g.len[gi] as number) : Infinity;
    const next = Math.min(fNext, gNext, b);
    x = next;
    if (fNext <= next + 1e-13 && fi < f.len.length) {
      fx = fNext;
      fi++;
    }
    if (gNext <= next + 1e-13 && gi < g.len.length) {
      gx = gNext;
      gi++;
    }
  }
  return evalPwl(f, x) + evalPwl(g, x);
}

/**
 * Chooses the slot (index ≤ lastSlot) at whose end the state should reach `level` so that the
 * total cost is least, exactly, by combining the forward cost-to-arrive with the backward
 * cost-to-go. Returns -1 when no slot can reach it (then the caller reports a shortfall and
 * uses the slot with the highest reachable state).
 */
export function bestSlotToReach(p: StorageProblem, level: number, lastSlot: number, ws = new StorageWorkspace()): number {
  backward(p, p.floor, ws);
  let f: Pwl = { x0: Math.min(p.e0, p.eMax), v0: 0, len: [], slope: [] };
  let best = -1;
  let bestCost = Infinity;
  const last = Math.min(lastSlot, p.costs.length - 1);
  for (let t = 0; t <= last; t++) {
    const g: Pwl = {
      x0: p.a * f.x0 - (p.k[t] as number),
      v0: f.v0,
      len: Array.from(f.len, (l) => l * p.a),
      slope: Array.from(f.slope, (s) => s / p.a),
    };
    let next = infConv(g, p.costs[t] as Pwl);
    next = addFloorPenalty(next, p.floor[t] as number, p.penalty);
    next = restrict(next, p.eLow, p.eMax) ?? next;
    f = next;
    // u[t] = W[t+1] + floor penalty at the end of slot t; f includes that penalty too, so
    // use W = u[t] minus the penalty: compare with the penalty counted twice consistently by
    // evaluating only above the floor (level ≥ floor), where the penalty is zero.
    const c = minSum(f, ws.uAt(t), Math.max(level, p.floor[t] as number), p.eMax);
    if (c < bestCost - 1e-12) {
      bestCost = c;
      best = t;
    }
  }
  return best;
}

/** Cost of a solution under the problem's cost functions (without penalties). */
export function solutionCost(p: StorageProblem, s: StorageSolution): number {
  let c = 0;
  for (let t = 0; t < s.q.length; t++) c += evalPwl(p.costs[t] as Pwl, s.q[t] as number);
  return c;
}
