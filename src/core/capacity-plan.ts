/**
 * Planning with the month's capacity fee. The fee is a step function of the month's peaks, which
 * makes the bill mixed-integer; instead of a MILP, an outer loop tries each step (or, for a fee per
 * kW, a few levels) below the one the unheld plan would land in: for each it shares the room the
 * step leaves (given the peaks metered so far) among the planned days in a few ways (and, where
 * those starve one device or the other, searches the level between), holds every slot to its
 * day's allowance with a location cap, plans again and keeps the cheapest whole bill (energy +
 * capacity fee). A held plan that would leave the tank or the car worse off than the unheld one
 * (a shortfall, or the tank ending cooler) is never chosen. Pure; time is an argument.
 */
import { planHome, slotFlexKw, slotFlexKwh } from './home-plan.js';
import { capacityFee, hourlyEnergies, stepIndex, type CapacityContext, type HourEnergy } from './capacity.js';
import {
  groupByMonth,
  holdingCaps,
  measureOf,
  meteredFloor,
  prepare,
  withCaps,
  withLocalCache,
  type Caps,
  type Ctx,
  type FixedPeak,
  type SlotFact,
} from './capacity-hold.js';
import type { CapacityModel } from './tariff.js';
import { HOUR_MS } from './zoned-time.js';
import type { HomePlanInput, LpcCap, Plan, Shortfall } from './types.js';

/** What planning the month's capacity step needs beside the plan's input (declared with the capacity rules). */
export type { CapacityContext } from './capacity.js';

interface Evaluated {
  bill: number;
  measureKw: number;
  feePerMonth: number;
}

const TOL = 1e-6;
/** Golden-section steps of the level search, and the width (kWh) at which it stops. */
const LEVEL_STEPS = 8;
const LEVEL_TOL_KWH = 0.01;

/** Base load (kW) by slot start, and each remaining slot's hours from `nowMs`. */
function slotFacts(input: HomePlanInput, nowMs: number): Map<number, SlotFact> {
  const out = new Map<number, SlotFact>();
  const b = input.location.baseLoadKw;
  input.slots.forEach((s, i) => {
    if (s.endMs <= nowMs) return;
    const baseKw = typeof b === 'number' ? b : (b[i] ?? 0);
    out.set(s.startMs, { baseKw, hours: (s.endMs - Math.max(nowMs, s.startMs)) / HOUR_MS, endMs: s.endMs });
  });
  return out;
}

/** The plan's hourly energies (base load included) merged with the metered hours. */
function projectedHours(p: Plan, facts: Map<number, SlotFact>, metered: ReadonlyArray<HourEnergy>): HourEnergy[] {
  const items: HourEnergy[] = [...metered];
  for (const s of p.slots) {
    const f = facts.get(s.startMs);
    items.push({ startMs: s.startMs, kWh: (f ? f.baseKw * f.hours : 0) + slotFlexKwh(s) });
  }
  return hourlyEnergies(items);
}

function evaluate(p: Plan, ctx: Ctx, facts: Map<number, SlotFact>): Evaluated {
  const months = [...groupByMonth(ctx, projectedHours(p, facts, ctx.meteredHours))];
  let fees = 0;
  let first: { measure: number; fee: number } | null = null;
  const current = p.slots[0] ? ctx.local(p.slots[0].startMs).month : null;
  for (const [key, hours] of months) {
    const measure = measureOf(ctx.rule, prepare(ctx, hours));
    const fee = capacityFee(ctx.rule, measure, Number(key.slice(5, 7))) * ctx.vatRate;
    fees += fee;
    if (key === current) first = { measure, fee };
  }
  return { bill: p.cost + fees, measureKw: first?.measure ?? 0, feePerMonth: first?.fee ?? 0 };
}

/** Targets (kW of the measure) worth trying: step tops below where the unheld plan lands. */
function targets(rule: CapacityModel, meteredMeasure: number, unheldMeasure: number): number[] {
  if (rule.steps) {
    return rule.steps.flatMap((s) =>
      s.upToKw !== null && s.upToKw >= meteredMeasure - TOL && stepIndex(rule, s.upToKw) < stepIndex(rule, unheldMeasure) ? [s.upToKw] : [],
    );
  }
  const levels = 6;
  const out: number[] = [];
  for (let i = 0; i < levels; i++) out.push(meteredMeasure + ((unheldMeasure - meteredMeasure) * i) / levels);
  return out.filter((v) => v < unheldMeasure - 0.05);
}

