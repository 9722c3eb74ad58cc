/**
 * Any number of tanks and cars under one location limit. A home with one tank and one car at most
 * is the pair planner's (`plan`) plan. A larger home is planned device by device with the pair
 * planner's own solvers (the tank's DP, the car's fill), cheap enough to run a few hundred times:
 * when the devices' own best plans do not fit the headroom together, candidates are made by block
 * coordinate descent (each device in turn on what the others leave) from a few starting orders and
 * from shadow prices on the headroom (a few subgradient steps), and the best is improved by
 * exchanges of headroom between two devices (see `exchange`). A shortfall counts before any cost.
 * Each device's plan is then made by the pair planner on what the others leave. Pure.
 */
import { plan as planPair } from './planner.js';
import { setupPlan, type Setup } from './plan-setup.js';
import { frozenPrevious, frozenWindowEndMs } from './plan-setup-steps.js';
import { evSolve, objective, tankSolve } from './solve.js';
import { reservationOutcomes } from './reservations.js';
import { setupZone, zoneBaseline, zoneCost, zonePlan, zoneSolve, type ZoneSetup } from './zone-plan.js';
import type {
  AntiCycling,
  DeviceSlotPlan,
  EvParams,
  HomePlanInput,
  LpcCap,
  Plan,
  PlanInput,
  PlanSlot,
  Shortfall,
  TankParams,
  ZoneParams,
} from './types.js';

type Tank = TankParams & { id: string };
type Ev = EvParams & { id: string };
/** One device of the home: a tank, a car or a heated zone. */
type Kind = [Tank | null, Ev | null, ZoneParams | null];
/** One device alone: its largest energy per slot (power, its LPC caps, the headroom) and its solver's price per slot. */
interface Device {
  input: PlanInput;
  s: Setup;
  cap: number[];
  price: number[];
  /** A heated zone (`s` is then the location's set-up, without devices). */
  zone?: ZoneSetup;
  /** The device's solutions by their inputs (see `solve`). */
  memo: Map<string, Sol>;
}
/** A device's energy per slot (the rest of the slot) and its cost, penalties for shortfalls included. */
interface Sol {
  x: number[];
  cost: number;
  /** A tank's legionella slot (-1: none). */
  leg: number;
}

const TOL = 1e-9;
/** Rounds of a descent (each re-plans every device once), subgradient steps, solves the exchanges may spend. */
const MAX_ROUNDS = 6;
const DUAL_ITERS = 8;
const SOLVE_BUDGET = 72;
/** Solutions a device remembers (a plan asks a few hundred questions at most). */
const MEMO_SIZE = 512;

/**
 * A tank's anti-cycling rules when they can bind, else null. Rules that cannot bind (a run and a
 * pause of one slot, more starts a day than one every other slot allows) change nothing in the
 * plan, and without them the tank is solved by the continuous DP instead of the discrete one: in a
 * home of several devices, planned with a few dozen solves per device, that is about 30 ms against
 * about 1 s (a tank and two cars over 48 hours).
 */
export function bindingAntiCycling(ac: AntiCycling | null | undefined, slotMinutes: number): AntiCycling | null {
  if (!ac) return null;
  const mostStartsPerDay = Math.ceil((24 * 60) / slotMinutes / 2);
  return (ac.minOnSlots ?? 1) <= 1 && (ac.minOffSlots ?? 1) <= 1 && (ac.maxStartsPerDay ?? Infinity) >= mostStartsPerDay ? null : ac;
}

/** A home input of the pair planner's input (tests, benchmarks and one-device homes). */
export function homeInputOf(input: PlanInput): HomePlanInput {
  const { tank, ev, ...rest } = input;
  return { ...rest, tanks: tank ? [{ ...tank, id: tank.id ?? 'tank' }] : [], evs: ev ? [{ ...ev, id: ev.id ?? 'ev' }] : [] };
}

