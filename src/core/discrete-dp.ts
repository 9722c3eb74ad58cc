/**
 * Dynamic programme over stored energy for on/off devices (relay-only heaters) and for any
 * device with anti-cycling limits (minimum on/off slots, maximum starts per local day) or a
 * "reach X once by slot d" rule. States carry their exact energy; states whose energies fall
 * into the same grid bucket (`step` kWh) are merged, keeping the cheaper one (ties: more
 * energy). "On" delivers the requested level but never beyond `eMax` (the thermostat, or a
 * full battery), as the device itself does.
 *
 * Memory: the layer being built and the one before it are typed-array columns reused from slot
 * to slot; a finished slot keeps only what the backtrack needs, its states' predecessors and
 * actions (5 bytes a state), and all of it lives in a workspace the caller can reuse across
 * solves. The plan's q and E are replayed forwards along the chosen path with the same
 * arithmetic as the DP, so they are the same numbers bit for bit.
 */
import { WattshiftError } from '../errors.js';

export interface DiscreteProblem {
  a: number;
  k: ReadonlyArray<number>;
  e0: number;
  eMax: number;
  eLow: number;
  floor: ReadonlyArray<number>;
  terminal: number;
  penalty: number;
  /** A second, harder floor per slot (a room's frost floor) and its penalty per kWh below it. */
  hardFloor?: { floor: ReadonlyArray<number>; penalty: number };
  /** A lower ceiling than `eMax` per slot (a room's comfort band): "on" never heats beyond it. */
  eMaxAt?: ReadonlyArray<number>;
  /** Energy levels of "on" per slot (empty = the device must stay off; at most 255). */
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
  /**
   * Keep only the states no other state of the slot dominates: per slot, the most one more kWh of
   * state at its end can cost over the rest of the plan (0 where no later cost falls as q grows).
   * A state with as much energy or more whose cost, plus that much per kWh it holds above another,
   * is no more than the other's dominates it. Valid only without anti-cycling rules that bind and
   * without `reach`; the caller says so by giving it.
   */
  dominance?: ReadonlyArray<number>;
}

export interface DiscreteSolution {
  q: number[];
  e: number[];
  on: boolean[];
}

type Column = Int32Array | Float64Array | Uint8Array;

function grown<C extends Column>(c: C, capacity: number): C {
  const out = new (c.constructor as new (length: number) => C)(capacity);
  out.set(c);
  return out;
}

/**
 * The states of one slot as columns. `action` is 0 for off, else 1 + the index of the "on"
 * level (see `onLevelsAt`); `prev` is the index of the predecessor in the slot before.
 */
class Layer {
  size = 0;
  key = new Int32Array(64);
  e = new Float64Array(64);
  cost = new Float64Array(64);
  prev = new Int32Array(64);
  action = new Uint8Array(64);
  on = new Uint8Array(64);
  run = new Int32Array(64);
  starts = new Int32Array(64);
  leg = new Uint8Array(64);

  push(key: number, e: number, cost: number, prev: number, action: number, on: number, run: number, starts: number, leg: number): void {
    if (this.size === this.key.length) this.grow();
    const i = this.size++;
    this.key[i] = key;
    this.e[i] = e;
    this.cost[i] = cost;
    this.prev[i] = prev;
    this.action[i] = action;
    this.on[i] = on;
    this.run[i] = run;
    this.starts[i] = starts;
    this.leg[i] = leg;
  }

  /** Keeps the states `keep` marks (1), in their order, moving each down in place. */
  keepMarked(keep: Uint8Array): void {
    let j = 0;
    for (let i = 0; i < this.size; i++) {
      if (keep[i] !== 1) continue;
      if (j !== i) {
        this.key[j] = this.key[i] as number;
        this.e[j] = this.e[i] as number;
        this.cost[j] = this.cost[i] as number;
        this.prev[j] = this.prev[i] as number;
        this.action[j] = this.action[i] as number;
        this.on[j] = this.on[i] as number;
        this.run[j] = this.run[i] as number;
        this.starts[j] = this.starts[i] as number;
        this.leg[j] = this.leg[i] as number;
      }
      j++;
    }
    this.size = j;
  }

  private grow(): void {
    const n = 2 * this.key.length;
    this.key = grown(this.key, n);
    this.e = grown(this.e, n);
    this.cost = grown(this.cost, n);
    this.prev = grown(this.prev, n);
    this.action = grown(this.action, n);
    this.on = grown(this.on, n);
    this.run = grown(this.run, n);
    this.starts = grown(this.starts, n);
    this.leg = grown(this.leg, n);
  }
}

/**
 * Memory the DP reuses from one solve to the next (the joint search solves many times per
 * plan), so a plan does not leave a horizon's worth of buffers behind per solve.
 */
