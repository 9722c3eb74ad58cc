/**
 * Any number of tanks and cars under one location limit. The pair planner (`plan`) solves one
 * tank and one car jointly and well; a home with more is split into groups (the i-th tank with the
 * i-th car), and the groups share the location's headroom by block coordinate descent: each group
 * is planned with the other groups' planned power counted as base load, in turn, until a round
 * improves nothing (unless each group's own best plan already fits beside the others). The group
 * whose car must leave first plans first, so a group that could go elsewhere does not keep a slot
 * another can only use; a re-plan is kept only when it lowers the shortfalls, then the cost.
 * Pure; time is an argument.
 */
import { plan as planPair } from './planner.js';
import type { EvParams, HomePlanInput, LpcCap, Plan, PlanInput, PlanSlot, Shortfall, TankParams } from './types.js';

type Tank = TankParams & { id: string };
type Ev = EvParams & { id: string };
interface Group {
  tank: Tank | null;
  ev: Ev | null;
}

/** Rounds of coordinate descent after the first pass; each re-plans every group once. */
const MAX_ROUNDS = 2;

/** A home input of the pair planner's input (tests, benchmarks and one-device homes). */
export function homeInputOf(input: PlanInput): HomePlanInput {
  const { tank, ev, ...rest } = input;
  return { ...rest, tanks: tank ? [{ ...tank, id: tank.id ?? 'tank' }] : [], evs: ev ? [{ ...ev, id: ev.id ?? 'ev' }] : [] };
}

/**
 * One tank and one car are one group, the pair planner's joint problem. With more, each device is
 * a group of its own: a pair planned beside another group's varying load costs the pair planner's
 * joint search many times over (10-30× a lone device), for a coordination the rounds give too.
 */
function groupsOf(input: HomePlanInput): Group[] {
  if (input.tanks.length <= 1 && input.evs.length <= 1) return [{ tank: input.tanks[0] ?? null, ev: input.evs[0] ?? null }];
  return [...input.evs.map((ev) => ({ tank: null, ev })), ...input.tanks.map((tank) => ({ tank, ev: null }))];
}

/** A device-scoped cap belongs to a group when it names one of its devices, or no device of its kinds. */
function capsFor(lpc: ReadonlyArray<LpcCap>, g: Group): LpcCap[] {
  return lpc.filter((c) => {
    if (c.scope === 'location') return true;
    const device = c.scope === 'tank' ? g.tank : g.ev;
    return device !== null && (c.deviceId === undefined || c.deviceId === device.id);
  });
}

/** Each slot's flexible power of a plan's devices, kW (average over the rest of the slot). */
const loadOf = (p: Plan): number[] => p.slots.map(slotFlexKW);

/** Shortfalls (kWh or K, summed) first, then the plan's cost. */
function score(plans: ReadonlyArray<Plan>): { short: number; cost: number } {
  let short = 0;
  let cost = 0;
  for (const p of plans) {
    cost += p.cost;
    for (const f of p.shortfalls) if (f.device !== 'location') short += f.amount;
  }
  return { short, cost };
}

const better = (a: { short: number; cost: number }, b: { short: number; cost: number }): boolean =>
  a.short < b.short - 1e-6 || (a.short <= b.short + 1e-6 && a.cost < b.cost - 1e-9 * (1 + Math.abs(b.cost)));

/** The pair planner drops the slots that ended before `nowMs`: how many lead the input. */
function endedSlots(input: HomePlanInput, nowMs: number): number {
  const i = input.slots.findIndex((s) => s.endMs > nowMs);
  return i < 0 ? input.slots.length : i;
}

/**
 * Plans every tank and car of the home over the input's slots from `nowMs` on (see `plan` for the
 * rules of one pair: frozen slots, the fallback without prices, shortfalls instead of throwing).
 */
