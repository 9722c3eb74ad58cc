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

const TOL = 1e-9;
/** Rounds of the exchange polish at most. */
const EXCHANGE_ROUNDS = 4;

type TankPart = { q: number[]; e: number[]; on: boolean[] };
type TankSol = TankPart & { legSlot: number };
type Cand = TankPart & { ev: number[]; evOn: boolean[] };

/**
 * One joint solve with the legionella slot fixed at `legSlot`, starting from the tank's own
 * plan `first`: the candidates below, the cheapest of them, then the exchange polish.
 */
function jointWithLegionellaAt(
  s: Setup,
  input: PlanInput,
  tk: TankSetup,
  ev: EvSetup,
  contested: boolean,
  legSlot: number,
  first: TankPart,
): { best: Cand; bestV: number } {
  const value = (c: Cand): number => objective(s, c.q, c.e, c.ev);
  const tankAt = (cap: number[]): TankSol => tankSolve(s, input, cap, null, legSlot);
  /** The EV on what the tank leaves; when contested, the tank again on what the EV leaves, and the EV once more. */
  const polish = (t0: TankPart): Cand => {
    const e1 = evSolve(s, input, residualCaps(ev.cap, s.headroomE, t0.q));
    if (!contested) return { ...t0, ev: e1.e, evOn: e1.on };
    const t1 = tankAt(residualCaps(tk.cap, s.headroomE, e1.e));
    const e2 = evSolve(s, input, residualCaps(ev.cap, s.headroomE, t1.q));
    return { q: t1.q, e: t1.e, on: t1.on, ev: e2.e, evOn: e2.on };
  };
  // With a minimum EV power the continuous EV fill may end in a slot below the minimum. Then
  // the tank gives that much headroom back in the cheapest shared slots (and re-plans), so
  // the EV can take it there instead.
  const borrow = (q: number[]): number[] | null => {
    const fill = solveEv({
      price: ev.price,
      cap: residualCaps(ev.cap, s.headroomE, q),
      minE: ev.minE.map(() => 0),
      need: ev.needGrid,
      maxExtra: ev.maxExtraGrid,
      fixed: ev.fixed,
    });
    return borrowCaps(fill.e, ev, tk, q);
  };
  const cands: Cand[] = [polish(first)];
  if (contested) cands.push(...contestedCandidates(s, input, tk, ev, legSlot, first, polish, borrow));
  const chosen = cheapest(cands, value);
  return contested ? exchangePolish(s, input, tk, ev, legSlot, chosen) : chosen;
}

/**
 * The candidates only a contested headroom needs: the tank's plan giving headroom back, the EV
 * first, the Lagrangian's plan at the smallest λ that leaves the EV its energy, and the plan just
 * below that λ with the tank giving back only the EV's deficit.
 */
function contestedCandidates(
  s: Setup,
  input: PlanInput,
  tk: TankSetup,
  ev: EvSetup,
  legSlot: number,
  first: TankPart,
  polish: (t: TankPart) => Cand,
  borrow: (q: number[]) => number[] | null,
): Cand[] {
  const cands: Cand[] = [];
  const tankAt = (cap: number[]): TankSol => tankSolve(s, input, cap, null, legSlot);
  const b0 = borrow(first.q);
  if (b0) cands.push(polish(tankAt(b0)));
  // EV first, then the tank on what is left.
  const e0 = evSolve(s, input, ev.cap);
  const t0 = tankAt(residualCaps(tk.cap, s.headroomE, e0.e));
  cands.push({ ...t0, ev: e0.e, evOn: e0.on });
  // Lagrangian: price the EV's displaced energy at λ and search the smallest λ that leaves
  // the EV its energy.
  const evPotential = ev.cap.map((c, t) => Math.min(c, s.headroomE[t] as number));
  const coupledAt = (lambda: number): TankSol => tankSolve(s, input, tk.cap, { lambda, evPotential }, legSlot);
  let below: { sol: TankSol; lambda: number } | null = null;
  const solveAt = (lambda: number): TankSol | null => {
    const sol = coupledAt(lambda);
    if (evDemandAt(sol.q, lambda, ev, s.headroomE) >= ev.needGrid - TOL) return sol;
    // Remember the dearest λ that still left the EV short.
    if (!(lambda <= (below?.lambda ?? NaN))) below = { sol, lambda };
    return null;
  };
  const evSlots = evFreeSlots(ev);
  // Even all its slots may not give the EV its energy at the dearest price: then the tank is
  // pushed out of the shared slots (below the tank's own floor penalty).
  const hiSol = searchLambda(distinctPrices(evSlots, ev.price), s.penalty, solveAt, coupledAt);
  if (hiSol) {
    cands.push(polish(hiSol));
    const b = borrow(hiSol.q);
    if (b) cands.push(polish(tankAt(b)));
  }
  // The Lagrangian is not differentiable where the tank leaves the shared slots all at once:
  // below λ the EV is short, above it the tank has left more than needed. Mix: start from
  // the plan just below λ and let the tank give back only the EV's deficit, in a few orders.
  const last = below as { sol: TankSol; lambda: number } | null;
  if (last) {
    const { sol, lambda } = last;
    const deficit = ev.needGrid - evDemandAt(sol.q, lambda, ev, s.headroomE);
    const shared = evSlots.filter((t) => (sol.q[t] as number) > TOL && (ev.price[t] as number) < lambda);
    for (const order of giveBackOrders(shared, ev.price)) {
      const caps = deficitCaps(tk.cap, sol.q, evSlots, order, deficit);
      if (caps) cands.push(polish(tankAt(caps)));
    }
  }
  return cands;
}

