/**
 * Holding a plan to a capacity target: the measure of a month's hours, and the location caps
 * that keep the month at or under a target measure. Units (days, or hours for `hourlyPeaks`) are
 * either fixed at a peak or share the room the rest leaves; with none fixed every planned unit
 * gets the same allowance (the worst case: all of them reach it). Pure.
 */
import { capacityWeight, hourlyEnergies, meanOfTop, stepIndex, type CapacityContext, type HourEnergy } from './capacity.js';
import { tariffLocalTime, type CapacityModel } from './tariff.js';
import { HOUR_MS } from './zoned-time.js';
import type { HomePlanInput, LpcCap } from './types.js';

export interface SlotFact {
  baseKw: number;
  /** Hours of the slot from `nowMs` on. */
  hours: number;
  endMs: number;
}

/** Per planned hour (UTC start): the hour's energy allowance and the power cap of its slots. */
export type Caps = Map<number, { kw: number; hourKwh: number }>;

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

/** Each unit's weighted peak; hours in `heldAt.planned` count as exactly `heldAt.cap` (weighted). */
function unitPeaks(rule: CapacityModel, hours: ReadonlyArray<Prepared>, heldAt?: { cap: number; planned: ReadonlySet<number> }): number[] {
  const peaks = new Map<string, number>();
  hours.forEach((h, i) => {
    if (h.weight === 0) return;
    const v = heldAt?.planned.has(i) ? heldAt.cap : h.kWh * h.weight;
    const u = unitOf(rule, h);
    peaks.set(u, Math.max(peaks.get(u) ?? 0, v));
  });
  return [...peaks.values()];
}

/** The measure of prepared hours; hours in `heldAt.planned` count as exactly `heldAt.cap` (weighted). */
export function measureOf(rule: CapacityModel, hours: ReadonlyArray<Prepared>, heldAt?: { cap: number; planned: ReadonlySet<number> }): number {
  return meanOfTop(unitPeaks(rule, hours, heldAt), rule.count);
}

/**
 * The least the month's measure can be given what is metered: its `count` highest unit peaks
 * summed over `count` (with fewer units metered, the units still to come can only add).
 */
export function meteredFloor(rule: CapacityModel, hours: ReadonlyArray<Prepared>): number {
  const peaks = new Map<string, number>();
  for (const h of hours) if (h.weight > 0) peaks.set(unitOf(rule, h), Math.max(peaks.get(unitOf(rule, h)) ?? 0, h.kWh * h.weight));
  return (
    [...peaks.values()]
      .sort((a, b) => b - a)
      .slice(0, rule.count)
      .reduce((a, b) => a + b, 0) / rule.count
  );
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

/**
 * How a unit (a day, or an hour for `hourlyPeaks`) of planned hours is held: at a fixed weighted
 * peak, or (null) sharing the month's remaining room with the other shared units.
 */
export type FixedPeak = (hours: ReadonlyArray<{ startMs: number; weight: number }>) => number | null;

/**
 * Caps that keep every month the plan touches at or under `target` (or, where the month's metered
 * peaks are already above it, in the step those peaks paid for). Units `fixedPeak` fixes keep that
 * peak; the others all get the largest allowance the rest of the room leaves (all of them, without
 * `fixedPeak`: the worst case of every planned unit reaching it).
 */
export function holdingCaps(ctx: Ctx, facts: ReadonlyMap<number, SlotFact>, target: number, fixedPeak?: FixedPeak): Caps {
  const metered = new Map(ctx.meteredHours.map((h) => [Math.floor(h.startMs / HOUR_MS) * HOUR_MS, h.kWh]));
  const planHours = new Map<number, number>();
  for (const [start, f] of facts) {
    const h = Math.floor(start / HOUR_MS) * HOUR_MS;
    planHours.set(h, (planHours.get(h) ?? 0) + f.hours);
  }
  const all = hourlyEnergies([...ctx.meteredHours, ...[...planHours.keys()].map((startMs) => ({ startMs, kWh: 0 }))]);
  const out: Caps = new Map();
  const rule = ctx.rule;
  for (const hours of groupByMonth(ctx, all).values()) {
    const prepared = prepare(ctx, hours);
    const metMeasure = meteredFloor(rule, prepared);
    // Peaks already metered above the target: the step they are in is already paid for.
    const paid = rule.steps?.[stepIndex(rule, metMeasure)]?.upToKw;
    const monthTarget = metMeasure > target + 1e-6 ? (rule.steps ? paid : metMeasure) : target;
    if (monthTarget === null || monthTarget === undefined) continue;
    const units = new Map<string, Prepared[]>();
    for (const h of prepared) {
      if (!planHours.has(h.startMs) || h.weight === 0) continue;
      const list = units.get(unitOf(rule, h)) ?? [];
      list.push(h);
      units.set(unitOf(rule, h), list);
    }
    const fixed = new Map<string, number>();
    for (const [u, list] of units) {
      const f = fixedPeak?.(list) ?? null;
      if (f === null) continue;
      const peak = Math.max(f, ...list.map((h) => h.kWh * h.weight));
      fixed.set(u, peak);
      for (const h of list) h.kWh = peak / h.weight;
    }
    const planned = new Set(prepared.flatMap((h, i) => (planHours.has(h.startMs) && h.weight > 0 && !fixed.has(unitOf(rule, h)) ? [i] : [])));
    const cap = capFor(rule, prepared, planned, monthTarget);
    // A unit fixed below the `count`-th highest peak may rise to it: the measure stays the same.
    const peaks = unitPeaks(rule, prepared, { cap, planned }).sort((a, b) => b - a);
    const free = peaks.length >= rule.count ? (peaks[rule.count - 1] ?? 0) : 0;
    for (const [u, f] of fixed) if (f < free) fixed.set(u, free);
    for (const [u, list] of units) {
      for (const h of list) {
        const hourKwh = (fixed.get(u) ?? cap) / h.weight;
        out.set(h.startMs, { kw: (hourKwh - (metered.get(h.startMs) ?? 0)) / (planHours.get(h.startMs) ?? 1), hourKwh });
      }
    }
  }
  return out;
}

/** The input with a location cap on every held slot (never below its base load). */
export function withCaps(input: HomePlanInput, facts: ReadonlyMap<number, SlotFact>, caps: Caps): HomePlanInput {
  const extra: LpcCap[] = [];
  for (const [start, f] of facts) {
    const c = caps.get(Math.floor(start / HOUR_MS) * HOUR_MS);
    if (!c) continue;
    const kw = Math.max(f.baseKw, c.kw);
    if (kw < input.location.limitKw) extra.push({ startMs: start, endMs: f.endMs, maxKw: kw, scope: 'location' });
  }
  return { ...input, location: { ...input.location, lpc: [...(input.location.lpc ?? []), ...extra] } };
}
