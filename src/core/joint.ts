/**
 * Tank and EV jointly under the shared per-slot headroom: a Lagrangian price λ on the EV's
 * energy (the tank pays λ − price for headroom it takes from the EV), searched over the EV's
 * slot prices, with candidates from coordinate re-solves, headroom give-back where the
 * Lagrangian jumps, and an exchange polish; the cheapest candidate (with penalties for any
 * shortfall) wins.
 */
import { evSolve, objective, tankSolve, type Solved } from './solve.js';
import { solveEv } from './ev.js';
import type { EvSetup, Setup, TankSetup } from './plan-setup.js';
import type { PlanInput } from './types.js';

const TOL = 1e-9;

export function solveJoint(s: Setup, input: PlanInput, tk: TankSetup, ev: EvSetup): Solved {
  const residual = (cap: number[], used: number[]): number[] =>
    cap.map((c, t) => Math.max(0, Math.min(c, (s.headroomE[t] as number) - (used[t] as number))));
  const contested = tk.cap.some((c, t) => c + (ev.cap[t] as number) > (s.headroomE[t] as number) + TOL);
  const first = tankSolve(s, input, tk.cap, null, null);
  type Cand = { q: number[]; e: number[]; on: boolean[]; ev: number[]; evOn: boolean[] };
  const runWith = (legSlot: number, first: { q: number[]; e: number[]; on: boolean[] }): { best: Cand; bestV: number } => {
    const polish = (t0: { q: number[]; e: number[]; on: boolean[] }): Cand => {
      const e1 = evSolve(s, input, residual(ev.cap, t0.q));
      if (!contested) return { ...t0, ev: e1.e, evOn: e1.on };
      const t1 = tankSolve(s, input, residual(tk.cap, e1.e), null, legSlot);
      const e2 = evSolve(s, input, residual(ev.cap, t1.q));
      return { q: t1.q, e: t1.e, on: t1.on, ev: e2.e, evOn: e2.on };
    };
    const cands: Cand[] = [polish(first)];
    // With a minimum EV power the continuous EV fill may end in a slot below the minimum. Then
    // the tank gives that much headroom back in the cheapest shared slots (and re-plans), so
    // the EV can take it there instead.
    const borrow = (q: number[]): number[] | null => {
      const cont = solveEv({ price: ev.price, cap: residual(ev.cap, q), minE: ev.minE.map(() => 0), need: ev.needGrid, maxExtra: ev.maxExtraGrid, fixed: ev.fixed });
      let r = 0;
      const partial = new Set<number>();
      cont.e.forEach((v, t) => {
        if (v > TOL && v + TOL < (ev.minE[t] as number)) {
          r += v;
          partial.add(t);
        }
      });
      if (r <= TOL) return null;
      const caps = tk.cap.slice();
      const slotsByPrice = cont.e.map((_, t) => t).filter((t) => (cont.e[t] as number) > TOL && !partial.has(t))
        .sort((x, y) => (ev.price[x] as number) - (ev.price[y] as number));
      // The tank may not take more of the EV's slots than it has now...
      for (const j of slotsByPrice) caps[j] = Math.min(caps[j] as number, q[j] as number);
      // ...and gives back r in the cheapest of them.
      let left = r;
      for (const j of slotsByPrice) {
        if (left <= TOL) break;
        const qj = q[j] as number;
        if (qj <= TOL || tk.fixed[j] !== undefined) continue;
        const cut = Math.min(left, qj);
        caps[j] = qj - cut;
        left -= cut;
      }
      return left < r - TOL ? caps : null;
    };
    if (contested) {
      const b0 = borrow(first.q);
      if (b0) cands.push(polish(tankSolve(s, input, b0, null, legSlot)));
      // EV first, then the tank on what is left.
      const e0 = evSolve(s, input, ev.cap);
      const t0 = tankSolve(s, input, residual(tk.cap, e0.e), null, legSlot);
      cands.push({ ...t0, ev: e0.e, evOn: e0.on });
      // Lagrangian: price the EV's displaced energy at λ and search the smallest λ that leaves
      // the EV its energy.
      const evPotential = ev.cap.map((c, t) => Math.min(c, s.headroomE[t] as number));
      const demand = (q: number[], lambda: number): number => {
        let d = 0;
        for (let t = 0; t < s.n; t++) {
          if ((ev.fixed[t] ?? -1) >= 0) d += ev.fixed[t] as number;
          else if ((ev.price[t] as number) < lambda) d += Math.min(ev.cap[t] as number, Math.max(0, (s.headroomE[t] as number) - (q[t] as number)));
        }
        return d;
      };
      type TankSol = { q: number[]; e: number[]; on: boolean[]; legSlot: number };
      let loSol: TankSol | null = null;
      let loLambda = NaN;
      const solveAt = (lambda: number): TankSol | null => {
        const sol = tankSolve(s, input, tk.cap, { lambda, evPotential }, legSlot);
        if (demand(sol.q, lambda) >= ev.needGrid - TOL) return sol;
        if (!(lambda <= loLambda)) {
          loSol = sol;
          loLambda = lambda;
        }
        return null;
      };
      // The EV's marginal price λ is searched first over the EV's own slot prices (the demand
      // only jumps where λ passes one), then refined between the two neighbouring prices.
      const evSlots = ev.cap.map((_, t) => t).filter((t) => (ev.cap[t] as number) > TOL && ev.fixed[t] === undefined);
      const prices = [...new Set(evSlots.map((t) => ev.price[t] as number))].sort((x, y) => x - y);
      const eps = 1e-9 * (1 + Math.abs(prices[prices.length - 1] ?? 0));
      let lo: number;
      let hi: number;
      let hiSol = prices.length > 0 ? solveAt((prices[prices.length - 1] as number) + eps) : null;
      let iterations = 6;
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
        // Even all its slots do not give the EV its energy at the dearest price: push the tank
        // out of the shared slots (below the tank's own floor penalty).
        lo = (prices[prices.length - 1] ?? 0) + eps;
        hi = s.penalty / 2;
        hiSol = tankSolve(s, input, tk.cap, { lambda: hi, evPotential }, legSlot);
        iterations = 30;
      }
      for (let i = 0; i < iterations && hi - lo > 1e-9 * Math.max(1, Math.abs(hi)); i++) {
        const mid = (lo + hi) / 2;
        const sol = solveAt(mid);
        if (sol) {
          hi = mid;
          hiSol = sol;
        } else lo = mid;
      }
      if (hiSol) {
        cands.push(polish(hiSol));
        const b = borrow(hiSol.q);
        if (b) cands.push(polish(tankSolve(s, input, b, null, legSlot)));
      }
      // The Lagrangian is not differentiable where the tank leaves the shared slots all at once:
      // below λ the EV is short, above it the tank has left more than needed. Mix: start from
      // the plan just below λ and let the tank give back only the EV's deficit, in a few orders.
      const below = loSol as TankSol | null;
      if (below) {
        const deficit = ev.needGrid - demand(below.q, loLambda);
        const shared = evSlots.filter((t) => (below.q[t] as number) > TOL && (ev.price[t] as number) < loLambda);
        const orders = [
          shared.slice(),
          shared.slice().sort((x, y) => (ev.price[x] as number) - (ev.price[y] as number) || y - x),
          shared.slice().reverse(),
        ];
        for (const ord of orders) {
          const caps = tk.cap.slice();
          for (const j of evSlots) caps[j] = Math.min(caps[j] as number, below.q[j] as number);
          let left = deficit;
          for (const j of ord) {
            if (left <= TOL) break;
            const cut = Math.min(left, below.q[j] as number);
            caps[j] = (below.q[j] as number) - cut;
            left -= cut;
          }
          if (left < deficit - TOL) cands.push(polish(tankSolve(s, input, caps, null, legSlot)));
        }
      }
    }
    let best = cands[0] as Cand;
    let bestV = objective(s, best.q, best.e, best.ev);
    for (const c of cands.slice(1)) {
      const v = objective(s, c.q, c.e, c.ev);
      if (v < bestV - 1e-9) {
        best = c;
        bestV = v;
      }
    }
    // Exchange polish: the EV moves energy from cheap shared slots, where the tank is held back
    // by the headroom, into the spare room of its marginal slot; the tank re-plans with the
    // freed headroom. Kept only when the total improves.
    for (let round = 0; contested && round < 4; round++) {
      const room = (t: number): number => Math.min(ev.cap[t] as number, (s.headroomE[t] as number) - (best.q[t] as number));
      // Marginal slot: the dearest one the EV fills only partly (above its minimum, below the
      // room left); slots held at the minimum power cannot take more.
      let j = -1;
      best.ev.forEach((v, t) => {
        if (v <= TOL || ev.fixed[t] !== undefined) return;
        if (v > (ev.minE[t] as number) + TOL && v < room(t) - TOL && (j < 0 || (ev.price[t] as number) > (ev.price[j] as number))) j = t;
      });
      if (j < 0) break;
      let spare = room(j) - (best.ev[j] as number);
      const e2 = best.ev.slice();
      const shared = best.ev.map((_, t) => t).filter((t) => t !== j && (best.ev[t] as number) > TOL && ev.fixed[t] === undefined &&
        tk.fixed[t] === undefined && (ev.price[t] as number) < (ev.price[j] as number) &&
        (best.q[t] as number) + (best.ev[t] as number) >= (s.headroomE[t] as number) - TOL && (best.q[t] as number) < (tk.cap[t] as number) - TOL)
        .sort((x, y) => (s.price[x] as number) - (s.price[y] as number));
      for (const i of shared) {
        if (spare <= TOL) break;
        const ei = e2[i] as number;
        let d = Math.min(spare, (tk.cap[i] as number) - (best.q[i] as number), ei);
        if (ei - d > TOL && ei - d < (ev.minE[i] as number)) d = ei - (ev.minE[i] as number);
        if (d <= TOL) continue;
        e2[i] = ei - d;
        e2[j] = (e2[j] as number) + d;
        spare -= d;
      }
      if (e2.every((v, t) => v === best.ev[t])) break;
      const t1 = tankSolve(s, input, residual(tk.cap, e2), null, legSlot);
      const e3 = evSolve(s, input, residual(ev.cap, t1.q));
      const cands2: Cand[] = [{ ...t1, ev: e2, evOn: e2.map((v) => v > TOL) }, { ...t1, ev: e3.e, evOn: e3.on }];
      let improved = false;
      for (const c of cands2) {
        const v = objective(s, c.q, c.e, c.ev);
        if (v < bestV - 1e-9) {
          best = c;
          bestV = v;
          improved = true;
        }
      }
      if (!improved) break;
    }
    return { best, bestV };
  };
  let result = runWith(first.legSlot, first);
  let legSlot = first.legSlot;
  // The legionella slot was chosen for the tank alone; with the EV's use of the headroom a
  // later or earlier slot may be cheaper: choose again on what the EV leaves and keep the better.
  if (contested && tk.legionella && legSlot >= 0 && input.tank?.control === 'continuous' && !input.tank.antiCycling) {
    const alt = tankSolve(s, input, residual(tk.cap, result.best.ev), null, null);
    if (alt.legSlot >= 0 && alt.legSlot !== legSlot) {
      const other = runWith(alt.legSlot, tankSolve(s, input, tk.cap, null, alt.legSlot));
      if (other.bestV < result.bestV - 1e-9) {
        result = other;
        legSlot = alt.legSlot;
      }
    }
  }
  const best = result.best;
  return { q: best.q, tankE: best.e, tankOn: best.on, ev: best.ev, evOn: best.evOn, legionellaSlot: legSlot };
}