/** A device-scoped cap belongs to a device when it names it, or no device of its kind. */
function capsFor(lpc: ReadonlyArray<LpcCap>, tank: Tank | null, ev: Ev | null): LpcCap[] {
  return lpc.filter((c) => {
    if (c.scope === 'location') return true;
    const device = c.scope === 'tank' ? tank : ev;
    return device !== null && (c.deviceId === undefined || c.deviceId === device.id);
  });
}

/**
 * `solveOnce`, remembered: the search asks the same device the same question many times (a room's
 * cap is mostly its own heater's, whatever the others leave), and a solve is deterministic.
 */
function solve(d: Device, cap: number[], lambda?: number[], leg0: number | null = null): Sol {
  const key = `${cap.join()}|${lambda?.join() ?? ''}|${leg0}`;
  const known = d.memo.get(key);
  if (known) return known;
  const sol = solveOnce(d, cap, lambda, leg0);
  if (d.memo.size >= MEMO_SIZE) d.memo.clear();
  d.memo.set(key, sol);
  return sol;
}

/** One device's plan (its solver on `cap`) and its cost, a shortfall at the pair planner's penalty. */
function solveOnce(d: Device, cap: number[], lambda?: number[], leg0: number | null = null): Sol {
  if (d.zone) {
    const z = zoneSolve(d.zone, cap, d.s.dayIndex, lambda, d.s.workspace);
    return { x: z.q, cost: zoneCost(d.zone, z), leg: -1 };
  }
  const tk = d.s.tank;
  // With shadow prices λ the solver sees price + λ; the cost is at the plain prices.
  const plus = (p: number[]): number[] => p.map((v, t) => v + (lambda?.[t] ?? 0));
  const priced: Setup = !lambda
    ? d.s
    : tk
      ? { ...d.s, tank: { ...tk, price: plus(tk.price) } }
      : { ...d.s, ev: { ...d.s.ev!, price: plus(d.s.ev!.price) } };
  if (!tk) {
    const x = evSolve(priced, d.input, cap).e;
    return { x, cost: objective(d.s, x, x, x), leg: -1 };
  }
  const r = tankSolve(priced, d.input, cap, null, leg0);
  let cost = objective(d.s, r.q, r.e, r.q);
  const leg = tk.legionella;
  if (leg) {
    let top = -Infinity;
    for (let t = 0; t <= leg.bySlot; t++) top = Math.max(top, r.e[t] ?? -Infinity);
    if (top < leg.level - 1e-4) cost += d.s.penalty * (1 + leg.level - top);
  }
  return { x: r.q, cost, leg: r.legSlot };
}

const total = (sols: ReadonlyArray<Sol>): number => sols.reduce((sum, x) => sum + x.cost, 0);
const better = (a: number, b: number): boolean => a < b - 1e-9 * (1 + Math.abs(b));