export class DiscreteWorkspace {
  readonly layers = [new Layer(), new Layer()] as const;
  /** `prev` and `action` of every state of every finished slot, slot after slot. */
  prev = new Int32Array(1024);
  action = new Uint8Array(1024);
  size = 0;

  /** Appends a finished layer's backtrack columns; returns where they start. */
  keep(layer: Layer): number {
    const at = this.size;
    this.size += layer.size;
    if (this.size > this.prev.length) {
      let n = this.prev.length;
      while (n < this.size) n *= 2;
      this.prev = grown(this.prev, n);
      this.action = grown(this.action, n);
    }
    this.prev.set(layer.prev.subarray(0, layer.size), at);
    this.action.set(layer.action.subarray(0, layer.size), at);
    return at;
  }
}

/** The positive "on" levels of slot t; action a ≥ 1 is level a − 1 of this list. */
function onLevelsAt(p: DiscreteProblem, t: number): number[] {
  const fixed = p.fixed?.[t];
  const levels = fixed !== undefined ? (fixed > 0 ? [fixed] : []) : (p.onLevels[t] ?? []);
  const on = levels.filter((level) => level > 0);
  if (on.length > 255) throw new WattshiftError('PLAN_INPUT_INVALID', `slot ${t}: more than 255 on-levels`);
  return on;
}

/** Energy "on" at `level` delivers from the state `base` (the thermostat stops it at eMax). */
function delivered(p: DiscreteProblem, level: number, base: number, t: number): number {
  return level > 0 ? Math.max(0, Math.min(level, (p.eMaxAt?.[t] ?? p.eMax) - base)) : 0;
}

/** The penalty of ending slot `t` at `e`: below the floor, and below the hard floor when there is one. */
function belowFloors(p: DiscreteProblem, t: number, floorT: number, e: number): number {
  const hard = p.hardFloor ? (p.hardFloor.floor[t] as number) : -Infinity;
  return (e < floorT ? p.penalty * (floorT - e) : 0) + (e < hard ? p.hardFloor!.penalty * (hard - e) : 0);
}

export function solveDiscrete(p: DiscreteProblem, ws = new DiscreteWorkspace()): DiscreteSolution {
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
  // Where each finished slot's states start in the workspace's backtrack columns.
  const slotStart = new Int32Array(n);
  ws.size = 0;
  let [cur, next] = ws.layers;
  cur.size = 0;
  const e0 = Math.min(p.e0, p.eMax);
  cur.push(0, e0, 0, -1, 0, p.initiallyOn === true ? 1 : 0, R, 0, p.reach && e0 >= p.reach.level ? 1 : 0);
  for (let t = 0; t < n; t++) {
    next.size = 0;
    const newDay = p.dayIndex !== undefined && t > 0 && p.dayIndex[t] !== p.dayIndex[t - 1];
    const fixed = p.fixed?.[t];
    const levels = onLevelsAt(p, t);
    const firstAction = fixed === undefined || fixed <= 0 ? 0 : 1;
    const kt = p.k[t] as number;
    const floorT = p.floor[t] as number;
    for (let i = 0; i < cur.size; i++) {
      const on = cur.on[i] as number;
      const run = cur.run[i] as number;
      const starts = newDay ? 0 : (cur.starts[i] as number);
      const base = p.a * (cur.e[i] as number) - kt;
      const c0 = cur.cost[i] as number;
      const leg0 = cur.leg[i] as number;
      for (let action = firstAction; action <= levels.length; action++) {
        const isOn = action > 0 ? 1 : 0;
        if (fixed === undefined) {
          if (on === 1 && isOn === 0 && run < minOn) continue;
          if (on === 0 && isOn === 1 && run < minOff) continue;
        }
        let st = starts;
        if (isOn === 1 && on === 0) {
          st++;
          if (st > S && fixed === undefined) continue;
        }
        const q = delivered(p, isOn === 1 ? (levels[action - 1] as number) : 0, base, t);
        let e = base + q;
        if (e < p.eLow) e = p.eLow;
        let cost = c0 + p.cost(t, q);
        cost += belowFloors(p, t, floorT, e);
        let leg = leg0;
        if (p.reach) {
          if (e >= p.reach.level - 1e-9) leg = 1;
          if (t === p.reach.bySlot && leg === 0) cost += p.penalty * (1 + p.reach.level - e);
        }
        const r = isOn === on ? Math.min(R, run + 1) : 1;
        const bucket = Math.min(nb, Math.max(0, Math.floor((e - p.eLow) / p.step)));
        const key = (((bucket * 2 + isOn) * (R + 1) + r) * startsDim + (limitStarts ? Math.min(st, S + 1) : 0)) * 2 + leg;
        const j = slotOf[key] as number;
        if (j < 0) {
          slotOf[key] = next.size;
          next.push(key, e, cost, i, action, isOn, r, st, leg);
        } else {
          const cj = next.cost[j] as number;
          if (cost < cj - 1e-12 || (cost <= cj + 1e-12 && e > (next.e[j] as number))) {
            next.e[j] = e;
            next.cost[j] = cost;
            next.prev[j] = i;
            next.action[j] = action;
            next.starts[j] = st;
          }
        }
      }
    }
    for (let j = 0; j < next.size; j++) slotOf[next.key[j] as number] = -1;
    if (p.dominance && next.size > 1) paretoFront(next, p.dominance[t] as number);
    if (next.size === 0) {
      // Every action was blocked (should not happen): stay off from the cheapest state.
      let best = 0;
      for (let i = 1; i < cur.size; i++) if ((cur.cost[i] as number) < (cur.cost[best] as number)) best = i;
      const e = Math.max(p.eLow, p.a * (cur.e[best] as number) - kt);
      next.push(0, e, (cur.cost[best] as number) + belowFloors(p, t, floorT, e), best, 0, 0, 1, 0, cur.leg[best] as number);
    }
    slotStart[t] = ws.keep(next);
    [cur, next] = [next, cur];
  }
  let best = 0;
  let bestCost = Infinity;
  for (let i = 0; i < cur.size; i++) {
    const e = cur.e[i] as number;
    const c = (cur.cost[i] as number) + (e < p.terminal ? p.penalty * (p.terminal - e) : 0);
    if (c < bestCost - 1e-12 || (c <= bestCost + 1e-12 && e > (cur.e[best] as number))) {
      bestCost = c;
      best = i;
    }
  }
  const actions = new Array<number>(n);
  let idx = best;
  for (let t = n - 1; t >= 0; t--) {
    const at = (slotStart[t] as number) + idx;
    actions[t] = ws.action[at] as number;
    idx = ws.prev[at] as number;
  }
  return replay(p, e0, actions);
}

