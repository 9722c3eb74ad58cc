/**
 * Planner benchmark: `npm run bench:planner [-- --quick]`.
 *
 * Over 48-hour windows (every 12 h; `--quick`: every 96 h, at most 8 per family) of every
 * hourly price series in data/prices (all areas), with seeded incentive deltas (some
 * negative), it plans five scenario families — tank (continuous), tank (relay on/off), EV,
 * tank + EV under a location limit with an LPC cap, and tank with comfort deadlines (62 °C by
 * 06:30, 68 °C by 19:00) —, the capacity-step family (bench-capacity.ts) and two tanks with two cars
 * under one fuse (`multi`, bench-multi.ts), three heated rooms with a tank and a car under a capacity
 * tariff (`zones`, bench-zones.ts), and compares each plan with the
 * optimum of the same model from HiGHS (LP, or MILP where there are on/off decisions or a
 * legionella "at least once"). It also times 7-day 15-minute joint plans and measures the peak
 * memory of one such plan with a relay tank (see bench-planner-memory.ts). The last line is one
 * JSON object with the headline figures.
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import highsDefault from 'highs';
import { buildPriceSeries } from '../src/core/prices.js';
import { plan } from '../src/core/planner.js';
import { setupPlan } from '../src/core/plan-setup.js';
import type { ComfortDeadline, DeltaCurveInput, EvParams, PlanInput, TankParams } from '../src/core/types.js';
import { localParts, localTimeToUtcMs } from '../src/core/zoned-time.js';
import { areaTimezone, hourlyWindows, loadPriceSeries, type PriceSeries } from './lib/price-data.js';
import { rng } from '../src/core/prng.js';
import { planPeakRssMb } from './bench-planner-memory.js';
import { runCapacityBench } from './bench-capacity.js';
import { runMultiBench } from './bench-multi.js';
import { runZonesBench } from './bench-zones.js';
import { plannerObjective, referenceModel } from './lib/reference-model.js';

export { deviceParts, lpText, n6, plannerObjective, referenceModel, type ModelParts } from './lib/reference-model.js';

export type Family = 'tank' | 'tankRelay' | 'ev' | 'joint' | 'tankComfort';

/** Seeded incentive deltas: per day, a run of 3–10 hours with −0.08..+0.05 EUR/kWh. */
export function seededDeltas(rand: () => number, startMs: number, hours: number): DeltaCurveInput[] {
  const out: DeltaCurveInput[] = [];
  for (let d = 0; d * 24 < hours; d++) {
    if (rand() < 0.25) continue;
    const len = 3 + Math.floor(rand() * 8);
    const at = d * 24 + Math.floor(rand() * 24);
    const points = [];
    for (let h = at; h < Math.min(hours, at + len); h++) {
      points.push({ startMs: startMs + h * 3_600_000, price: -0.08 + rand() * 0.13 });
    }
    out.push({ units: { currency: 'EUR', energyUnit: 'kWh' }, resolutionMinutes: 60, points });
  }
  return out;
}

export const DRAW_L = [0, 0, 0, 0, 0, 0, 0, 1.715, 4.025, 0.105, 0.105, 0.21, 0.315, 0, 0.105, 0.105, 0.105, 0, 0.315, 0.105, 0.735, 3.71, 0, 0];

/** "62 °C by 06:30" every morning and "68 °C by 19:00" every evening of the window, local time. */
export function comfortDeadlines(startMs: number, hours: number, timezone: string): ComfortDeadline[] {
  const day = localParts(startMs, timezone);
  const out: ComfortDeadline[] = [];
  for (let d = 0; d <= Math.ceil(hours / 24); d++) {
    out.push({ atMs: localTimeToUtcMs(day.year, day.month, day.day + d, 6, timezone, 30), tempC: 62, label: 'morning' });
    out.push({ atMs: localTimeToUtcMs(day.year, day.month, day.day + d, 19, timezone, 0), tempC: 68, label: 'evening' });
  }
  return out;
}

