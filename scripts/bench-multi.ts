/**
 * The multi-device part of `npm run bench:planner` (`--family=multi`): 48-hour hourly plans of a
 * home with two tanks and two cars (`planHome`) on the real price files, compared with the optimum
 * of the same model from HiGHS. The home: a 200 L / 2 kW tank and a 300 L / 3 kW tank with comfort
 * deadlines, an 11 kW car (4.14 kW minimum) and a 7.4 kW one-phase car (1.38 kW minimum) with their
 * own needs, arrivals and departures, under a 3 × 20 A or 3 × 25 A main fuse with base load, a
 * location LPC cap of a few hours and sometimes an LPC cap on the second car alone: in cheap hours
 * the devices want more than the fuse allows.
 *
 * The oracle is each device's own model (the pair model of `referenceModel`, one device at a time,
 * from the planner's own setup: tank energy balance with floors, comfort and legionella; car need
 * with its minimum power as a semi-continuous variable) with one shared row per slot: all devices
 * together within the location's headroom (limit and location LPC cap less base load). A MILP.
 */
import { performance } from 'node:perf_hooks';
import { planHome } from '../src/core/home-plan.js';
import { setupPlan, type Setup } from '../src/core/plan-setup.js';
import { buildPriceSeries } from '../src/core/prices.js';
import { rng } from '../src/core/prng.js';
import type { EvParams, HomePlanInput, LpcCap, Plan, PlanInput, TankParams } from '../src/core/types.js';
import { areaTimezone, hourlyWindows, type PriceSeries } from './lib/price-data.js';
import { deviceParts, lpText, n6, plannerObjective, type ModelParts } from './lib/reference-model.js';
import { comfortDeadlines, DRAW_L, seededDeltas, solveReference, type Highs } from './bench-planner.js';

const H = 3_600_000;

/** Two tanks and two cars under one fuse, seeded. */
export function multiScenario(
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
  const small: TankParams & { id: string } = {
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
    legionella: { tempC: 65, everyDays: 7, lastReachedMs: startMs - (5.5 + rand() * 2) * 86_400_000 },
  };
  const big: TankParams & { id: string } = {
    id: 'store',
    volumeL: 300,
    powerKw: 3,
    coldWaterC: 8,
    ambientC: 15,
    heatLossWPerK: 2.2,
    minC: 48,
    maxC: 80,
    drawProfileKwh: DRAW_L.map((kwh) => kwh * (1.2 + rand() * 0.6)),
    currentTempC: 50 + rand() * 25,
    control: 'continuous',
    legionella: { tempC: 65, everyDays: 7, lastReachedMs: startMs - (4 + rand() * 3.5) * 86_400_000 },
    comfort: comfortDeadlines(startMs, hours, timezone),
  };
  const threePhase: EvParams & { id: string } = {
    id: 'garage',
    energyNeededKwh: 10 + rand() * 30,
    arrivalMs: startMs + Math.floor(rand() * 6) * H,
    departureMs: startMs + (14 + Math.floor(rand() * 26)) * H,
    minPowerKw: 4.14,
    maxPowerKw: 11,
    efficiency: 0.9,
  };
  const onePhase: EvParams & { id: string } = {
    id: 'driveway',
    energyNeededKwh: 5 + rand() * 20,
    arrivalMs: startMs + Math.floor(2 + rand() * 8) * H,
    departureMs: startMs + (20 + Math.floor(rand() * 28)) * H,
    minPowerKw: 1.38,
    maxPowerKw: 7.4,
    efficiency: 0.88,
  };
  const lpcStart = startMs + (16 + Math.floor(rand() * 20)) * H;
  const lpc: LpcCap[] = [{ startMs: lpcStart, endMs: lpcStart + (2 + Math.floor(rand() * 3)) * H, maxKw: 6, scope: 'location' }];
  if (rand() < 0.5) {
    const at = startMs + Math.floor(rand() * 40) * H;
    lpc.push({ startMs: at, endMs: at + 3 * H, maxKw: 3.7, scope: 'ev', deviceId: 'driveway' });
  }
  const limitKw = rand() < 0.5 ? 13.8 : 17.3;
  const baseLoadKw = Array.from({ length: slots.length }, () => 0.8 + rand() * 2);
  return {
    input: { slots, timezone, currency: 'EUR', tanks: [small, big], evs: [threePhase, onePhase], location: { limitKw, baseLoadKw, lpc } },
    nowMs: startMs,
  };
}

/** Each device's setup, as the pair planner sees it alone under the home's limits. */
export function deviceSetups(input: HomePlanInput, nowMs: number): { setup: Setup; input: PlanInput }[] {
  const common = { slots: input.slots, timezone: input.timezone, currency: input.currency, location: input.location };
  const devices: PlanInput[] = [
    ...input.tanks.map((tank) => ({ ...common, tank, ev: null })),
    ...input.evs.map((ev) => ({ ...common, tank: null, ev })),
  ];
  return devices.map((d) => ({ setup: setupPlan(d, nowMs, undefined), input: d }));
}