/** A plan's hour energies (base load and the metered part of the current hour included). */
function hourTotals(p: Plan, facts: Map<number, SlotFact>, ctx: Ctx): Map<number, number> {
  return new Map(projectedHours(p, facts, ctx.meteredHours).map((h) => [h.startMs, h.kWh]));
}

/** UTC starts of the hours the plan covers. */
function planHourSet(facts: Map<number, SlotFact>): Set<number> {
  return new Set([...facts.keys()].map((s) => Math.floor(s / HOUR_MS) * HOUR_MS));
}

/** Per planned hour: what it takes with only its base load. */
function floorHours(facts: Map<number, SlotFact>, ctx: Ctx): Map<number, number> {
  const out = new Map(ctx.meteredHours.map((h) => [h.startMs, h.kWh]));
  for (const [start, f] of facts) {
    const h = Math.floor(start / HOUR_MS) * HOUR_MS;
    out.set(h, (out.get(h) ?? 0) + f.baseKw * f.hours);
  }
  return out;
}

/** Units whose hours in `hours` stay below their allowance in `caps` keep the peak they reach there. */
function keepBelow(hours: ReadonlyMap<number, number>, caps: Caps): FixedPeak {
  return (list) => {
    const peak = Math.max(...list.map((h) => (hours.get(h.startMs) ?? 0) * h.weight));
    const allowance = Math.min(...list.map((h) => (caps.get(h.startMs)?.hourKwh ?? Infinity) * h.weight));
    return peak < allowance - 1e-4 ? peak : null;
  };
}

/** Only the unit holding hour `richest` shares the room; the others keep their floor, or `level` above it. */
function onlyUnitOf(richest: number, floors: ReadonlyMap<number, number>, level = 0): FixedPeak {
  return (list) => (list.some((h) => h.startMs === richest) ? null : Math.max(level, ...list.map((h) => (floors.get(h.startMs) ?? 0) * h.weight)));
}

function sameCaps(a: Caps, b: Caps): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (Math.abs((b.get(k)?.hourKwh ?? NaN) - v.hourKwh) > 1e-9) return false;
  return true;
}

/** A tank's temperature at the end of the plan, null without it. */
const endTempC = (p: Plan, id: string): number | null => p.slots.at(-1)?.tanks?.[id]?.endTempC ?? null;

/**
 * How much worse `held` leaves each device than `free` (none listed: no worse): shortfalls
 * beyond the unheld plan's of the same kind, and the tank ending cooler than the unheld plan
 * leaves it or than it started (the planner only prices a lower end state, so a hold could
 * otherwise pass the cost on to after the horizon). Mixed units (K, kWh): only used as a trend.
 */
function worseBy(held: Plan, free: Plan, input: HomePlanInput): Map<Shortfall['device'], number> {
  const by = new Map<Shortfall['device'], number>();
  const add = (device: Shortfall['device'], v: number): void => {
    if (v > 0) by.set(device, (by.get(device) ?? 0) + v);
  };
  for (const t of input.tanks) {
    const heldEnd = endTempC(held, t.id);
    const freeEnd = endTempC(free, t.id);
    const start = free.tanks?.[t.id]?.startTempC;
    if (heldEnd !== null && freeEnd !== null && start !== undefined) {
      add('tank', Math.min(freeEnd, Math.min(t.maxC, Math.max(t.minC, start))) - 1e-3 - heldEnd);
    }
  }
  for (const s of held.shortfalls) {
    const f = free.shortfalls.find((x) => x.device === s.device && x.deviceId === s.deviceId && x.kind === s.kind);
    add(s.device, s.amount - 1e-3 - (f?.amount ?? -1e-3));
  }
  return by;
}

const sumOf = (by: ReadonlyMap<unknown, number>): number => [...by.values()].reduce((a, b) => a + b, 0);

/** The input with every room off (a zone cap of 0 kW) in the slots where `others` charges a car. */
function coastRooms(input: HomePlanInput, others: Plan): HomePlanInput {
  const off: LpcCap[] = others.slots
    .filter((s) => Object.values(s.evs ?? {}).some((d) => d.energyKwh > 1e-6))
    .map((s) => ({ startMs: s.startMs, endMs: s.endMs, maxKw: 0, scope: 'zone' }));
  return { ...input, location: { ...input.location, lpc: [...(input.location.lpc ?? []), ...off] } };
}

