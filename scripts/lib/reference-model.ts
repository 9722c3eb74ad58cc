/**
 * The planner's model as CPLEX-LP text for HiGHS (the benchmark's oracle): one tank and one car from
 * the planner's own setup (`referenceModel`), or any number of devices' parts tagged apart and put
 * together with shared rows (`deviceParts`, `lpText`), and the planner's cost of the same objective.
 */
import type { Setup } from '../../src/core/plan-setup.js';
import type { Plan, PlanInput } from '../../src/core/types.js';

export const n6 = (x: number): string => (Math.abs(x) < 1e-12 ? '0' : x.toFixed(9));
const term = (c: number, v: string): string => `${c >= 0 ? '+' : '-'} ${n6(Math.abs(c))} ${v}`;

/** One device's (or one pair's) part of a CPLEX-LP model: objective terms, rows, bounds, binaries. */
export interface ModelParts {
  obj: string[];
  rows: string[];
  bounds: string[];
  bins: string[];
}

/**
 * The rows of a setup's tank and car, every variable and row name tagged with `tag` (`q${tag}${t}`,
 * `s${tag}${t}`), so several devices' parts can share one model. Empty tag: the pair model's names.
 * The energy variables are `q${tag}${t}` (tank) and `e${tag}${t}` (car).
 */
export function deviceParts(s: Setup, input: PlanInput, tag = '', slotRows?: (t: number) => string[]): ModelParts {
  const obj: string[] = [];
  const rows: string[] = [];
  const bounds: string[] = [];
  const bins: string[] = [];
  const tk = s.tank;
  const ev = s.ev;
  const relay = input.tank?.control === 'relay';
  const v = (name: string, t: number | string): string => `${name}${tag}${t}`;
  for (let t = 0; t < s.n; t++) {
    const q = v('q', t);
    const E = v('E', t);
    if (tk) {
      const m = tk.model;
      obj.push(term(tk.price[t]!, q));
      const rhs = t === 0 ? m.a * tk.e0 - m.k[0]! : -m.k[t]!;
      rows.push(t === 0 ? `${v('s', t)}: ${E} - ${q} = ${n6(rhs)}` : `${v('s', t)}: ${E} ${term(-m.a, v('E', t - 1))} - ${q} = ${n6(rhs)}`);
      // The comfort floor, raised at comfort deadlines.
      bounds.push(`${n6(tk.floor[t]!)} <= ${E} <= ${n6(m.eMax)}`);
      if (relay) {
        const L = tk.relayLevel[t]!;
        const D = m.eMax - (m.a * m.eFloor - Math.max(...m.k));
        const u = v('u', t);
        const z = v('z', t);
        bounds.push(`0 <= ${q} <= ${n6(L)}`);
        // On: q = L unless the thermostat stops it at eMax (z = 1).
        rows.push(
          `${v('ru', t)}: ${q} - ${n6(L)} ${u} <= 0`,
          `${v('rz', t)}: ${z} - ${u} <= 0`,
          `${v('rq', t)}: ${q} - ${n6(L)} ${u} + ${n6(L)} ${z} >= 0`,
          `${v('rt', t)}: ${E} - ${n6(m.eMax - m.eFloor)} ${z} >= ${n6(m.eFloor)}`,
          // Valid cut (tightens the relaxation): on ⇒ q ≥ min(L, eMax − base) ≥ L·(eMax − base)/D,
          // base = E − q ≥ bLow, D = eMax − bLow; written as q·(1 − L/D) + L·E/D − L·u ≥ L·eMax/D − L.
          ...(L > 0 ? [`${v('rc', t)}: ${n6(1 - L / D)} ${q} + ${n6(L / D)} ${E} - ${n6(L)} ${u} >= ${n6((L * m.eMax) / D - L)}`] : []),
        );
        bins.push(u, z);
      } else bounds.push(`0 <= ${q} <= ${n6(tk.cap[t]!)}`);
    }
    if (ev) {
      const e = v('e', t);
      obj.push(term(ev.price[t]!, e));
      bounds.push(`0 <= ${e} <= ${n6(ev.cap[t]!)}`);
      if (ev.minE[t]! > 0 && ev.cap[t]! > 0) {
        rows.push(`${v('vu', t)}: ${e} - ${n6(ev.cap[t]!)} ${v('v', t)} <= 0`, `${v('vl', t)}: ${e} - ${n6(ev.minE[t]!)} ${v('v', t)} >= 0`);
        bins.push(v('v', t));
      }
    }
    if (slotRows) rows.push(...slotRows(t));
  }
  if (tk && s.n > 0) {
    rows.push(`${v('term', '')}: ${v('E', s.n - 1)} >= ${n6(tk.terminal)}`);
    const leg = tk.legionella;
    if (leg) {
      const w: string[] = [];
      for (let t = 0; t <= leg.bySlot; t++) {
        rows.push(`${v('lg', t)}: ${v('E', t)} - ${n6(leg.level - tk.model.eFloor)} ${v('w', t)} >= ${n6(tk.model.eFloor)}`);
        bins.push(v('w', t));
        w.push(v('w', t));
      }
      rows.push(`${v('lgany', '')}: ${w.join(' + ')} >= 1`);
    }
  }
  if (ev && s.n > 0) {
    const all = Array.from({ length: s.n }, (_, t) => v('e', t)).join(' + ');
    rows.push(`${v('need', '')}: ${all} >= ${n6(ev.needGrid)}`, `${v('most', '')}: ${all} <= ${n6(ev.needGrid + ev.maxExtraGrid + 1e-6)}`);
  }
  return { obj, rows, bounds, bins };
}

/** The CPLEX-LP text of parts put together. */
export function lpText(p: ModelParts): string {
  return `Minimize\n obj: ${p.obj.join(' ')}\nSubject To\n ${p.rows.join('\n ')}\nBounds\n ${p.bounds.join('\n ')}\n${p.bins.length > 0 ? `Binary\n ${p.bins.join(' ')}\n` : ''}End\n`;
}

/** CPLEX-LP text of the same model the planner solves (hard floors), for HiGHS. */
export function referenceModel(s: Setup, input: PlanInput): string {
  const headroom = (t: number): string[] => (s.tank && s.ev ? [`h${t}: q${t} + e${t} <= ${n6(s.headroomE[t]!)}`] : []);
  return lpText(deviceParts(s, input, '', headroom));
}

/** The planner's cost of the same objective (setup prices). */
export function plannerObjective(s: Setup, p: Plan): number {
  let c = 0;
  p.slots.forEach((sl, t) => {
    const tank = s.tank && sl.tanks?.[s.tank.id];
    const ev = s.ev && sl.evs?.[s.ev.id];
    if (tank && s.tank) c += s.tank.price[t]! * tank.energyKwh;
    if (ev && s.ev) c += s.ev.price[t]! * ev.energyKwh;
  });
  return c;
}