/** Device by device within the headroom: see the file's head. */
function solveHome(devices: ReadonlyArray<Device>, orders: ReadonlyArray<number[]>): Sol[] {
  const n = devices[0]!.s.n;
  const headroom = devices[0]!.s.headroomE;
  // What the others leave of the headroom to device i, within its own cap.
  const residual = (sols: ReadonlyArray<Sol | null>, i: number): number[] => {
    const left = headroom.slice();
    sols.forEach((x, j) => {
      if (j !== i && x !== null) for (let t = 0; t < n; t++) left[t] = (left[t] as number) - (x.x[t] as number);
    });
    const own = devices[i]!.cap;
    for (let t = 0; t < n; t++) left[t] = Math.max(0, Math.min(own[t] as number, left[t] as number));
    return left;
  };
  const fits = (xs: ReadonlyArray<Sol>): boolean => headroom.every((h, t) => xs.reduce((sum, x) => sum + (x.x[t] as number), 0) <= h + 1e-6);
  // Nothing contested: each device's own best plan.
  const alone = devices.map((d) => solve(d, d.cap));
  if (fits(alone)) return alone;
  // A tank keeps its legionella slot (finding the best one again costs two more DPs) but in the last descent.
  const descend = (sols: Sol[], order: ReadonlyArray<number>, fresh = false): void => {
    for (let round = 0, moved = true; round < MAX_ROUNDS && moved; round++) {
      moved = false;
      for (const i of order) {
        const next = solve(devices[i]!, residual(sols, i), undefined, fresh ? null : sols[i]!.leg);
        if (better(next.cost, sols[i]!.cost)) [sols[i], moved] = [next, true];
      }
    }
  };
  let best: Sol[] | null = null;
  const candidate = (order: ReadonlyArray<number>, lambda?: number[]): void => {
    const sols: (Sol | null)[] = devices.map(() => null);
    for (const i of order) sols[i] = solve(devices[i]!, residual(sols, i), lambda, alone[i]!.leg);
    descend(sols as Sol[], order);
    if (!best || better(total(sols as Sol[]), total(best))) best = sols as Sol[];
  };
  for (const order of new Map(orders.map((o) => [o.join(), o])).values()) candidate(order);
  // Shadow prices: each device alone at price + λ, λ rising where together they take more than the headroom.
  const lambda = new Array<number>(n).fill(0);
  let [lo, hi] = [Infinity, -Infinity];
  for (const d of devices) for (const p of d.price) [lo, hi] = [Math.min(lo, p), Math.max(hi, p)];
  for (let k = 1, xs = alone.map((x) => x.x); k <= DUAL_ITERS; k++, xs = devices.map((d, i) => solve(d, d.cap, lambda, alone[i]!.leg).x)) {
    let over = false;
    for (let t = 0; t < n; t++) {
      const use = xs.reduce((sum, x) => sum + (x[t] as number), 0) - (headroom[t] as number);
      over ||= use > 1e-6;
      lambda[t] = Math.max(0, (lambda[t] as number) + ((hi - lo) / (2 * Math.sqrt(k))) * (use / ((headroom[t] as number) + 1)));
    }
    if (!over) break;
  }
  candidate(orders[0]!, lambda);
  return exchange(devices, best!, residual, fits, descend);
}

/**
 * Exchanges: j gives up (part of) a slot where the headroom is all used to i, which would rather use
 * it than its dearest slot; j re-plans without it, i with it, j on what is left. Moves are tried best
 * estimate first (i's saving less j's cost of moving to its next slot with room); the first that
 * lowers the home's cost stays and the search starts over, within a budget of solves.
 */
function exchange(
  devices: ReadonlyArray<Device>,
  sols: Sol[],
  residual: (xs: ReadonlyArray<Sol | null>, i: number) => number[],
  fits: (xs: ReadonlyArray<Sol>) => boolean,
  descend: (xs: Sol[], order: ReadonlyArray<number>, fresh: boolean) => void,
): Sol[] {
  const n = devices[0]!.s.n;
  const all = devices.map((_, i) => i);
  for (let spent = 0, moved = true; spent < SOLVE_BUDGET && moved;) {
    moved = false;
    const free = devices[0]!.s.headroomE.map((h, t) => sols.reduce((f, x) => f - (x.x[t] as number), h));
    // The price of a device's cheapest slot but `not` that still has room for it.
    const nextPrice = (d: Device, x: number[], not: number): number =>
      d.price.reduce(
        (m, p, t) => (t !== not && (d.cap[t] as number) - (x[t] as number) > TOL && (free[t] as number) > 1e-6 ? Math.min(m, p) : m),
        Infinity,
      );
    const moves: { i: number; j: number; t: number; keep: number; est: number }[] = [];
    const worth = 2e-4 * Math.max(0.5, Math.abs(total(sols))); // moves worth less than 0.02 % of the cost are not tried
    for (const i of all) {
      const di = devices[i]!;
      const xi = sols[i]!.x;
      const dearest = di.price.reduce((m, p, t) => ((xi[t] as number) > TOL ? Math.max(m, p) : m), -Infinity);
      const short = sols[i]!.cost >= di.s.penalty;
      for (let t = 0; t < n; t++) {
        const spare = (di.cap[t] as number) - (xi[t] as number);
        const room = Math.max(0, free[t] as number);
        if (spare <= TOL || room >= spare - TOL || (!short && (di.price[t] as number) >= dearest - TOL)) continue;
        for (const j of all) {
          const xj = sols[j]!.x[t] as number;
          if (j === i || xj <= TOL) continue;
          const minJ = devices[j]!.s.ev?.minE[t] ?? 0;
          const least = Math.max(0, xj - spare + room);
          // What j keeps: as little as i can use, or its minimum power (so it keeps the slot).
          for (const keep of new Set([least, Math.max(least, Math.min(xj, minJ))])) {
            const lost = keep + TOL < minJ ? xj : xj - keep;
            const moveTo = nextPrice(devices[j]!, sols[j]!.x, t);
            const cost = lost * (Number.isFinite(moveTo) ? Math.max(0, moveTo - (devices[j]!.price[t] as number)) : di.s.penalty);
            const est = Math.min(spare, xj - keep + room) * (short ? di.s.penalty : dearest - (di.price[t] as number)) - cost;
            if (lost > TOL && est > worth) moves.push({ i, j, t, keep, est });
          }
        }
      }
    }
    moves.sort((a, b) => b.est - a.est);
    for (const m of moves) {
      if (spent >= SOLVE_BUDGET) break;
      const trial = sols.slice();
      const capJ = residual(sols, m.j);
      capJ[m.t] = m.keep;
      const again = (k: number, cap = residual(trial, k)): Sol => solve(devices[k]!, cap, undefined, sols[k]!.leg);
      trial[m.j] = again(m.j, capJ);
      trial[m.i] = again(m.i);
      trial[m.j] = again(m.j);
      spent += 3;
      if (fits(trial) && better(total(trial), total(sols))) {
        sols = trial;
        moved = true;
        break;
      }
    }
  }
  descend(sols, all, true);
  return sols;
}