export function planHome(input: HomePlanInput, nowMs: number, previous?: Plan): Plan {
  const groups = groupsOf(input);
  const common: PlanInput = { slots: input.slots, timezone: input.timezone, currency: input.currency, location: input.location, ...(input.options ? { options: input.options } : {}) };
  const ended = endedSlots(input, nowMs);
  const pairInput = (g: Group, others: number[] | null): PlanInput => {
    const base = input.location.baseLoadKW;
    const baseAt = (i: number): number => (typeof base === 'number' ? base : (base[i] ?? 0));
    // Other groups' planned power is base load to this one (their plans start at the first slot not ended).
    const baseLoadKW = others === null ? base : input.slots.map((_, i) => baseAt(i) + (others[i - ended] ?? 0));
    return { ...common, tank: g.tank, ev: g.ev, location: { ...input.location, baseLoadKW, lpc: capsFor(input.location.lpc ?? [], g) } };
  };
  if (groups.length === 1) return planPair(pairInput(groups[0]!, null), nowMs, previous);
  const location = planPair({ ...common, tank: null, ev: null }, nowMs, previous);
  // Where every group's own best plan fits the location together, no group stands in another's way.
  const alone = groups.map((g) => planPair(pairInput(g, null), nowMs, previous));
  const loads = alone.map(loadOf);
  const total = (t: number): number => loads.reduce((sum, l) => sum + (l[t] ?? 0), 0);
  if (location.slots.every((s, t) => total(t) <= Math.max(0, s.headroomKW) + 1e-6)) return merge(location, alone);

  // The car that must leave first takes its slots first (its plan alone is its plan in that order);
  // then each group in turn on what the earlier ones left, and rounds of re-plans while they help.
  const urgency = (g: Group): number => g.ev?.departureMs ?? Infinity;
  const order = groups.map((_, i) => i).sort((a, b) => urgency(groups[a]!) - urgency(groups[b]!));
  const plans: (Plan | null)[] = groups.map(() => null);
  const othersOf = (g: number): number[] => {
    const sum: number[] = [];
    plans.forEach((p, h) => {
      if (h !== g && p !== null) (loads[h] as number[]).forEach((kw, t) => (sum[t] = (sum[t] ?? 0) + kw));
    });
    return sum;
  };
  const solve = (g: number): Plan => planPair(pairInput(groups[g]!, othersOf(g)), nowMs, previous);
  for (const g of order) {
    plans[g] = plans.every((p) => p === null) ? alone[g]! : solve(g);
    loads[g] = loadOf(plans[g]);
  }
  let current = score(plans as Plan[]);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    let improved = false;
    for (const g of order) {
      const before = plans[g]!;
      plans[g] = solve(g);
      const s = score(plans as Plan[]);
      if (better(s, current)) {
        current = s;
        loads[g] = loadOf(plans[g]);
        improved = true;
      } else plans[g] = before;
    }
    if (!improved) break;
  }
  return merge(location, plans as Plan[]);
}

/** The head of a pair plan's slot reason ("tank 1.20 kWh, ev 3.00 kWh"), without price and binding. */
function reasonParts(reason: string): string | null {
  const head = reason.replace(/; bound by .*$/, '');
  const at = head.lastIndexOf(' at ');
  const parts = at < 0 ? head : head.slice(0, at);
  return parts === 'idle' ? null : parts;
}

/** One plan of the groups' plans: devices side by side, money summed, the location's own facts from `location`. */
function merge(location: Plan, plans: ReadonlyArray<Plan>): Plan {
  const slots = location.slots.map((ls, t): PlanSlot => {
    const at = plans.map((p) => p.slots[t]!);
    const binding = [...new Set([...ls.binding, ...at.flatMap((s) => s.binding)])];
    const parts = at.map((s) => reasonParts(s.reason)).filter((x): x is string => x !== null);
    const priceText = ls.reason.slice(ls.reason.lastIndexOf(' at ') + 4).replace(/; bound by .*$/, '');
    const slot: PlanSlot = {
      ...ls,
      binding,
      baselineKWh: at.reduce((sum, s) => sum + (s.baselineKWh ?? 0), 0),
      reason: `${parts.length > 0 ? parts.join(', ') : 'idle'} at ${priceText}${binding.length > 0 ? `; bound by ${binding.join(', ')}` : ''}`,
    };
    const tanks = Object.assign({}, ...at.map((s) => s.tanks ?? {})) as NonNullable<PlanSlot['tanks']>;
    const evs = Object.assign({}, ...at.map((s) => s.evs ?? {})) as NonNullable<PlanSlot['evs']>;
    const twins = Object.assign({}, ...at.map((s) => s.baselineTanks ?? {})) as NonNullable<PlanSlot['baselineTanks']>;
    if (Object.keys(tanks).length > 0) slot.tanks = tanks;
    if (Object.keys(evs).length > 0) slot.evs = evs;
    if (Object.keys(twins).length > 0) slot.baselineTanks = twins;
    return slot;
  });
  // The naive devices together must fit the location's headroom too, not only each group's share.
  const together = slots.every((s) => {
    const hours = (s.endMs - Math.max(s.startMs, location.createdMs)) / 3_600_000;
    return (s.baselineKWh ?? 0) <= Math.max(0, s.headroomKW) * hours + 1e-6 || hours <= 0;
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
  const tanks = Object.assign({}, ...plans.map((p) => p.tanks ?? {})) as NonNullable<Plan['tanks']>;
  const evs = Object.assign({}, ...plans.map((p) => p.evs ?? {})) as NonNullable<Plan['evs']>;
  if (Object.keys(tanks).length > 0) out.tanks = tanks;
  if (Object.keys(evs).length > 0) out.evs = evs;
  return out;
}

/** Each slot's planned flexible energy of every device together, kWh (the whole slot). */
export function slotFlexKWh(s: PlanSlot): number {
  let kwh = 0;
  for (const d of Object.values(s.tanks ?? {})) kwh += d.energyKWh;
  for (const d of Object.values(s.evs ?? {})) kwh += d.energyKWh;
  return kwh;
}

/** Each slot's planned flexible power of every device together, kW. */
export function slotFlexKW(s: PlanSlot): number {
  let kw = 0;
  for (const d of Object.values(s.tanks ?? {})) kw += d.powerKW;
  for (const d of Object.values(s.evs ?? {})) kw += d.powerKW;
  return kw;
}
