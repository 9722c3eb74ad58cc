/**
 * Planning with the month's capacity fee. The fee is a step function of the month's peaks, which
 * makes the bill mixed-integer; instead of a MILP, an outer loop tries each step (or, for a fee per
 * kW, a few levels) below the one the unheld plan would land in: for each it derives the largest
 * hourly energy that keeps the month at or under that step (given the peaks metered so far), holds
 * every slot to it with a location cap, plans again and keeps the cheapest whole bill (energy +
 * capacity fee). A held plan that would leave the tank or the car worse off than the unheld one
 * is never chosen. Pure; time is an argument.
 */
import { plan as planOnce } from './planner.js';
import { capacityFee, capacityWeight, hourlyEnergies, meanOfTop, stepIndex, type HourEnergy } from './capacity.js';
import { tariffLocalTime, type CapacityModel } from './tariff.js';
import { HOUR_MS } from './zoned-time.js';
import type { LpcCap, Plan, PlanInput } from './types.js';

export interface CapacityContext {
  rule: CapacityModel;
  timezone: string;
  holidays: ReadonlyArray<string>;
  /** The location's metered energy this month per UTC hour, the current hour so far included. */
  meteredHours: ReadonlyArray<HourEnergy>;
  /** VAT multiplier on the fee (1.25 = 25 %). */
  vatRate: number;
}

/** What the capacity fee looks like with the chosen plan (the current month; fees include VAT). */
export interface CapacityOutcome {
  /** The month's projected measure, kW (metered hours plus the plan's). */
  measureKw: number;
  /** Index into the tariff's steps, null for a fee per kW. */
  step: number | null;
  feePerMonth: number;
  /** Hourly energy the plan was held to (kWh/h; night-weighted hours may take more), null when not held. */
  heldAtKWhPerH: number | null;
  /** Whole bill of the plan (its energy cost + the fee of every month it touches). */
  bill: number;
  /** The same for the unheld plan. */
  unheldBill: number;
}

interface Evaluated {
  bill: number;
  measureKw: number;
  feePerMonth: number;
}

const TOL = 1e-6;

interface SlotFact {
  baseKW: number;
  /** Hours of the slot from `nowMs` on. */
  hours: number;
  endMs: number;
}

/** Base load (kW) by slot start, and each remaining slot's hours from `nowMs`. */
function slotFacts(input: PlanInput, nowMs: number): Map<number, SlotFact> {
  const out = new Map<number, SlotFact>();
  const b = input.location.baseLoadKW;
  input.slots.forEach((s, i) => {
    if (s.endMs <= nowMs) return;
    const baseKW = typeof b === 'number' ? b : (b[i] ?? 0);
    out.set(s.startMs, { baseKW, hours: (s.endMs - Math.max(nowMs, s.startMs)) / HOUR_MS, endMs: s.endMs });
  });
  return out;
}

/** The plan's hourly energies (base load included) merged with the metered hours. */
function projectedHours(p: Plan, facts: Map<number, SlotFact>, metered: ReadonlyArray<HourEnergy>): HourEnergy[] {
  const items: HourEnergy[] = [...metered];
  for (const s of p.slots) {
    const f = facts.get(s.startMs);
    const flex = (s.tank?.energyKWh ?? 0) + (s.ev?.energyKWh ?? 0);
    items.push({ startMs: s.startMs, kWh: (f ? f.baseKW * f.hours : 0) + flex });
  }
  return hourlyEnergies(items);
}

/** Weighted value and local day of each hour, computed once per month. */
interface Prepared {
  day: string;
  weight: number;
  kWh: number;
}

/** The context plus each hour's local facts, looked up once per hour (wall-clock maths is the slow part). */
interface Ctx extends CapacityContext {
  local(startMs: number): { day: string; month: string; weight: number };
}

function withLocalCache(ctx: CapacityContext): Ctx {
  const cache = new Map<number, { day: string; month: string; weight: number }>();
  return {
    ...ctx,
    local(startMs) {
      let hit = cache.get(startMs);
      if (!hit) {
        const day = tariffLocalTime(startMs, ctx.timezone, ctx.holidays).date;
        hit = { day, month: day.slice(0, 7), weight: capacityWeight(ctx.rule, startMs, ctx.timezone, ctx.holidays) };
        cache.set(startMs, hit);
      }
      return hit;
    },
  };
}

function prepare(ctx: Ctx, hours: ReadonlyArray<HourEnergy>): Prepared[] {
  return hours.map((h) => {
    const l = ctx.local(h.startMs);
    return { day: l.day, weight: l.weight, kWh: h.kWh };
  });
}