/**
 * Plans every tank and car of the home over the input's slots from `nowMs` on (see `plan` for the
 * rules of one pair: frozen slots, the fallback without prices, shortfalls instead of throwing).
 */
export function planHome(input: HomePlanInput, nowMs: number, previous?: Plan): Plan {
  const lpc = input.location.lpc ?? [];
  const plan = planDevices(input, nowMs, previous);
  if (!lpc.some((c) => c.reservationId !== undefined)) return plan;
  // A reservation is only probable: keeping it may cost money, never a need. When it leaves a
  // comfort deadline, the floor or a departure shorter than planning without it, it is not kept.
  const unmet = (p: Plan): number => p.shortfalls.filter((f) => f.device !== 'location').reduce((sum, f) => sum + f.amount, 0);
  if (unmet(plan) > 1e-6) {
    const without = planDevices(
      { ...input, location: { ...input.location, lpc: lpc.filter((c) => c.reservationId === undefined) } },
      nowMs,
      previous,
    );
    if (unmet(without) < unmet(plan) - 1e-6) return { ...without, reservations: reservationOutcomes(without, lpc, slotFlexKwh, false) };
  }
  return { ...plan, reservations: reservationOutcomes(plan, lpc, slotFlexKwh, true) };
}

function planDevices(input: HomePlanInput, nowMs: number, previous?: Plan): Plan {
  const common: PlanInput = {
    slots: input.slots,
    timezone: input.timezone,
    currency: input.currency,
    location: input.location,
    ...(input.options ? { options: input.options } : {}),
  };
  // The pair planner drops the slots that ended before `nowMs`: how many lead the input.
  const ended = ((i) => (i < 0 ? input.slots.length : i))(input.slots.findIndex((s) => s.endMs > nowMs));
  const base = input.location.baseLoadKw;
  const baseAt = (i: number): number => (typeof base === 'number' ? base : (base[i] ?? 0));
  const pairInput = (tank: Tank | null, ev: Ev | null, others: number[] | null): PlanInput => {
    // Other devices' planned power is base load to this one (their plans start at the first slot not ended).
    const baseLoadKw = others === null ? base : input.slots.map((_, i) => baseAt(i) + (others[i - ended] ?? 0));
    return { ...common, tank, ev, location: { ...input.location, baseLoadKw, lpc: capsFor(input.location.lpc ?? [], tank, ev) } };
  };
  const zones = input.zones ?? [];
  if (input.tanks.length <= 1 && input.evs.length <= 1 && zones.length === 0)
    return planPair(pairInput(input.tanks[0] ?? null, input.evs[0] ?? null, null), nowMs, previous);

  const slotMinutes = input.slots[0] ? (input.slots[0].endMs - input.slots[0].startMs) / 60_000 : 60;
  const tanks = input.tanks.map((t): Tank => ({ ...t, antiCycling: bindingAntiCycling(t.antiCycling, slotMinutes) }));
  const kinds: Kind[] = [
    ...tanks.map((t): Kind => [t, null, null]),
    ...input.evs.map((e): Kind => [null, e, null]),
    ...zones.map((z): Kind => [null, null, z]),
  ];
  // A zone is planned on the location's own set-up (its headroom, prices and slots).
  const locationInput: PlanInput = { ...common, tank: null, ev: null };
  const locationSetup = zones.length > 0 ? setupPlan(locationInput, nowMs, previous) : null;
  // A zone keeps the previous plan's energy in the frozen slots, as a tank does.
  const frozen = locationSetup
    ? frozenPrevious(previous, frozenWindowEndMs(locationSetup.slots, input.options?.frozenSlots, locationSetup.slotMs))
    : new Map();
  const devices: Device[] = kinds.map(([tank, ev, zone]) => {
    if (zone) {
      const z = setupZone(zone, locationSetup!, ended, input.location.lpc ?? [], bindingAntiCycling(zone.antiCycling, slotMinutes), frozen);
      return { input: locationInput, s: locationSetup!, cap: z.cap, price: z.price, zone: z, memo: new Map() };
    }
    const one = pairInput(tank, ev, null);
    const s = setupPlan(one, nowMs, previous);
    return { input: one, s, cap: s.tank ? s.tank.cap : s.ev!.cap, price: s.tank ? s.tank.price : s.ev!.price, memo: new Map() };
  });
  const s0 = devices[0]!.s;
  // Power of every device but `i`, kW, from each device's energy per slot.
  const othersKw = (xs: ReadonlyArray<number[] | null>, i: number): number[] =>
    s0.slots.map(
      (_, t) => xs.reduce((sum, x, j) => sum + (j === i || x === null ? 0 : (x[t] as number)), 0) / (s0.slotHours * (s0.fraction[t] as number)),
    );
  // The car that must leave first takes its slots first, cars before tanks; also the reverse, and tanks (then zones) first.
  const urgency = (i: number): number => kinds[i]![1]?.departureMs ?? Infinity;
  const order = devices.map((_, i) => i).sort((a, b) => urgency(a) - urgency(b));
  const third = [...order.filter((i) => kinds[i]![0]), ...order.filter((i) => kinds[i]![2]), ...order.filter((i) => kinds[i]![1])];
  // Without prices: the pair planner's fallback, device by device, cars first.
  const xs: (number[] | null)[] = s0.allFallback ? devices.map(() => null) : solveHome(devices, [order, [...order].reverse(), third]).map((x) => x.x);
  // Each device's plan on what the others leave, in turn, so that together they keep the headroom.
  const plans: Plan[] = [];
  for (const i of order) {
    const z = devices[i]!.zone;
    if (z) {
      // What the others leave of the headroom, within the zone's own cap.
      const cap = z.cap.map((c, t) =>
        Math.max(0, Math.min(c, (s0.headroomE[t] as number) - xs.reduce((sum, x, j) => sum + (j === i || x === null ? 0 : (x[t] as number)), 0))),
      );
      const sol = s0.allFallback ? zoneBaseline(z, cap) : zoneSolve(z, cap, s0.dayIndex, undefined, s0.workspace);
      plans[i] = zonePlan(z, sol, s0, input, nowMs);
      xs[i] = sol.q;
      continue;
    }
    plans[i] = planPair(pairInput(kinds[i]![0], kinds[i]![1], othersKw(xs, i)), nowMs, previous);
    xs[i] = plans[i].slots.map((sl, t) => slotFlexKw(sl) * s0.slotHours * (s0.fraction[t] as number));
  }
  const location = planPair(locationInput, nowMs, previous);
  return merge(location, plans);
}

