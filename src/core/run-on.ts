/**
 * What control adds to a plan in paid-to-consume slots. Where a slot's effective price is negative,
 * control heats the tank on to maxC whatever the slot's planned energy (src/core/control.ts); the
 * heat stored there leaves less room afterwards, where the tank's thermostat cuts planned heating
 * short. This follows the plan's own tank model through both, so that the plan's expected cost
 * counts what control will do. Pure.
 */
import type { Setup } from './plan-setup.js';
import type { Solved } from './solve.js';

/** Per slot, kWh: what control adds (> 0) to the planned tank energy, or what the full tank cuts from it (< 0). */
export function runOnByControl(s: Setup, sol: Solved): number[] {
  const out = new Array<number>(s.n).fill(0);
  const tk = s.tank;
  if (!tk || s.allFallback) return out;
  // Heat above the plan's own trajectory, kWh; it decays with the tank's losses like any other.
  let carried = 0;
  for (let t = 0; t < s.n; t++) {
    carried *= tk.model.a;
    const q = sol.q[t] as number;
    const room = tk.model.eMax - ((sol.tankE[t] as number) + carried);
    const paid = (s.price[t] as number) < 0;
    // The most the element can put in this slot: its cap and the headroom the car leaves.
    const most = Math.max(0, Math.min(tk.cap[t] as number, (s.headroomE[t] as number) - (sol.ev[t] as number)));
    const d = Math.max(-q, paid ? Math.min(most - q, room) : Math.min(0, room));
    out[t] = d;
    carried += d;
  }
  return out;
}
