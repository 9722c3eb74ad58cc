/**
 * The heated-zones part of `npm run bench:planner` (`--family=zones`): 48-hour hourly plans of a
 * home with three rooms (a living room on a 2 kW thermostat the controller moves, a bedroom's
 * 1 kW panel heater on a relay, a bathroom's 1 kW floor heating), a 200 L tank and an 11 kW car,
 * under a 3 × 25 A fuse and a capacity tariff (bench-capacity.ts's Elvia-like steps, seeded peaks
 * metered earlier in the month), on the real price files with seeded outdoor temperatures. The
 * planner's whole bill (`planWithCapacity`: energy + fee) is compared with the optimum of the same
 * model from HiGHS, a MILP: the tank's and the car's models (`deviceParts`), each room's exact
 * first-order step with its band as hard bounds (the relay room on/off for whole slots, stopped
 * only at the band's top), all within the headroom per slot, and the capacity step.
 */
import { performance } from 'node:perf_hooks';
import { planWithCapacity, type CapacityContext } from '../src/core/capacity-plan.js';
import { bindingAntiCycling } from '../src/core/home-plan.js';
import { setupPlan, type Setup } from '../src/core/plan-setup.js';
import { buildPriceSeries } from '../src/core/prices.js';
import { rng } from '../src/core/prng.js';
import { defaultRoomModel } from '../src/core/room-model.js';
import { monthKey } from '../src/core/capacity.js';
import { tariffLocalTime } from '../src/core/tariff.js';
import { setupZone, type ZoneSetup } from '../src/core/zone-plan.js';
import { localParts } from '../src/core/zoned-time.js';
import type { EvParams, HomePlanInput, Plan, TankParams, ZoneParams } from '../src/core/types.js';
import { areaTimezone, hourlyWindows, type PriceSeries } from './lib/price-data.js';
import { deviceParts, lpText, n6, plannerObjective, type ModelParts } from './lib/reference-model.js';
import { benchRule, capacityParts, meteredPeaks } from './bench-capacity.js';
import { deviceSetups } from './bench-multi.js';
import { DRAW_L, seededDeltas, solveReference, type Highs } from './bench-planner.js';

const H = 3_600_000;
const VAT = 1.25;

/** A band per hour: `day` from 06:00 to 23:00 local, `night` otherwise. */
function bands(startMs: number, hours: number, timezone: string, day: number, night: number, maxC: number): { minC: number; maxC: number }[] {
  return Array.from({ length: hours }, (_, t) => {
    const h = localParts(startMs + t * H, timezone).hour;
    return { minC: h >= 6 && h < 23 ? day : night, maxC };
  });
}

