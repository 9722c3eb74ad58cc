/**
 * Dynamic programme over stored energy for on/off devices (relay-only heaters) and for any
 * device with anti-cycling limits (minimum on/off slots, maximum starts per local day) or a
 * "reach X once by slot d" rule. States carry their exact energy; states whose energies fall
 * into the same grid bucket (`step` kWh) are merged, keeping the cheaper one (ties: more
 * energy). "On" delivers the requested level but never beyond `eMax` (the thermostat, or a
 * full battery), as the device itself does.
 */
export interface DiscreteProblem {
  a: number;
  k: ReadonlyArray<number>;
  e0: number;
  eMax: number;
  eLow: number;
  floor: ReadonlyArray<number>;
  terminal: number;
  penalty: number;
  /** Energy levels of "on" per slot (empty = the device must stay off). */
  onLevels: ReadonlyArray<ReadonlyArray<number>>;
  /** Fixed decision per slot (frozen window): energy level, 0 = off; undefined = free. */
  fixed?: ReadonlyArray<number | undefined>;
  cost: (t: number, q: number) => number;
  step: number;
  minOnSlots?: number;
  minOffSlots?: number;
  maxStartsPerDay?: number;
  dayIndex?: ReadonlyArray<number>;
  /** Whether the device was on in the slot before the plan. */
  initiallyOn?: boolean;
  reach?: { level: number; bySlot: number } | null;
}

export interface DiscreteSolution {
  q: number[];
  e: number[];
  on: boolean[];
}

interface Layer {
  keys: number[];
  e: number[];
  cost: number[];
  prev: number[];
  q: number[];
  on: number[];
  run: number[];
  starts: number[];
  leg: number[];
}

function layer(): Layer {
  return { keys: [], e: [], cost: [], prev: [], q: [], on: [], run: [], starts: [], leg: [] };
}

export function solveDiscrete(p: DiscreteProblem): DiscreteSolution {
  const n = p.k.length;
  const minOn = Math.max(1, p.minOnSlots ?? 1);
  const minOff = Math.max(1, p.minOffSlots ?? 1);
  const R = Math.max(minOn, minOff);
  const S = p.maxStartsPerDay ?? Infinity;
  const limitStarts = Number.isFinite(S);
  const nb = Math.ceil((p.eMax - p.eLow) / p.step) + 2;
  const startsDim = limitStarts ? S + 2 : 1;
  // Key → index of the state in the layer being built (-1: none); reset after each layer.
  const slotOf = new Int32Array((nb + 1) * 2 * (R + 1) * startsDim * 2).fill(-1);
  const layers: Layer[] = [];
  let cur = layer();
  const e0 = Math.min(p.e0, p.eMax);
  cur.keys.push(0);
  cur.e.push(e0);
  cur.cost.push(0);
  cur.prev.push(-1);
  cur.q.push(0);
  cur.on.push(p.initiallyOn === true ? 1 : 0);
  cur.run.push(R);
  cur.starts.push(0);
  cur.leg.push(p.reach && e0 >= p.reach.level ? 1 : 0);
  layers.push(cur);
  for (let t = 0; t < n; t++) {
    const next = layer();
    const newDay = p.dayIndex !== undefined && t > 0 && p.dayIndex[t] !== p.dayIndex[t - 1];
    const fixed = p.fixed?.[t];
    const levels = fixed !== undefined ? (fixed > 0 ? [fixed] : []) : (p.onLevels[t] ?? []);
    const allowOff = fixed === undefined || fixed <= 0;
    const kt = p.k[t] as number;
    const floorT = p.floor[t] as number;
    const actions: number[] = allowOff ? [0] : [];
    for (const level of levels) if (level > 0) actions.push(level);
    for (let i = 0; i < cur.e.length; i++) {
      const on = cur.on[i] as number;
      const run = cur.run[i] as number;
      const starts = newDay ? 0 : (cur.starts[i] as number);
      const base = p.a * (cur.e[i] as number) - kt;
      const c0 = cur.cost[i] as number;
      const leg0 = cur.leg[i] as number;
      for (const level of actions) {
        const isOn = level > 0 ? 1 : 0;
        if (fixed === undefined) {
          if (on === 1 && isOn === 0 && run < minOn) continue;
          if (on === 0 && isOn === 1 && run < minOff) continue;
        }
        let st = starts;
        if (isOn === 1 && on === 0) {
          st++;
          if (st > S && fixed === undefined) continue;
        }
        const q = isOn === 1 ? Math.max(0, Math.min(level, p.eMax - base)) : 0;
        let e = base + q;
        if (e < p.eLow) e = p.eLow;
        let cost = c0 + p.cost(t, q);
        if (e < floorT) cost += p.penalty * (floorT - e);
        let leg = leg0;
        if (p.reach) {
          if (e >= p.reach.level - 1e-9) leg = 1;
          if (t === p.reach.bySlot && leg === 0) cost += p.penalty * (1 + p.reach.level - e);
        }
        const r = isOn === on ? Math.min(R, run + 1) : 1;
        const bucket = Math.min(nb, Math.max(0, Math.floor((e - p.eLow) / p.step)));
        const key = ((((bucket * 2 + isOn) * (R + 1) + r) * startsDim + (limitStarts ? Math.min(st, S + 1) : 0)) * 2) + leg;
        const j = slotOf[key] as number;
        if (j < 0) {
          slotOf[key] = next.e.length;
          next.keys.push(key);
          next.e.push(e);
          next.cost.push(cost);
          next.prev.push(i);
          next.q.push(q);
          next.on.push(isOn);
          next.run.push(r);
          next.starts.push(st);
          next.leg.push(leg);
        } else {
          const cj = next.cost[j] as number;
          if (cost < cj - 1e-12 || (cost <= cj + 1e-12 && e > (next.e[j] as number))) {
            next.e[j] = e;
            next.cost[j] = cost;
            next.prev[j] = i;
            next.q[j] = q;
            next.starts[j] = st;
          }
        }
      }
    }
    for (const key of next.keys) slotOf[key] = -1;
    if (next.e.length === 0) {
      // Every action was blocked (should not happen): stay off from the cheapest state.
      let best = 0;
      for (let i = 1; i < cur.e.length; i++) if ((cur.cost[i] as number) < (cur.cost[best] as number)) best = i;
      const e = Math.max(p.eLow, p.a * (cur.e[best] as number) - kt);
      next.keys.push(0);
      next.e.push(e);
      next.cost.push((cur.cost[best] as number) + (e < floorT ? p.penalty * (floorT - e) : 0));
      next.prev.push(best);
      next.q.push(0);
      next.on.push(0);
      next.run.push(1);
      next.starts.push(0);
      next.leg.push(cur.leg[best] as number);
    }
    layers.push(next);
    cur = next;
  }
  let best = 0;
  let bestCost = Infinity;
  for (let i = 0; i < cur.e.length; i++) {
    const e = cur.e[i] as number;
    const c = (cur.cost[i] as number) + (e < p.terminal ? p.penalty * (p.terminal - e) : 0);
    if (c < bestCost - 1e-12 || (c <= bestCost + 1e-12 && e > (cur.e[best] as number))) {
      bestCost = c;
      best = i;
    }
  }
  const q = new Array<number>(n);
  const e = new Array<number>(n);
  const on = new Array<boolean>(n);
  let idx = best;
  for (let t = n; t >= 1; t--) {
    const L = layers[t] as Layer;
    q[t - 1] = L.q[idx] as number;
    e[t - 1] = L.e[idx] as number;
    on[t - 1] = (L.on[idx] as number) === 1;
    idx = L.prev[idx] as number;
  }
  return { q, e, on };
}
