/**
 * Solves a set-up plan: the tank (exact convex DP, or the on/off DP), the EV (exact greedy, or
 * the on/off DP with anti-cycling); both together are in `joint.ts`.
 */
import { bestSlotToReach, solveStorage, type StorageProblem } from './convex-dp.js';
import { solveDiscrete } from './discrete-dp.js';
import { solveEv } from './ev.js';
import { costPieces } from './pwl.js';
import type { Setup, TankSetup, EvSetup } from './plan-setup.js';
import type { PlanInput } from './types.js';

export interface Solved {
  q: number[];
  tankE: number[];
  tankOn: boolean[];
  ev: number[];
  evOn: boolean[];
  legionellaSlot: number;
}

/** Lagrangian coupling: the EV's potential energy per slot and its price λ. */
export interface Coupling {
  lambda: number;
  evPotential: number[];
}

const TOL = 1e-9;

export function tankSolve(
  s: Setup,
  input: PlanInput,
  cap: number[],
  coupling: Coupling | null,
  legSlot: number | null,
): {
  q: number[];
  e: number[];
  on: boolean[];
  legSlot: number;
} {
  const tk = s.tank as TankSetup;
  const tp = input.tank!;
  const m = tk.model;
  const ac = tp.antiCycling;
  const extra = (t: number): { free: number; slope: number } => {
    const h = s.headroomE[t] as number;
    const ev = s.ev;
    if (!coupling || !ev || (ev.price[t] as number) >= coupling.lambda) return { free: Infinity, slope: 0 };
    return { free: Math.max(0, h - (coupling.evPotential[t] as number)), slope: coupling.lambda - (ev.price[t] as number) };
  };
  // Represented states: from a little below the floor (or the start) up to the thermostat.
  const eLow = Math.min(m.eFloor, tk.e0) - 1.5;
  if (tp.control === 'continuous' && !ac) {
    const costs = cap.map((hi, t) => {
      const c = tk.price[t] as number;
      const fixed = tk.fixed[t];
      const lo = fixed !== undefined ? Math.min(fixed, hi) : 0;
      const top = fixed !== undefined ? lo : hi;
      const x = extra(t);
      const split = Math.max(lo, Math.min(top, x.free));
      const v0 = c * lo + x.slope * Math.max(0, lo - x.free);
      return costPieces(lo, v0, [
        [split - lo, c],
        [top - split, c + x.slope],
      ]);
    });
    const p: StorageProblem = {
      a: m.a,
      k: m.k,
      e0: tk.e0,
      eMax: m.eMax,
      floor: tk.floor,
      terminal: tk.terminal,
      costs,
      penalty: s.penalty,
      eLow,
    };
    let ls = legSlot ?? -1;
    if (legSlot === null && tk.legionella) {
      ls = bestSlotToReach(p, tk.legionella.level, tk.legionella.bySlot, s.workspace.storage);
      if (ls < 0) ls = tk.legionella.bySlot;
    }
    const sol = solveStorage(p, ls >= 0 && tk.legionella ? new Map([[ls, tk.legionella.level]]) : undefined, s.workspace.storage);
    return { q: sol.q, e: sol.e, on: sol.q.map((v) => v > TOL), legSlot: ls };
  }
  // On/off (relay) or anti-cycling: the discrete DP.
  const xFree: number[] = [];
  const xSlope: number[] = [];
  for (let t = 0; t < cap.length; t++) {
    const x = extra(t);
    xFree.push(x.free);
    xSlope.push(x.slope);
  }
  const levels = cap.map((hi, t) => {
    if (tp.control === 'relay')
      return (tk.relayLevel[t] as number) > 0 && hi + TOL >= (tk.relayLevel[t] as number) ? [tk.relayLevel[t] as number] : [];
    return hi > TOL ? [hi / 4, hi / 2, (3 * hi) / 4, hi] : [];
  });
  const sol = solveDiscrete(
    {
      a: m.a,
      k: m.k,
      e0: tk.e0,
      eMax: m.eMax,
      eLow,
      floor: tk.floor,
      terminal: tk.terminal,
      penalty: s.penalty,
      onLevels: levels,
      fixed: tk.fixed,
      cost: (t, q) => (tk.price[t] as number) * q + (xSlope[t] as number) * Math.max(0, q - (xFree[t] as number)),
      step: input.options?.energyStepKwh ?? (tp.control === 'relay' ? 0.01 : 0.02),
      minOnSlots: ac?.minOnSlots,
      minOffSlots: ac?.minOffSlots,
      maxStartsPerDay: ac?.maxStartsPerDay,
      dayIndex: s.dayIndex,
      reach: tk.legionella ? { level: tk.legionella.level, bySlot: tk.legionella.bySlot } : null,
    },
    s.workspace.discrete,
  );
  let ls = -1;
  if (tk.legionella) ls = sol.e.findIndex((v, t) => t <= tk.legionella!.bySlot && v >= tk.legionella!.level - 1e-6);
  return { q: sol.q, e: sol.e, on: sol.on, legSlot: ls };
}

export function evSolve(s: Setup, input: PlanInput, cap: number[]): { e: number[]; on: boolean[] } {
  const ev = s.ev as EvSetup;
  const ac = input.ev?.antiCycling;
  if (!ac) {
    const sol = solveEv({ price: ev.price, cap, minE: ev.minE, need: ev.needGrid, maxExtra: ev.maxExtraGrid, fixed: ev.fixed });
    return { e: sol.e, on: sol.e.map((v) => v > TOL) };
  }
  const target = ev.needGrid;
  const sol = solveDiscrete(
    {
      a: 1,
      k: cap.map(() => 0),
      e0: 0,
      eMax: target + ev.maxExtraGrid,
      eLow: 0,
      floor: cap.map((_, t) => (t === ev.lastSlot ? target : 0)),
      terminal: 0,
      penalty: s.penalty,
      onLevels: cap.map((hi, t) => {
        const lo = ev.minE[t] as number;
        if (hi <= TOL || hi + TOL < lo) return [];
        return lo > 0 ? [lo, (lo + hi) / 2, hi] : [hi / 2, hi];
      }),
      fixed: ev.fixed,
      cost: (t, q) => (ev.price[t] as number) * q,
      step: Math.max(0.01, target / 400),
      minOnSlots: ac.minOnSlots,
      minOffSlots: ac.minOffSlots,
      maxStartsPerDay: ac.maxStartsPerDay,
      dayIndex: s.dayIndex,
    },
    s.workspace.discrete,
  );
  return { e: sol.q, on: sol.on };
}

/** Objective used to compare joint candidates: cost plus penalties for every shortfall. */
export function objective(s: Setup, q: number[], tankE: number[], ev: number[]): number {
  let v = 0;
  const tk = s.tank;
  for (let t = 0; t < s.n; t++) {
    if (tk) {
      v += (tk.price[t] as number) * (q[t] as number);
      v += s.penalty * Math.max(0, (tk.floor[t] as number) - (tankE[t] as number));
    }
    if (s.ev) v += (s.ev.price[t] as number) * (ev[t] as number);
  }
  if (tk && s.n > 0) v += s.penalty * Math.max(0, tk.terminal - (tankE[s.n - 1] as number));
  if (s.ev) v += s.penalty * Math.max(0, s.ev.needGrid - ev.reduce((x, y) => x + y, 0));
  return v;
}