/** Three rooms, a tank and a car under a fuse, seeded. */
export function zonesScenario(
  series: PriceSeries,
  points: { startMs: number; price: number }[],
  seed: number,
): { input: HomePlanInput; nowMs: number } {
  const rand = rng(seed);
  const startMs = points[0]!.startMs;
  const hours = points.length;
  const timezone = areaTimezone(series.area);
  const slots = buildPriceSeries({
    slotMinutes: 60,
    fromMs: startMs,
    toMs: startMs + hours * H,
    timezone,
    currency: 'EUR',
    spot: { actual: { units: { currency: 'EUR', energyUnit: 'kWh' }, resolutionMinutes: 60, points } },
    deltas: seededDeltas(rand, startMs, hours),
    fees: { gridFeePerKwh: 0.03, taxPerKwh: 0.01, vatRate: 1.25 },
  });
  // Winter days of −13…+3 °C: a level, a daily swing (coldest before dawn), a front moving the level over the two days.
  const level = -7 + rand() * 4;
  const drift = (rand() - 0.5) * 6;
  const outdoorTempC = Array.from({ length: hours }, (_, t) => {
    const h = localParts(startMs + t * H, timezone).hour;
    return level + (drift * t) / hours + 3 * Math.sin((2 * Math.PI * (h - 9)) / 24);
  });
  const room = (id: string, over: Partial<ZoneParams> & Pick<ZoneParams, 'powerKw' | 'model' | 'band'>): ZoneParams => ({
    id,
    control: 'continuous',
    currentTempC: over.band[0]!.minC + rand() * 1.5,
    outdoorTempC,
    gainsKw: 0.05 + rand() * 0.15,
    frostC: 8,
    ...over,
  });
  const zones: ZoneParams[] = [
    room('living', {
      powerKw: 2,
      model: defaultRoomModel({ powerKw: 2, floorAreaM2: 35, construction: 'medium' }),
      band: bands(startMs, hours, timezone, 21, 19, 24),
    }),
    room('bedroom', {
      powerKw: 1,
      control: 'relay',
      model: defaultRoomModel({ powerKw: 1, floorAreaM2: 14, construction: 'light' }),
      band: bands(startMs, hours, timezone, 17, 17, 21),
    }),
    room('bathroom', {
      powerKw: 1,
      model: defaultRoomModel({ powerKw: 1, floorAreaM2: 8, construction: 'heavy', heatLossKwPerK: 0.6 / 41 }),
      band: bands(startMs, hours, timezone, 23, 21, 27),
    }),
  ];
  const tank: TankParams & { id: string } = {
    id: 'boiler',
    volumeL: 200,
    powerKw: 2,
    coldWaterC: 8,
    ambientC: 18,
    heatLossWPerK: 1.6,
    minC: 50,
    maxC: 75,
    drawProfileKwh: rand() < 0.5 ? DRAW_L : undefined,
    currentTempC: 52 + rand() * 20,
    control: 'continuous',
  };
  const car: EvParams & { id: string } = {
    id: 'garage',
    energyNeededKwh: 10 + rand() * 25,
    arrivalMs: startMs + Math.floor(rand() * 6) * H,
    departureMs: startMs + (14 + Math.floor(rand() * 26)) * H,
    minPowerKw: 4.14,
    maxPowerKw: 11,
    efficiency: 0.9,
  };
  const baseLoadKw = Array.from({ length: slots.length }, () => 0.5 + rand() * 1.5);
  return {
    input: { slots, timezone, currency: 'EUR', tanks: [tank], evs: [car], zones, location: { limitKw: 17.3, baseLoadKw } },
    nowMs: startMs,
  };
}

/** Each zone as the planner sets it up, on the location's own set-up. */
export function zoneSetups(input: HomePlanInput, nowMs: number): { location: Setup; zones: ZoneSetup[] } {
  const location = setupPlan(
    { slots: input.slots, timezone: input.timezone, currency: input.currency, location: input.location, tank: null, ev: null },
    nowMs,
    undefined,
  );
  const slotMinutes = location.slotMs / 60_000;
  const zones = (input.zones ?? []).map((z) => setupZone(z, location, 0, input.location.lpc ?? [], bindingAntiCycling(z.antiCycling, slotMinutes)));
  return { location, zones };
}

/**
 * One room's rows: E[t] = a·E[t−1] − k[t] + β[t]·q[t] (the planner's exact step), the band's lower
 * edge and the ceiling as bounds; a relay room's q is its full slot's energy when on, less only
 * when the room then ends at the ceiling (its own thermostat stops it there).
 */
function zoneParts(z: ZoneSetup, tag: string): ModelParts {
  const p: ModelParts = { obj: [], rows: [], bounds: [], bins: [] };
  const v = (name: string, t: number): string => `${name}${tag}${t}`;
  z.k.forEach((k, t) => {
    const q = v('zq', t);
    const E = v('zE', t);
    const beta = z.beta[t]!;
    p.obj.push(`+ ${n6(z.price[t]!)} ${q}`);
    p.rows.push(
      t === 0
        ? `${v('zs', t)}: ${E} - ${n6(beta)} ${q} = ${n6(z.a * z.e0 - k)}`
        : `${v('zs', t)}: ${E} - ${n6(z.a)} ${v('zE', t - 1)} - ${n6(beta)} ${q} = ${n6(-k)}`,
    );
    p.bounds.push(`${n6(z.floor[t]!)} <= ${E} <= ${n6(z.eMaxAt[t]!)}`);
    if (z.zone.control === 'relay') {
      const L = z.full[t]!;
      const u = v('zu', t);
      const c = v('zc', t);
      p.bounds.push(`0 <= ${q} <= ${n6(Math.min(L, z.cap[t]!))}`);
      p.rows.push(
        `${v('zru', t)}: ${q} - ${n6(L)} ${u} <= 0`,
        `${v('zrc', t)}: ${c} - ${u} <= 0`,
        `${v('zrq', t)}: ${q} - ${n6(L)} ${u} + ${n6(L)} ${c} >= 0`,
        `${v('zrt', t)}: ${E} - ${n6(z.eMaxAt[t]! - z.floor[t]!)} ${c} >= ${n6(z.floor[t]!)}`,
      );
      // Valid cut (tightens the relaxation): on ⇒ heat βq = min(βL, ceiling − base) ≥ γ·(ceiling − base),
      // γ = min(1, βL/D), D = ceiling − the lowest base (from the floor before); with base = E − βq:
      // βq·(1 − γ) + γ·E − γ·(ceiling − floor)·u ≥ γ·floor (off: q = 0 and E ≥ floor).
      const lowBase = t === 0 ? z.a * z.e0 - k : z.a * z.floor[t - 1]! - k;
      const D = z.eMaxAt[t]! - lowBase;
      if (D > 1e-9 && L > 0) {
        const g = Math.min(1, (beta * L) / D);
        p.rows.push(
          `${v('zrk', t)}: ${n6(beta * (1 - g))} ${q} + ${n6(g)} ${E} - ${n6(g * (z.eMaxAt[t]! - z.floor[t]!))} ${u} >= ${n6(g * z.floor[t]!)}`,
        );
      }
      p.bins.push(u, c);
    } else p.bounds.push(`0 <= ${q} <= ${n6(z.cap[t]!)}`);
  });
  return p;
}