/** Marks the slots the capacity hold binds and says so in their explanation. */
function explain(p: Plan, input: HomePlanInput, facts: Map<number, SlotFact>, caps: Caps): Plan {
  const slots = p.slots.map((s) => {
    const c = caps.get(Math.floor(s.startMs / HOUR_MS) * HOUR_MS);
    const f = facts.get(s.startMs);
    if (!c || !f) return s;
    // Control keeps the hour within its allowance (the hourly energy guard), binding or not.
    const held = { ...s, hourAllowanceKwh: c.hourKwh };
    const capKw = Math.max(f.baseKw, c.kw);
    const otherCaps = (input.location.lpc ?? [])
      .filter((l) => l.scope === 'location' && l.startMs < s.endMs && l.endMs > s.startMs)
      .map((l) => l.maxKw);
    const used = f.baseKw + slotFlexKw(s);
    if (used < capKw - 1e-4 || capKw >= Math.min(input.location.limitKw, ...otherCaps) - TOL) return held;
    const binding = [...s.binding.filter((b) => b !== 'lpc' && b !== 'reservedLpc' && b !== 'locationLimit'), 'capacityStep' as const];
    const head = s.reason.replace(/; bound by .*$/, '');
    return { ...held, binding, reason: `${head}; bound by ${binding.join(', ')}; held at ${c.hourKwh.toFixed(1)} kWh/h: the month's capacity step` };
  });
  return { ...p, slots };
}

/**
 * Plans the whole bill: energy plus the month's capacity fee. Without a plan to improve on
 * (fallback mode, no slots) the unheld plan is returned with its projected fee.
 */