/** The MILP of the home: every device's model, all of them within the location's headroom per slot. */
export function multiReferenceModel(input: HomePlanInput, nowMs: number): string {
  const devices = deviceSetups(input, nowMs);
  const parts: ModelParts = { obj: [], rows: [], bounds: [], bins: [] };
  const vars: string[][] = [];
  devices.forEach((d, i) => {
    const tag = `d${i}_`;
    const p = deviceParts(d.setup, d.input, tag);
    parts.obj.push(...p.obj);
    parts.rows.push(...p.rows);
    parts.bounds.push(...p.bounds);
    parts.bins.push(...p.bins);
    for (let t = 0; t < d.setup.n; t++) (vars[t] ??= []).push(`${d.setup.tank ? 'q' : 'e'}${tag}${t}`);
  });
  const headroomE = devices[0]?.setup.headroomE ?? [];
  vars.forEach((vs, t) => parts.rows.push(`h${t}: ${vs.join(' + ')} <= ${n6(headroomE[t]!)}`));
  return lpText(parts);
}

/** The plan's cost of the oracle's objective: each device's energy at its setup's prices. */
export function multiObjective(input: HomePlanInput, nowMs: number, p: Plan): number {
  return deviceSetups(input, nowMs).reduce((sum, d) => sum + plannerObjective(d.setup, p), 0);
}

/** Median of three runs of one home plan, ms. */
function timeHomePlan(input: HomePlanInput, nowMs: number): { ms: number; plan: Plan } {
  const runs = [0, 1, 2].map(() => {
    const t0 = performance.now();
    const plan = planHome(input, nowMs);
    return { ms: performance.now() - t0, plan };
  });
  return { ms: runs.map((r) => r.ms).sort((a, b) => a - b)[1]!, plan: runs[0]!.plan };
}

export interface MultiBench {
  windows: number;
  gaps: number[];
  feasible: number;
  feasibleMissed: number;
  timeouts: number;
  p99Ms: number;
  p50Ms: number;
  /** The windows with the largest gaps, `series@start#seed (gap)`. */
  worst: string[];
  missed: string[];
}

/** Every `stride` hours of every price file (quick: every 96 h, at most 6 windows). */
export function runMultiBench(highs: Highs, series: PriceSeries[], quick: boolean, log: (line: string) => void): MultiBench {
  const out: MultiBench = { windows: 0, gaps: [], feasible: 0, feasibleMissed: 0, timeouts: 0, p99Ms: NaN, p50Ms: NaN, worst: [], missed: [] };
  const times: number[] = [];
  const worst: { gap: number; at: string }[] = [];
  const cap = quick ? 6 : Infinity;
  let seed = 1;
  outer: for (const sr of series) {
    for (const w of hourlyWindows(sr, 48, quick ? 96 : 24)) {
      if (out.windows >= cap) break outer;
      const used = seed++ * 7919 + 23;
      const at = `${sr.id}@${new Date(w.startMs).toISOString()}#${used}`;
      const { input, nowMs } = multiScenario(sr, w.points, used);
      out.windows++;
      const { ms, plan: p } = timeHomePlan(input, nowMs);
      times.push(ms);
      const ref = solveReference(highs, multiReferenceModel(input, nowMs), 10);
      if (!ref.feasible) continue;
      out.feasible++;
      if (p.shortfalls.length > 0) {
        out.feasibleMissed++;
        out.missed.push(at);
      }
      const gap = (100 * (multiObjective(input, nowMs, p) - ref.objective)) / Math.max(Math.abs(ref.objective), 0.5);
      if (!ref.optimal) {
        out.timeouts++;
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
  const mean = out.gaps.reduce((a, b) => a + b, 0) / Math.max(1, out.gaps.length);
  log(
    `multi     windows ${out.windows}  HiGHS-feasible ${out.feasible}  planner-feasible ${out.feasible - out.feasibleMissed}  ` +
      `gap mean ${mean.toFixed(4)} % max ${(out.gaps.length > 0 ? Math.max(...out.gaps) : NaN).toFixed(4)} % (over ${out.gaps.length} proven optima` +
      `${out.timeouts > 0 ? `; ${out.timeouts} HiGHS time-outs` : ''})  time p50 ${out.p50Ms.toFixed(2)} ms p99 ${out.p99Ms.toFixed(2)} ms`,
  );
  if (process.argv.includes('--verbose'))
    log(`  worst gaps ${out.worst.join(' ')}${out.missed.length > 0 ? `; missed: ${out.missed.join(' ')}` : ''}`);
  return out;
}