export function scenario(
  family: Family,
  series: PriceSeries,
  points: { startMs: number; price: number }[],
  seed: number,
  slotMinutes: 15 | 60 = 60,
): { input: PlanInput; nowMs: number } {
  const rand = rng(seed);
  const startMs = points[0]!.startMs;
  const hours = slotMinutes === 60 ? points.length : points.length / 4;
  const timezone = areaTimezone(series.area);
  const slots = buildPriceSeries({
    slotMinutes,
    fromMs: startMs,
    toMs: startMs + hours * 3_600_000,
    timezone,
    currency: 'EUR',
    spot: { actual: { units: { currency: 'EUR', energyUnit: 'kWh' }, resolutionMinutes: slotMinutes, points } },
    deltas: seededDeltas(rand, startMs, hours),
    fees: { gridFeePerKwh: 0.03, taxPerKwh: 0.01, vatRate: 1.25 },
  });
  const tank: TankParams = {
    volumeL: 200,
    powerKw: 2,
    coldWaterC: 8,
    ambientC: 18,
    heatLossWPerK: 1.6,
    minC: 50,
    maxC: 75,
    drawProfileKwh: rand() < 0.5 ? DRAW_L : undefined,
    currentTempC: 52 + rand() * 20,
    control: family === 'tankRelay' ? 'relay' : 'continuous',
    legionella: { tempC: 65, everyDays: 7, lastReachedMs: startMs - (5.5 + rand() * 2) * 86_400_000 },
    ...(family === 'tankComfort' ? { comfort: comfortDeadlines(startMs, hours, timezone) } : {}),
  };
  const ev: EvParams = {
    energyNeededKwh: 10 + rand() * 30,
    arrivalMs: startMs + Math.floor(rand() * 6) * 3_600_000,
    departureMs: startMs + (14 + Math.floor(rand() * 26)) * 3_600_000,
    minPowerKw: 4.14,
    maxPowerKw: 11,
    efficiency: 0.9,
  };
  const joint = family === 'joint';
  const lpcStart = startMs + (16 + Math.floor(rand() * 20)) * 3_600_000;
  const baseLoadKw = Array.from({ length: slots.length }, () => 0.8 + rand() * 2);
  const input: PlanInput = {
    slots,
    timezone,
    currency: 'EUR',
    tank: family === 'ev' ? null : tank,
    ev: family === 'ev' || joint ? ev : null,
    location: {
      limitKw: joint ? 11 : 17,
      baseLoadKw: joint ? baseLoadKw : 0,
      lpc: joint ? [{ startMs: lpcStart, endMs: lpcStart + (2 + Math.floor(rand() * 3)) * 3_600_000, maxKw: 4, scope: 'location' }] : [],
    },
  };
  if (slotMinutes === 15 && input.ev) input.ev = { ...ev, departureMs: startMs + (36 + Math.floor(rand() * 100)) * 3_600_000, energyNeededKwh: 40 };
  return { input, nowMs: startMs };
}

/** 15-minute prices from hourly ones, each quarter varied by ±10 % (seeded). */
export function quarterHourly(hourly: { startMs: number; price: number }[], seed: number): { startMs: number; price: number }[] {
  const rand = rng(seed);
  return hourly.flatMap((p) => [0, 1, 2, 3].map((i) => ({ startMs: p.startMs + i * 900_000, price: p.price * (0.9 + 0.2 * rand()) })));
}

/** The part of the `highs` API the benchmark uses. */
export interface Highs {
  solve(lp: string, options?: Record<string, unknown>): { Status: string; ObjectiveValue: number };
}
type HighsLoader = () => Promise<Highs>;
/** The HiGHS loader (a CommonJS default export, typed as a namespace under NodeNext). */
export const loadHighs: HighsLoader = (highsDefault as unknown as { default?: HighsLoader }).default ?? (highsDefault as unknown as HighsLoader);

export function solveReference(highs: Highs, lp: string, timeLimitS = 30): { feasible: boolean; optimal: boolean; objective: number } {
  const sol = highs.solve(lp, { mip_rel_gap: 1e-6, time_limit: timeLimitS, output_flag: false });
  if (sol.Status === 'Optimal') return { feasible: true, optimal: true, objective: sol.ObjectiveValue };
  // A time limit with an incumbent still proves feasibility.
  if (sol.Status === 'Time limit reached' && Number.isFinite(sol.ObjectiveValue) && Math.abs(sol.ObjectiveValue) < 1e20) {
    return { feasible: true, optimal: false, objective: sol.ObjectiveValue };
  }
  return { feasible: false, optimal: false, objective: NaN };
}

/** Planning time of one window: the median of three runs (the machine is shared and noisy). */
function timePlan(input: PlanInput, nowMs: number): number {
  const runs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    plan(input, nowMs);
    runs.push(performance.now() - t0);
  }
  return runs.sort((a, b) => a - b)[1]!;
}

