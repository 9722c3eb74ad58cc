/**
 * Solves a set-up plan: nothing, the tank alone, the car alone (`solve.ts`), or both together
 * (`joint.ts`, which builds on the single solves; kept apart so that neither imports the other).
 */
import type { Setup, TankSetup } from './plan-setup.js';
import type { PlanInput } from './types.js';
import { evSolve, tankSolve, type Solved } from './solve.js';
import { solveJoint } from './joint.js';

export function solveSetup(s: Setup, input: PlanInput): Solved {
  const zero = new Array<number>(s.n).fill(0);
  const off = new Array<boolean>(s.n).fill(false);
  const tk = s.tank;
  const ev = s.ev;
  if (!tk && !ev) return { q: zero, tankE: zero, tankOn: off, ev: zero, evOn: off, legionellaSlot: -1 };
  if (!ev) {
    const r = tankSolve(s, input, (tk as TankSetup).cap, null, null);
    return { q: r.q, tankE: r.e, tankOn: r.on, ev: zero, evOn: off, legionellaSlot: r.legSlot };
  }
  if (!tk) {
    const r = evSolve(s, input, ev.cap);
    return { q: zero, tankE: zero, tankOn: off, ev: r.e, evOn: r.on, legionellaSlot: -1 };
  }
  return solveJoint(s, input, tk, ev);
}