const join = (parts: ReadonlyArray<ModelParts>): ModelParts => ({
  obj: parts.flatMap((p) => p.obj),
  rows: parts.flatMap((p) => p.rows),
  bounds: parts.flatMap((p) => p.bounds),
  bins: parts.flatMap((p) => p.bins),
});

/** The home's MILP: every device and room, all within the headroom per slot, and the capacity step. */
export function zonesReferenceModel(input: HomePlanInput, nowMs: number, ctx: CapacityContext): string {
  const devices = deviceSetups(input, nowMs);
  const { location, zones } = zoneSetups(input, nowMs);
  const flex = (t: number): string[] => [...devices.map((d, i) => `${d.setup.tank ? 'q' : 'e'}d${i}_${t}`), ...zones.map((_, i) => `zqz${i}_${t}`)];
  const base = input.location.baseLoadKw;
  const parts = join([
    ...devices.map((d, i) => deviceParts(d.setup, d.input, `d${i}_`)),
    ...zones.map((z, i) => zoneParts(z, `z${i}_`)),
    {
      obj: [],
      rows: location.headroomE.map((h, t) => `h${t}: ${flex(t).join(' + ')} <= ${n6(h)}`),
      bounds: [],
      bins: [],
    },
    capacityParts(location.slots, input.timezone, (t) => (typeof base === 'number' ? base : base[t]!), flex, ctx.meteredHours.slice(), ctx.rule),
  ]);
  return lpText(parts);
}

/** The plan's whole bill in the oracle's terms: every device's and room's energy at its prices, and the fee. */
export function zonesObjective(input: HomePlanInput, nowMs: number, p: Plan): number {
  const devices = deviceSetups(input, nowMs).reduce((sum, d) => sum + plannerObjective(d.setup, p), 0);
  const { zones } = zoneSetups(input, nowMs);
  const rooms = zones.reduce((sum, z) => sum + p.slots.reduce((x, s, t) => x + z.price[t]! * (s.zones?.[z.id]?.energyKwh ?? 0), 0), 0);
  return devices + rooms + (p.capacity?.feePerMonth ?? 0);
}

/** Median of three runs of one plan, ms. */
function timePlan(input: HomePlanInput, nowMs: number, ctx: CapacityContext): { ms: number; plan: Plan } {
  const runs = [0, 1, 2].map(() => {
    const t0 = performance.now();
    const plan = planWithCapacity(input, nowMs, ctx);
    return { ms: performance.now() - t0, plan };
  });
  return { ms: runs.map((r) => r.ms).sort((a, b) => a - b)[1]!, plan: runs[0]!.plan };
}

export interface ZonesBench {
  windows: number;
  gaps: number[];
  feasible: number;
  feasibleMissed: number;
  timeouts: number;
  /** Of the HiGHS time-outs, how many the planner's bill is at or below the incumbent's, and the largest excess, %. */
  atOrBelowIncumbent: number;
  maxAboveIncumbentPct: number;
  p50Ms: number;
  p99Ms: number;
  /** Mean saving of the whole bill against the thermostats, tank and car alone (where that keeps the fuse), %. */
  savingsPct: number;
  worst: string[];
  missed: string[];
}