function pct(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const v = values.slice().sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.floor((p / 100) * v.length))]!;
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const only = process.argv.find((a) => a.startsWith('--family='))?.slice('--family='.length);
  const highs = await loadHighs();
  const series = loadPriceSeries();
  // Windows start every `stride` hours; the MILP families (relay thermostat, joint) are
  // sampled more sparsely to keep the full run to a few minutes, with a time limit per solve.
  const strideOf: Record<Family, number> = quick
    ? { tank: 96, tankRelay: 96, ev: 96, joint: 96, tankComfort: 96 }
    : { tank: 12, tankRelay: 48, ev: 12, joint: 24, tankComfort: 12 };
  const limitOf: Record<Family, number> = { tank: 30, tankRelay: 5, ev: 30, joint: 10, tankComfort: 30 };
  const perFamilyCap = quick ? 6 : Infinity;
  // New families go last: a family's seeds depend on its place in this list.
  const families: Family[] = ['tank', 'tankRelay', 'ev', 'joint', 'tankComfort'];
  let allGaps: number[] = [];
  let allSavings: number[] = [];
  let feasibleMissed = 0;
  let windows = 0;
  let p99Joint48 = NaN;
  for (const family of families) {
    if (only && family !== only) continue;
    const gaps: number[] = [];
    const times: number[] = [];
    const savings: number[] = [];
    let feasible = 0;
    let found = 0;
    let timeouts = 0;
    let beatIncumbent = 0;
    let worst = '';
    let worstGap = -Infinity;
    let best = '';
    let bestGap = Infinity;
    const vsIncumbent: string[] = [];
    const missed: string[] = [];
    let count = 0;
    let seed = 1;
    outer: for (const sr of series) {
      for (const w of hourlyWindows(sr, 48, strideOf[family])) {
        if (count >= perFamilyCap) break outer;
        count++;
        const { input, nowMs } = scenario(family, sr, w.points, seed++ * 7919 + families.indexOf(family));
        const seedUsed = (seed - 1) * 7919 + families.indexOf(family);
        const p = plan(input, nowMs);
        times.push(timePlan(input, nowMs));
        const s = setupPlan(input, nowMs, undefined);
        const ref = solveReference(highs, referenceModel(s, input), limitOf[family]);
        const ok = p.shortfalls.length === 0;
        if (ref.feasible) {
          feasible++;
          if (ok) found++;
          else {
            feasibleMissed++;
            missed.push(`${sr.id}@${new Date(w.startMs).toISOString()}#${seedUsed}`);
          }
          const gap = (100 * (plannerObjective(s, p) - ref.objective)) / Math.max(Math.abs(ref.objective), 0.5);
          if (ref.optimal) {
            gaps.push(gap);
            if (gap > worstGap) {
              worstGap = gap;
              worst = `${sr.id}@${new Date(w.startMs).toISOString()}#${seedUsed}`;
            }
            if (gap < bestGap) {
              bestGap = gap;
              best = `${sr.id}@${new Date(w.startMs).toISOString()}#${seedUsed} (${gap.toFixed(5)} %)`;
            }
          } else {
            timeouts++;
            if (gap <= 1e-6) beatIncumbent++;
            else vsIncumbent.push(`${sr.id}@${new Date(w.startMs).toISOString()}#${seedUsed} (+${gap.toFixed(4)} %)`);
          }
        }
        if (p.baselineRespectsLimits) savings.push((100 * (p.baselineCost - p.cost)) / Math.max(Math.abs(p.baselineCost), 0.5));
      }
    }
    windows += count;
    const mean = gaps.reduce((a, b) => a + b, 0) / Math.max(1, gaps.length);
    const max = gaps.length > 0 ? Math.max(...gaps) : NaN;
    const sav = savings.reduce((a, b) => a + b, 0) / Math.max(1, savings.length);
    if (family === 'joint') p99Joint48 = pct(times, 99);
    allGaps = allGaps.concat(gaps);
    allSavings = allSavings.concat(savings);
    console.log(
      `${family.padEnd(9)} windows ${count}  HiGHS-feasible ${feasible}  planner-feasible ${found}  ` +
        `gap mean ${mean.toFixed(4)} % max ${max.toFixed(4)} % (over ${gaps.length} proven optima` +
        `${timeouts > 0 ? `; ${timeouts} HiGHS time-outs, planner ≤ incumbent in ${beatIncumbent}` : ''})  ` +
        `savings vs baseline ${savings.length > 0 ? `${sav.toFixed(1)} % (${savings.length} windows where the baseline keeps the limits)` : 'n/a (the baseline breaks the limits)'}  ` +
        `time p50 ${pct(times, 50).toFixed(2)} ms p99 ${pct(times, 99).toFixed(2)} ms`,
    );
    if (process.argv.includes('--verbose')) {
      console.log(
        `  worst gap ${worst}; lowest ${best}${missed.length > 0 ? `; missed: ${missed.join(' ')}` : ''}` +
          `${vsIncumbent.length > 0 ? `; above the incumbent: ${vsIncumbent.join(' ')}` : ''}`,
      );
    }
  }
  // 7-day 15-minute joint plans: timing (and feasibility) only.
  const long: number[] = [];
  let seed = 99;
  const longCap = quick ? 4 : 30;
  outer2: for (const sr of series) {
    for (const w of hourlyWindows(sr, 168, quick ? 168 : 48)) {
      if (long.length >= longCap) break outer2;
      const { input, nowMs } = scenario('joint', sr, quarterHourly(w.points, seed), seed++, 15);
      long.push(timePlan(input, nowMs));
    }
  }
  const p99Long = pct(long, 99);
  console.log(`joint 7d 15-min  windows ${long.length}  time p50 ${pct(long, 50).toFixed(1)} ms p99 ${p99Long.toFixed(1)} ms`);
  const capacity = only && only !== 'capacity' ? null : runCapacityBench(highs, series, quick, (l) => console.log(l));
  if (capacity) {
    allGaps = allGaps.concat(capacity.gaps);
    windows += capacity.windows;
    feasibleMissed += capacity.feasibleMissed;
  }
  const multi = only && only !== 'multi' ? null : runMultiBench(highs, series, quick, (l) => console.log(l));
  if (multi) {
    allGaps = allGaps.concat(multi.gaps);
    windows += multi.windows;
    feasibleMissed += multi.feasibleMissed;
  }
  const zones = only && only !== 'zones' ? null : runZonesBench(highs, series, quick, (l) => console.log(l));
  if (zones) {
    allGaps = allGaps.concat(zones.gaps);
    windows += zones.windows;
    feasibleMissed += zones.feasibleMissed;
  }
  const peakRssMb = planPeakRssMb();
  console.log(`one 7-day 15-min relay tank + EV plan raises peak RSS by ${peakRssMb.toFixed(2)} MB`);
  const meanGap = allGaps.reduce((a, b) => a + b, 0) / Math.max(1, allGaps.length);
  const out = {
    windows,
    meanGapPct: Number(meanGap.toFixed(4)),
    maxGapPct: Number(Math.max(...allGaps).toFixed(4)),
    feasibleMissed,
    p99Ms48hHourly: Number(p99Joint48.toFixed(2)),
    p99Ms7d15min: Number(p99Long.toFixed(1)),
    peakRssMb7d15minRelay: Number(peakRssMb.toFixed(2)),
    meanSavingsPct: Number((allSavings.reduce((a, b) => a + b, 0) / Math.max(1, allSavings.length)).toFixed(2)),
    billSavingsPct: capacity && Number.isFinite(capacity.billSavingsPct) ? Number(capacity.billSavingsPct.toFixed(2)) : null,
    stepUpsAvoided: capacity ? capacity.stepUpsAvoided : null,
    p99MsCapacity48hHourly: capacity ? Number(capacity.p99Ms.toFixed(2)) : null,
    p99MsCapacity7d15min: capacity ? Number(capacity.p99Ms7d15min.toFixed(1)) : null,
    multiWindows: multi ? multi.windows : null,
    multiMeanGapPct: multi ? Number((multi.gaps.reduce((a, b) => a + b, 0) / Math.max(1, multi.gaps.length)).toFixed(4)) : null,
    multiMaxGapPct: multi && multi.gaps.length > 0 ? Number(Math.max(...multi.gaps).toFixed(4)) : null,
    multiFeasibleMissed: multi ? multi.feasibleMissed : null,
    p99MsMulti48hHourly: multi ? Number(multi.p99Ms.toFixed(2)) : null,
    zonesWindows: zones ? zones.windows : null,
    zonesMeanGapPct: zones ? Number((zones.gaps.reduce((a, b) => a + b, 0) / Math.max(1, zones.gaps.length)).toFixed(4)) : null,
    zonesMaxGapPct: zones && zones.gaps.length > 0 ? Number(Math.max(...zones.gaps).toFixed(4)) : null,
    zonesFeasibleMissed: zones ? zones.feasibleMissed : null,
    p99MsZones48hHourly: zones ? Number(zones.p99Ms.toFixed(2)) : null,
  };
  console.log(JSON.stringify(out));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