/**
 * `dominance` for a problem whose cost is linear in q at `price(t)` per kWh of state: after slot
 * t, one more kWh held saves at most that kWh of later "on" energy, so it can cost at most the
 * largest later negative price (0 when none is negative).
 */
export function dominanceWeights(n: number, price: (t: number) => number): number[] {
  const out = new Array<number>(n).fill(0);
  for (let t = n - 2; t >= 0; t--) out[t] = Math.max(out[t + 1] as number, -price(t + 1));
  return out;
}

/** Scratch of `paretoFront`, grown as needed (a layer keeps a few dozen states). */
let frontOrder = new Int32Array(64);
let frontKeep = new Uint8Array(64);

/** Drops the states that one with as much energy or more reaches at no more cost, `w` per kWh above it counted. */
function paretoFront(layer: Layer, w: number): void {
  const n = layer.size;
  if (frontOrder.length < n) [frontOrder, frontKeep] = [new Int32Array(2 * n), new Uint8Array(2 * n)];
  const order = frontOrder;
  const keep = frontKeep;
  // Insertion sort by energy, highest first: short layers, and cheaper than a comparator sort.
  for (let i = 0; i < n; i++) {
    const e = layer.e[i] as number;
    let r = i;
    while (r > 0 && (layer.e[order[r - 1] as number] as number) < e) {
      order[r] = order[r - 1] as number;
      r--;
    }
    order[r] = i;
    keep[i] = 0;
  }
  let least = Infinity;
  let kept = 0;
  for (let r = 0; r < n; r++) {
    const i = order[r] as number;
    const c = (layer.cost[i] as number) + w * (layer.e[i] as number);
    if (c < least - 1e-12 * (1 + Math.abs(c))) {
      keep[i] = 1;
      least = c;
      kept++;
    }
  }
  if (kept < n) layer.keepMarked(keep);
}

/** q, E and on along the chosen actions, computed exactly as the DP computed them. */
function replay(p: DiscreteProblem, e0: number, actions: ReadonlyArray<number>): DiscreteSolution {
  const n = actions.length;
  const q = new Array<number>(n);
  const e = new Array<number>(n);
  const on = new Array<boolean>(n);
  let state = e0;
  for (let t = 0; t < n; t++) {
    const action = actions[t] as number;
    const base = p.a * state - (p.k[t] as number);
    q[t] = delivered(p, action > 0 ? (onLevelsAt(p, t)[action - 1] as number) : 0, base, t);
    state = base + (q[t] as number);
    if (state < p.eLow) state = p.eLow;
    e[t] = state;
    on[t] = action > 0;
  }
  return { q, e, on };
}