function measureOf(rule: CapacityModel, hours: ReadonlyArray<Prepared>, heldAt?: { cap: number; planned: ReadonlySet<number> }): number {
  const values: number[] = [];
  const dayMax = new Map<string, number>();
  hours.forEach((h, i) => {
    if (h.weight === 0) return;
    const v = heldAt?.planned.has(i) ? heldAt.cap : h.kWh * h.weight;
    if (rule.measure === 'hourlyPeaks') values.push(v);
    else dayMax.set(h.day, Math.max(dayMax.get(h.day) ?? 0, v));
  });
  return meanOfTop(rule.measure === 'hourlyPeaks' ? values : [...dayMax.values()], rule.count);
}

function groupByMonth(ctx: Ctx, hours: ReadonlyArray<HourEnergy>): Map<string, HourEnergy[]> {
  const out = new Map<string, HourEnergy[]>();
  for (const h of hours) {
    const k = ctx.local(h.startMs).month;
    const list = out.get(k) ?? [];
    list.push(h);
    out.set(k, list);
  }
  return out;
}

function evaluate(p: Plan, ctx: Ctx, facts: Map<number, SlotFact>): Evaluated {
  const months = [...groupByMonth(ctx, projectedHours(p, facts, ctx.meteredHours))];
  let fees = 0;
  let first: { measure: number; fee: number } | null = null;
  const current = p.slots[0] ? ctx.local(p.slots[0].startMs).month : null;
  for (const [key, hours] of months) {
    const measure = measureOf(ctx.rule, prepare(ctx, hours));
    const fee = capacityFee(ctx.rule, measure) * ctx.vatRate;
    fees += fee;
    if (key === current) first = { measure, fee };
  }
  return { bill: p.cost + fees, measureKw: first?.measure ?? 0, feePerMonth: first?.fee ?? 0 };
}

/** Targets (kW of the measure) worth trying: step tops below where the unheld plan lands. */
function targets(rule: CapacityModel, meteredMeasure: number, unheldMeasure: number): number[] {
  if (rule.steps) {
    return rule.steps.flatMap((s) => (s.upToKw !== null && s.upToKw >= meteredMeasure - TOL && stepIndex(rule, s.upToKw) < stepIndex(rule, unheldMeasure) ? [s.upToKw] : []));
  }
  const levels = 6;
  const out: number[] = [];
  for (let i = 0; i < levels; i++) out.push(meteredMeasure + ((unheldMeasure - meteredMeasure) * i) / levels);
  return out.filter((v) => v < unheldMeasure - 0.05);
}

/**
 * The largest weighted hourly energy `cap` such that the month stays at or under `target` even
 * if every planned hour reaches it (monotone in `cap`, so bisection).
 */