/**
 * Exchange polish: the EV moves energy from cheap shared slots, where the tank is held back by
 * the headroom, into the spare room of its marginal slot; the tank re-plans with the freed
 * headroom. Kept only when the total improves.
 */
function exchangePolish(
  s: Setup,
  input: PlanInput,
  tk: TankSetup,
  ev: EvSetup,
  legSlot: number,
  start: { best: Cand; bestV: number },
): { best: Cand; bestV: number } {
  let { best, bestV } = start;
  for (let round = 0; round < EXCHANGE_ROUNDS; round++) {
    const room = evRoom(ev.cap, s.headroomE, best.q);
    const j = marginalEvSlot(best.ev, room, ev);
    if (j < 0) break;
    const moved = exchangeIntoMarginal(j, (room[j] as number) - (best.ev[j] as number), best, ev, tk, s.headroomE, s.price);
    if (moved.every((v, t) => v === best.ev[t])) break;
    const t1 = tankSolve(s, input, residualCaps(tk.cap, s.headroomE, moved), null, legSlot);
    const e3 = evSolve(s, input, residualCaps(ev.cap, s.headroomE, t1.q));
    const step = improveOn(
      best,
      bestV,
      [
        { ...t1, ev: moved, evOn: moved.map((v) => v > TOL) },
        { ...t1, ev: e3.e, evOn: e3.on },
      ],
      (c) => objective(s, c.q, c.e, c.ev),
    );
    ({ best, bestV } = step);
    if (!step.improved) break;
  }
  return { best, bestV };
}

export function solveJoint(s: Setup, input: PlanInput, tk: TankSetup, ev: EvSetup): Solved {
  const contested = headroomContested(tk.cap, ev.cap, s.headroomE);
  const first = tankSolve(s, input, tk.cap, null, null);
  let result = jointWithLegionellaAt(s, input, tk, ev, contested, first.legSlot, first);
  let legSlot = first.legSlot;
  // The legionella slot was chosen for the tank alone; with the EV's use of the headroom a
  // later or earlier slot may be cheaper: choose again on what the EV leaves and keep the better.
  const tank = input.tank;
  if (mayRechooseLegionella({ contested, legionella: tk.legionella !== null, legSlot, control: tank?.control, antiCycling: !!tank?.antiCycling })) {
    const alt = tankSolve(s, input, residualCaps(tk.cap, s.headroomE, result.best.ev), null, null);
    if (alt.legSlot >= 0 && alt.legSlot !== legSlot) {
      const other = jointWithLegionellaAt(s, input, tk, ev, contested, alt.legSlot, tankSolve(s, input, tk.cap, null, alt.legSlot));
      if (other.bestV < result.bestV - 1e-9) {
        result = other;
        legSlot = alt.legSlot;
      }
    }
  }
  const best = result.best;
  return { q: best.q, tankE: best.e, tankOn: best.on, ev: best.ev, evOn: best.evOn, legionellaSlot: legSlot };
}