export function planWithCapacity(input: HomePlanInput, nowMs: number, context: CapacityContext, previous?: Plan, planFn = planHome): Plan {
  const ctx = withLocalCache(context);
  const facts = slotFacts(input, nowMs);
  const free = planFn(input, nowMs, previous);
  const freeEval = evaluate(free, ctx, facts);
  let best: { plan: Plan; ev: Evaluated; caps: Caps | null } = { plan: free, ev: freeEval, caps: null };
  if (free.mode === 'optimal' && free.slots.length > 0) {
    const current = ctx.local(free.slots[0]!.startMs).month;
    const metNow = ctx.meteredHours.filter((h) => ctx.local(h.startMs).month === current);
    const metMeasure = meteredFloor(ctx.rule, prepare(ctx, metNow));
    const freeHours = hourTotals(free, facts, ctx);
    const planned = planHourSet(facts);
    let richest = NaN;
    let top = -Infinity;
    for (const [h, kWh] of freeHours) {
      const v = planned.has(h) ? kWh * ctx.local(h).weight : -Infinity;
      if (v > top) [richest, top] = [h, v];
    }
    const floor = floorHours(facts, ctx);
    const attempt = (caps: Caps): { plan: Plan; ev: Evaluated; worse: Map<Shortfall['device'], number> } => {
      const heldInput = withCaps(input, facts, caps);
      let held = planFn(heldInput, nowMs, previous);
      let worse = worseBy(held, free, input);
      // A hold that takes a room below its band may still be kept with the rooms coasting: off in
      // the hours the cars charge under it (planned without the rooms), pre-heated before. A car
      // takes a held hour whole (its least power); a tank's few tenths a slot leave the rooms room.
      // The home's search does not find that split of a held hour by itself.
      if (worse.has('zone')) {
        const coasting = planFn(coastRooms(heldInput, planFn({ ...heldInput, zones: [] }, nowMs, previous)), nowMs, previous);
        const coastWorse = worseBy(coasting, free, input);
        if (sumOf(coastWorse) < sumOf(worse)) [held, worse] = [coasting, coastWorse];
      }
      const ev = evaluate(held, ctx, facts);
      if (worse.size === 0 && ev.bill < best.ev.bill - TOL) best = { plan: held, ev, caps };
      return { plan: held, ev, worse };
    };
    type Held = { plan: Plan; ev: Evaluated; caps: Caps };
    type Tried = { caps: Caps; starved: Set<Shortfall['device']>; score: number };
    // The richest unit's share against the others' level: too low a level starves the others,
    // too high one the richest, so how much worse a hold leaves the devices falls and then rises
    // with the level; a golden-section search for the level that leaves them whole at the least bill.
    const levelSearch = (target: number, top: number, consider: (caps: Caps) => number): void => {
      const score = (level: number): number => consider(holdingCaps(ctx, facts, target, onlyUnitOf(richest, floor, level)));
      const g = (Math.sqrt(5) - 1) / 2;
      let [a, b] = [0, top];
      let [x1, x2] = [b - g * (b - a), a + g * (b - a)];
      let [f1, f2] = [score(x1), score(x2)];
      for (let i = 0; i < LEVEL_STEPS && b - a > LEVEL_TOL_KWH; i++) {
        if (f1 <= f2) {
          [b, x2, f2] = [x2, x1, f1];
          x1 = b - g * (b - a);
          f1 = score(x1);
        } else {
          [a, x1, f1] = [x1, x2, f2];
          x2 = a + g * (b - a);
          f2 = score(x2);
        }
      }
    };
    // From the step just below the unheld plan's down: where no hold keeps the tank and the car
    // whole, a tighter one will not either, so the search stops there.
    for (const target of targets(ctx.rule, metMeasure, freeEval.measureKw).reverse()) {
      // No hold plans the energy cheaper than the unheld plan: with this step's fee, that is
      // the least this target can cost; a target that cannot beat the best so far is skipped.
      const bound = free.cost + capacityFee(ctx.rule, target, Number(current.slice(5, 7))) * ctx.vatRate;
      if (bound >= best.ev.bill - TOL) continue;
      const uniform = holdingCaps(ctx, facts, target);
      if (uniform.size === 0) continue;
      let here: Held | null = null;
      const tried: Tried[] = [];
      const consider = (caps: Caps): Tried => {
        const hit = tried.find((t) => sameCaps(t.caps, caps));
        if (hit) return hit;
        const r = attempt(caps);
        if (r.worse.size === 0 && (!here || r.ev.bill < here.ev.bill)) here = { ...r, caps };
        const worse = [...r.worse.values()].reduce((a, b) => a + b, 0);
        const t = { caps, starved: new Set(r.worse.keys()), score: worse > 0 ? 1e9 * (1 + worse) : r.ev.bill };
        tried.push(t);
        return t;
      };
      const settled = (): boolean => here !== null && (here as Held).ev.bill <= bound + 1e-9 * (1 + Math.abs(bound));
      // Ways to share the month's room among the planned days: all alike; days the unheld plan
      // keeps low stay as they are; only the day of the unheld plan's top hour gets room, the
      // others their base load (each raised to the month's `count`-th peak where that is higher;
      // holding them at base load plus the tank found nothing more once they were). The best is
      // refined once more.
      // A share that reaches the bound ends the search for this target.
      const shares = [
        uniform,
        holdingCaps(ctx, facts, target, keepBelow(freeHours, uniform)),
        holdingCaps(ctx, facts, target, onlyUnitOf(richest, floor)),
      ];
      const ends: Set<Shortfall['device']>[] = [];
      for (const caps of shares) if (!settled()) ends.push(consider(caps).starved);
      // None keeps the devices whole, but all alike starves one device that the top day alone
      // keeps whole, and the other way round: a level in between may keep both.
      const [alike, , topOnly] = ends;
      if (!here && alike && topOnly && [...alike].some((d) => !topOnly.has(d)) && [...topOnly].some((d) => !alike.has(d))) {
        levelSearch(target, Math.max(...[...uniform.values()].map((c) => c.hourKwh)) * 2, (caps) => consider(caps).score);
      }
      const chosen = here as Held | null;
      if (!chosen) break;
      if (!settled()) consider(holdingCaps(ctx, facts, target, keepBelow(hourTotals(chosen.plan, facts, ctx), chosen.caps)));
    }
  }
  const chosen = best.caps ? explain(best.plan, input, facts, best.caps) : best.plan;
  const heldAt = best.caps ? Math.max(...[...best.caps.values()].map((c) => c.hourKwh)) : null;
  return {
    ...chosen,
    capacity: {
      measureKw: best.ev.measureKw,
      step: ctx.rule.steps ? stepIndex(ctx.rule, best.ev.measureKw) : null,
      feePerMonth: best.ev.feePerMonth,
      heldAtKwhPerH: heldAt,
      bill: best.ev.bill,
      unheldBill: freeEval.bill,
    },
  };
}
