/**
 * Holding a plan to a capacity target: the measure of a month's hours, and the location caps
 * that keep the month at or under a target measure. A first hold gives every planned hour the
 * same allowance (the worst case: every planned day reaches it); a refinement then keeps the
 * days (or hours, for `hourlyPeaks`) that did not use their allowance at what they used and
 * gives the rest of the room to the ones that did. Pure.
 */
import { capacityWeight, hourlyEnergies, meanOfTop, stepIndex, type HourEnergy } from './capacity.js';
import { tariffLocalTime, type CapacityModel } from './tariff.js';
import { HOUR_MS } from './zoned-time.js';
import type { CapacityContext } from './capacity-plan.js';
import type { LpcCap, PlanInput } from './types.js';

export interface SlotFact {
  baseKW: number;
  /** Hours of the slot from `nowMs` on. */
  hours: number;
  endMs: number;
}

/** Per planned hour (UTC start): the hour's energy allowance and the power cap of its slots. */
export type Caps = Map<number, { kw: number; hourKWh: number }>;

/** The context plus each hour's local facts, looked up once per hour (wall-clock maths is the slow part). */
export interface Ctx extends CapacityContext {
  local(startMs: number): { day: string; month: string; weight: number };
}

export function withLocalCache(ctx: CapacityContext): Ctx {
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

/** An hour with its local day, weight and energy. */
interface Prepared {
  startMs: number;
  day: string;
  weight: number;
  kWh: number;
}

export function prepare(ctx: Ctx, hours: ReadonlyArray<HourEnergy>): Prepared[] {
  return hours.map((h) => {
    const l = ctx.local(h.startMs);
    return { startMs: h.startMs, day: l.day, weight: l.weight, kWh: h.kWh };
  });
}

/** The unit one peak is taken from: the local day, or the hour itself. */
const unitOf = (rule: CapacityModel, h: Prepared): string => (rule.measure === 'dailyPeaks' ? h.day : String(h.startMs));

/** The measure of prepared hours; hours in `heldAt.planned` count as exactly `heldAt.cap` (weighted). */
export function measureOf(rule: CapacityModel, hours: ReadonlyArray<Prepared>, heldAt?: { cap: number; planned: ReadonlySet<number> }): number {
  const peaks = new Map<string, number>();
  hours.forEach((h, i) => {
    if (h.weight === 0) return;
    const v = heldAt?.planned.has(i) ? heldAt.cap : h.kWh * h.weight;
    const u = unitOf(rule, h);
    peaks.set(u, Math.max(peaks.get(u) ?? 0, v));
  });
  return meanOfTop([...peaks.values()], rule.count);
}

export function groupByMonth(ctx: Ctx, hours: ReadonlyArray<HourEnergy>): Map<string, HourEnergy[]> {
  const out = new Map<string, HourEnergy[]>();
  for (const h of hours) {
    const k = ctx.local(h.startMs).month;
    const list = out.get(k) ?? [];
    list.push(h);
    out.set(k, list);
  }
  return out;
}

/** The largest weighted energy the `planned` hours may all reach with the month at or under `target` (bisection; monotone). */
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

/** A previous hold and the plan's hourly energies (base load included) under it. */
export interface Refine {
  caps: Caps;
  planned: ReadonlyMap<number, number>;
}

/**
 * Caps that keep every month the plan touches at or under `target` (or, where the month's metered
 * peaks are already above it, in the step those peaks paid for). With `refine`, units that did not
 * reach their allowance are kept at the peak they reached, and the others share the rest.
 */
export function holdingCaps(ctx: Ctx, facts: ReadonlyMap<number, SlotFact>, target: number, refine?: Refine): Caps {
  const metered = new Map(ctx.meteredHours.map((h) => [Math.floor(h.startMs / HOUR_MS) * HOUR_MS, h.kWh]));
  const planHours = new Map<number, number>();
  for (const [start, f] of facts) {
    const h = Math.floor(start / HOUR_MS) * HOUR_MS;
    planHours.set(h, (planHours.get(h) ?? 0) + f.hours);
  }
  const all = hourlyEnergies([...ctx.meteredHours, ...[...planHours.keys()].map((startMs) => ({ startMs, kWh: refine?.planned.get(startMs) ?? 0 }))]);
  const out: Caps = new Map();
  const rule = ctx.rule;
  for (const hours of groupByMonth(ctx, all).values()) {
    const prepared = prepare(ctx, hours);
    const metMeasure = measureOf(rule, prepare(ctx, hours.flatMap((h) => (metered.has(h.startMs) ? [{ startMs: h.startMs, kWh: metered.get(h.startMs) ?? 0 }] : []))));
    // Peaks already metered above the target: the step they are in is already paid for.
    const paid = rule.steps?.[stepIndex(rule, metMeasure)]?.upToKw;
    const monthTarget = metMeasure > target + 1e-6 ? (rule.steps ? paid : metMeasure) : target;
    if (monthTarget === null || monthTarget === undefined) continue;
    const isPlanned = (h: Prepared): boolean => planHours.has(h.startMs) && h.weight > 0;
    // Units whose planned hours reached their allowance under the previous hold (all, at first).
    const binding = new Set(prepared.filter((h) => isPlanned(h) && (!refine || h.kWh * h.weight >= (refine.caps.get(h.startMs)?.hourKWh ?? Infinity) * h.weight - 1e-4)).map((h) => unitOf(rule, h)));
    const planned = new Set(prepared.flatMap((h, i) => (isPlanned(h) && binding.has(unitOf(rule, h)) ? [i] : [])));
    const cap = capFor(rule, prepared, planned, monthTarget);
    const unitPeak = new Map<string, number>();
    for (const h of prepared) unitPeak.set(unitOf(rule, h), Math.max(unitPeak.get(unitOf(rule, h)) ?? 0, h.kWh * h.weight));
    for (const h of prepared) {
      if (!isPlanned(h)) continue;
      const u = unitOf(rule, h);
      const hourKWh = (binding.has(u) ? cap : (unitPeak.get(u) ?? 0)) / h.weight;
      out.set(h.startMs, { kw: (hourKWh - (metered.get(h.startMs) ?? 0)) / (planHours.get(h.startMs) ?? 1), hourKWh });
    }
  }
  return out;
}

/** The input with a location cap on every held slot (never below its base load). */
export function withCaps(input: PlanInput, facts: ReadonlyMap<number, SlotFact>, caps: Caps): PlanInput {
  const extra: LpcCap[] = [];
  for (const [start, f] of facts) {
    const c = caps.get(Math.floor(start / HOUR_MS) * HOUR_MS);
    if (!c) continue;
    const kw = Math.max(f.baseKW, c.kw);
    if (kw < input.location.limitKW) extra.push({ startMs: start, endMs: f.endMs, maxKW: kw, scope: 'location' });
  }
  return { ...input, location: { ...input.location, lpc: [...(input.location.lpc ?? []), ...extra] } };
}