/** Every `stride` hours of every price file within one month (quick: every 96 h, at most 6 windows). */
export function runZonesBench(highs: Highs, series: PriceSeries[], quick: boolean, log: (line: string) => void): ZonesBench {
  const out: ZonesBench = {
    windows: 0,
    gaps: [],
    feasible: 0,
    feasibleMissed: 0,
    timeouts: 0,
    atOrBelowIncumbent: 0,
    maxAboveIncumbentPct: 0,
    p50Ms: NaN,
    p99Ms: NaN,
    savingsPct: NaN,
    worst: [],
    missed: [],
  };
  const times: number[] = [];
  const savings: number[] = [];
  const worst: { gap: number; at: string }[] = [];
  const cap = quick ? 6 : 24;
  let seed = 1;
  outer: for (const sr of series) {
    for (const w of hourlyWindows(sr, 48, quick ? 96 : 48)) {
      if (out.windows >= cap) break outer;
      const used = seed++ * 7919 + 31;
      const { input, nowMs } = zonesScenario(sr, w.points, used);
      const tz = input.timezone;
      if (monthKey(w.startMs, tz) !== monthKey(w.startMs + 47 * H, tz)) continue;
      const metered = meteredPeaks(w.startMs, tz, used);
      const planDays = new Set(input.slots.map((sl) => tariffLocalTime(sl.startMs, tz, []).date));
      // The MILP needs `count` day peaks (see bench-capacity.ts).
      if (metered.length + planDays.size < benchRule.count) continue;
      const ctx: CapacityContext = { rule: benchRule, timezone: tz, holidays: [], meteredHours: metered, vatRate: VAT };
      const at = `${sr.id}@${new Date(w.startMs).toISOString()}#${used}`;
      out.windows++;
      const { ms, plan: p } = timePlan(input, nowMs, ctx);
      times.push(ms);
      if (p.baselineRespectsLimits) savings.push((100 * (p.baselineCost - p.cost)) / Math.max(Math.abs(p.baselineCost), 0.5));
      const ref = solveReference(highs, zonesReferenceModel(input, nowMs, ctx), 30);
      if (!ref.feasible) continue;
      out.feasible++;
      if (p.shortfalls.length > 0) {
        out.feasibleMissed++;
        out.missed.push(at);
      }
      const gap = (100 * (zonesObjective(input, nowMs, p) - ref.objective)) / Math.max(Math.abs(ref.objective), 0.5);
      if (!ref.optimal) {
        out.timeouts++;
        if (gap <= 1e-6) out.atOrBelowIncumbent++;
        else out.maxAboveIncumbentPct = Math.max(out.maxAboveIncumbentPct, gap);
        continue;
      }
      out.gaps.push(gap);
      worst.push({ gap, at });
    }
  }
  out.worst = worst
    .sort((a, b) => b.gap - a.gap)
    .slice(0, 5)
    .map((x) => `${x.at} (${x.gap.toFixed(4)} %)`);
  const sorted = times.slice().sort((a, b) => a - b);
  const pick = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  out.p99Ms = pick(0.99);
  out.p50Ms = pick(0.5);
  out.savingsPct = savings.length > 0 ? savings.reduce((a, b) => a + b, 0) / savings.length : NaN;
  const mean = out.gaps.reduce((a, b) => a + b, 0) / Math.max(1, out.gaps.length);
  log(
    `zones     windows ${out.windows}  HiGHS-feasible ${out.feasible}  planner-feasible ${out.feasible - out.feasibleMissed}  ` +
      `gap mean ${mean.toFixed(4)} % max ${(out.gaps.length > 0 ? Math.max(...out.gaps) : NaN).toFixed(4)} % (over ${out.gaps.length} proven optima` +
      `${out.timeouts > 0 ? `; ${out.timeouts} HiGHS time-outs, planner ≤ incumbent in ${out.atOrBelowIncumbent}, at most ${out.maxAboveIncumbentPct.toFixed(4)} % above it` : ''})  energy savings vs thermostats alone ${out.savingsPct.toFixed(1)} % (${savings.length} windows)  ` +
      `time p50 ${out.p50Ms.toFixed(2)} ms p99 ${out.p99Ms.toFixed(2)} ms`,
  );
  if (process.argv.includes('--verbose'))
    log(`  worst gaps ${out.worst.join(' ')}${out.missed.length > 0 ? `; missed: ${out.missed.join(' ')}` : ''}`);
  return out;
}