/** The head of a pair plan's slot reason ("tank 1.20 kWh, ev 3.00 kWh"), without price and binding. */
function reasonParts(reason: string): string | null {
  const head = reason.replace(/; bound by .*$/, '');
  const at = head.lastIndexOf(' at ');
  const parts = at < 0 ? head : head.slice(0, at);
  return parts === 'idle' ? null : parts;
}

/** One plan of the devices' plans: devices side by side, money summed, the location's own facts from `location`. */
function merge(location: Plan, plans: ReadonlyArray<Plan>): Plan {
  const slots = location.slots.map((ls, t): PlanSlot => {
    const at = plans.map((p) => p.slots[t]!);
    const binding = [...new Set([...ls.binding, ...at.flatMap((s) => s.binding)])];
    const parts = at.map((s) => reasonParts(s.reason)).filter((x): x is string => x !== null);
    const priceText = ls.reason.slice(ls.reason.lastIndexOf(' at ') + 4).replace(/; bound by .*$/, '');
    const slot: PlanSlot = {
      ...ls,
      binding,
      baselineKwh: at.reduce((sum, s) => sum + (s.baselineKwh ?? 0), 0),
      reason: `${parts.length > 0 ? parts.join(', ') : 'idle'} at ${priceText}${binding.length > 0 ? `; bound by ${binding.join(', ')}` : ''}`,
    };
    return { ...slot, ...byId('tanks', at), ...byId('evs', at), ...byId('zones', at), ...byId('baselineTanks', at) };
  });
  // The naive devices together must fit the location's headroom too, not only each group's share.
  const together = slots.every((s) => {
    const hours = (s.endMs - Math.max(s.startMs, location.createdMs)) / 3_600_000;
    return (s.baselineKwh ?? 0) <= Math.max(0, s.headroomKw) * hours + 1e-6 || hours <= 0;
  });
  const shortfalls: Shortfall[] = [...location.shortfalls, ...plans.flatMap((p) => p.shortfalls.filter((f) => f.device !== 'location'))];
  const out: Plan = {
    ...location,
    slots,
    cost: plans.reduce((x, p) => x + p.cost, 0),
    baselineCost: plans.reduce((x, p) => x + p.baselineCost, 0),
    baselineRespectsLimits: together && plans.every((p) => p.baselineRespectsLimits),
    incentiveEarned: plans.reduce((x, p) => x + p.incentiveEarned, 0),
    shortfalls,
  };
  return { ...out, ...byId('tanks', plans), ...byId('evs', plans), ...byId('zones', plans) };
}

/** The records of `key` of the devices' plans side by side, as `{ [key]: record }`, or nothing when none has one. */
function byId<K extends string, T extends Partial<Record<K, Record<string, unknown>>>>(key: K, parts: ReadonlyArray<T>): Partial<Pick<T, K>> {
  const merged = Object.assign({}, ...parts.map((p) => p[key] ?? {})) as Record<string, unknown>;
  return Object.keys(merged).length > 0 ? ({ [key]: merged } as Partial<Pick<T, K>>) : {};
}

/** A slot's plan of every tank, car and heated zone, by device id. */
export const slotDevices = (s: PlanSlot): [string, DeviceSlotPlan][] => [
  ...Object.entries(s.tanks ?? {}),
  ...Object.entries(s.evs ?? {}),
  ...Object.entries(s.zones ?? {}),
];

/** Each slot's planned flexible energy of every device together, kWh (the whole slot). */
export const slotFlexKwh = (s: PlanSlot): number => slotDevices(s).reduce((kwh, [, d]) => kwh + d.energyKwh, 0);

/** Each slot's planned flexible power of every device together, kW. */
export const slotFlexKw = (s: PlanSlot): number => slotDevices(s).reduce((kw, [, d]) => kw + d.powerKw, 0);