function capFor(rule: CapacityModel, hours: ReadonlyArray<Prepared>, planned: ReadonlySet<number>, target: number): number {
  let lo = 0;
  let hi = target * rule.count + 1;
  for (let k = 0; k < 40; k++) {
    const mid = (lo + hi) / 2;
    if (measureOf(rule, hours, { cap: mid, planned }) <= target + 1e-9) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Location caps (kW per slot) that hold each planned hour's energy to the month's cap for `target`. */
function holdingCaps(input: PlanInput, ctx: Ctx, facts: Map<number, SlotFact>, target: number): Map<number, { kw: number; hourKWh: number }> {
  const metered = new Map(ctx.meteredHours.map((h) => [Math.floor(h.startMs / HOUR_MS) * HOUR_MS, h.kWh]));
  const planHours = new Map<number, number>();
  for (const [start, f] of facts) {
    const h = Math.floor(start / HOUR_MS) * HOUR_MS;
    planHours.set(h, (planHours.get(h) ?? 0) + f.hours);
  }
  const all = hourlyEnergies([...ctx.meteredHours, ...[...planHours.keys()].map((startMs) => ({ startMs, kWh: 0 }))]);
  const out = new Map<number, { kw: number; hourKWh: number }>();
  for (const hours of groupByMonth(ctx, all).values()) {
    const prepared = prepare(ctx, hours);
    const metMeasure = measureOf(ctx.rule, prepared);
    // Peaks already metered above the target: the step they are in is already paid for.
    const steps = ctx.rule.steps;
    const paid = steps?.[stepIndex(ctx.rule, metMeasure)]?.upToKw;
    const monthTarget = metMeasure > target + TOL ? (steps ? paid : metMeasure) : target;
    if (monthTarget === null || monthTarget === undefined) continue;
    const planned = new Set(hours.flatMap((h, i) => (planHours.has(h.startMs) ? [i] : [])));
    const cap = capFor(ctx.rule, prepared, planned, monthTarget);
    hours.forEach((h, i) => {
      const w = prepared[i]!.weight;
      if (!planned.has(i) || w === 0) return;
      const hourKWh = cap / w;
      const kw = (hourKWh - (metered.get(h.startMs) ?? 0)) / (planHours.get(h.startMs) ?? 1);
      out.set(h.startMs, { kw, hourKWh });
    });
  }
  return out;
}

function withCaps(input: PlanInput, facts: Map<number, SlotFact>, caps: Map<number, { kw: number; hourKWh: number }>): PlanInput {
  const extra: LpcCap[] = [];
  for (const [start, f] of facts) {
    const c = caps.get(Math.floor(start / HOUR_MS) * HOUR_MS);
    if (!c) continue;
    const kw = Math.max(f.baseKW, c.kw);
    if (kw < input.location.limitKW) extra.push({ startMs: start, endMs: f.endMs, maxKW: kw, scope: 'location' });
  }
  return { ...input, location: { ...input.location, lpc: [...(input.location.lpc ?? []), ...extra] } };
}

/** Whether `held` leaves no device worse off than `free` (same kinds of shortfall, no larger). */
function noWorse(held: Plan, free: Plan): boolean {
  return held.shortfalls.every((s) => free.shortfalls.some((f) => f.device === s.device && f.kind === s.kind && f.amount >= s.amount - 1e-3));
}

/** Marks the slots the capacity hold binds and says so in their explanation. */
function explain(p: Plan, input: PlanInput, facts: Map<number, SlotFact>, caps: Map<number, { kw: number; hourKWh: number }>): Plan {
  const slots = p.slots.map((s) => {
    const c = caps.get(Math.floor(s.startMs / HOUR_MS) * HOUR_MS);
    const f = facts.get(s.startMs);
    if (!c || !f) return s;
    const capKW = Math.max(f.baseKW, c.kw);
    const otherCaps = (input.location.lpc ?? []).filter((l) => l.scope === 'location' && l.startMs < s.endMs && l.endMs > s.startMs).map((l) => l.maxKW);
    const used = f.baseKW + (s.tank?.powerKW ?? 0) + (s.ev?.powerKW ?? 0);
    if (used < capKW - 1e-4 || capKW >= Math.min(input.location.limitKW, ...otherCaps) - TOL) return s;
    const binding = [...s.binding.filter((b) => b !== 'lpc' && b !== 'locationLimit'), 'capacityStep' as const];
    const head = s.reason.replace(/; bound by .*$/, '');
    return { ...s, binding, reason: `${head}; bound by ${binding.join(', ')}; held at ${c.hourKWh.toFixed(1)} kWh/h: the month's capacity step` };
  });
  return { ...p, slots };
}

/**
 * Plans the whole bill: energy plus the month's capacity fee. Without a plan to improve on
 * (fallback mode, no slots) the unheld plan is returned with its projected fee.
 */
export function planWithCapacity(input: PlanInput, nowMs: number, context: CapacityContext, previous?: Plan, planFn = planOnce): Plan {
  const ctx = withLocalCache(context);
  const facts = slotFacts(input, nowMs);
  const free = planFn(input, nowMs, previous);
  const freeEval = evaluate(free, ctx, facts);
  let best: { plan: Plan; ev: Evaluated; caps: Map<number, { kw: number; hourKWh: number }> | null } = { plan: free, ev: freeEval, caps: null };
  if (free.mode === 'optimal' && free.slots.length > 0) {
    const current = ctx.local(free.slots[0]!.startMs).month;
    const metNow = ctx.meteredHours.filter((h) => ctx.local(h.startMs).month === current);
    const metMeasure = measureOf(ctx.rule, prepare(ctx, metNow));
    for (const target of targets(ctx.rule, metMeasure, freeEval.measureKw)) {
      const caps = holdingCaps(input, ctx, facts, target);
      if (caps.size === 0) continue;
      const held = planFn(withCaps(input, facts, caps), nowMs, previous);
      if (!noWorse(held, free)) continue;
      const ev = evaluate(held, ctx, facts);
      if (ev.bill < best.ev.bill - TOL) best = { plan: held, ev, caps };
    }
  }
  const chosen = best.caps ? explain(best.plan, input, facts, best.caps) : best.plan;
  const heldAt = best.caps ? Math.min(...[...best.caps.values()].map((c) => c.hourKWh)) : null;
  return {
    ...chosen,
    capacity: {
      measureKw: best.ev.measureKw,
      step: ctx.rule.steps ? stepIndex(ctx.rule, best.ev.measureKw) : null,
      feePerMonth: best.ev.feePerMonth,
      heldAtKWhPerH: heldAt,
      bill: best.ev.bill,
      unheldBill: freeEval.bill,
    },
  };
}
