/**
 * Backtest of the house-load forecast: `npx tsx scripts/backtest-load.ts [--days 364] [--seed 1] [--guard off]`.
 *
 * A seeded year of a home's own load (src/simulation/house-load.ts) with a 200 L tank (2 kW) and a
 * car that charges 10 kWh on weekday nights, on the Nordic price extracts in data/prices/ (their
 * days repeated round the year, in NOK) and Elvia's tariff (tariffs/elvia.yaml: energy periods and
 * the capacity step, the mean of the month's three highest daily peaks). Each local day at
 * midnight the home is planned for 24 hours with its capacity step (`planWithCapacity`) with the
 * base load taken (a) from the load itself (a perfect forecast), (b) from the learned forecast
 * fitted on the hours so far (with the day's outdoor temperatures as a perfect weather forecast),
 * (c) as today's smoothed number (the tracker's moving mean at planning time). The day is then
 * played in ten-minute steps: the devices take their planned energy evenly over each hour, and
 * where the plan holds an hour to its allowance the hourly guard throttles them (the tank served
 * first and never below its floor, the car shed first), reckoning with the base load now, or with (b) the forecast's upper
 * 80 % bound where that is higher. Reported per variant: step misses, the days whose plan expected
 * a capacity step that the month's metered hours had passed by the day's end, and the months with
 * such a day; the year's bill (energy and the
 * capacity fee, with VAT), and the energy the guard throttled. Prints a table and JSON. With
 * `--guard off` the devices take their planned energy whatever the hour holds: the misses are then
 * the forecast's own.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { planWithCapacity, type CapacityContext } from '../src/core/capacity-plan.js';
import { capacityFee, capacityMeasure, monthKey, stepIndex, type HourEnergy } from '../src/core/capacity.js';
import { buildPriceSeries } from '../src/core/prices.js';
import { priceSlotsWithTariff } from '../src/core/tariff.js';
import { fitLoadModel, forecastLoad, localDayAndHour } from '../src/core/load-forecast.js';
import { KWH_PER_L_K, defaultDrawProfileKwh } from '../src/core/tank.js';
import { localParts, localTimeToUtcMs } from '../src/core/zoned-time.js';
import type { HomePlanInput, Plan, PriceSlot, TankParams } from '../src/core/types.js';
import { parseTariff, tariffDir } from '../src/config/tariff-file.js';
import { houseLoad } from '../src/simulation/house-load.js';
import { loadPriceSeries, NOK_PER_EUR } from './lib/price-data.js';

const H = 3_600_000;
const DAY = 24 * H;
const STEP_H = 1 / 6;
const TZ = 'Europe/Oslo';
/** History a fit reads, as the daemon's job does (src/jobs/load-forecast.ts). */
const HISTORY_DAYS = 70;
const VAT = 1.25;

const args = parseArgs({
  options: { days: { type: 'string', default: '364' }, seed: { type: 'string', default: '1' }, guard: { type: 'string', default: 'on' } },
}).values;
const guardOn = args.guard !== 'off';
const days = Number(args.days);
const seed = Number(args.seed);

const tariffText = readFileSync(join(tariffDir(), 'elvia.yaml'), 'utf8');
const { tariff, problems } = parseTariff(tariffText, 'elvia.yaml');
if (!tariff?.capacity) throw new Error(`elvia.yaml: ${problems.map((p) => p.message).join('; ')}`);
const rule = tariff.capacity;

/** The extracts' whole UTC days, 24 prices each, in NOK/kWh excluding VAT; day d uses profile d mod n. */
const dayProfiles: number[][] = loadPriceSeries().flatMap((s) => {
  const out: number[][] = [];
  for (let i = 0; i + 24 <= s.points.length; i += 24) out.push(s.points.slice(i, i + 24).map((p) => p.price * NOK_PER_EUR));
  return out;
});

// Monday 6 January 2025, local midnight.
const startMs = localTimeToUtcMs(2025, 1, 6, 0, TZ);
const load = houseLoad({ startMs, days: days + 1, timezone: TZ, seed });
const hourIndex = (ms: number): number => Math.round((ms - startMs) / H);

const tankBase: TankParams & { id: string } = {
  id: 'tank',
  volumeL: 200,
  powerKw: 2,
  coldWaterC: 8,
  ambientC: 18,
  heatLossWPerK: 1.6,
  minC: 50,
  maxC: 75,
  control: 'continuous',
};
const C = tankBase.volumeL * KWH_PER_L_K;

/** The slots of the local day from `dayStartMs`, priced by the tariff (NOK incl. VAT). */
function daySlots(dayStartMs: number, dayNo: number): PriceSlot[] {
  const profile = dayProfiles[dayNo % dayProfiles.length]!;
  const nextMs = localTimeToUtcMs(...ymd(dayStartMs + 36 * H), 0, TZ);
  const series = buildPriceSeries({
    slotMinutes: 60,
    fromMs: dayStartMs,
    toMs: nextMs,
    timezone: TZ,
    currency: 'NOK',
    spot: {
      actual: {
        units: { currency: 'NOK', energyUnit: 'kWh' },
        resolutionMinutes: 60,
        points: Array.from({ length: (nextMs - dayStartMs) / H }, (_, i) => ({ startMs: dayStartMs + i * H, price: profile[i % 24]! })),
      },
    },
    deltas: [],
    fees: { gridFeePerKwh: 0, taxPerKwh: 0, vatRate: 1 },
  });
  return priceSlotsWithTariff(series, tariff!, TZ);
}

function ymd(ms: number): [number, number, number] {
  const p = localParts(ms, TZ);
  return [p.year, p.month, p.day];
}

type Variant = 'perfect' | 'learned' | 'smoothed';
const variants: Variant[] = ['perfect', 'learned', 'smoothed'];

interface Outcome {
  hours: HourEnergy[];
  costNok: number;
  throttledKwh: number;
  plannedStep: Map<string, number>;
  /** Days whose plan's step the month had passed by the day's end, by month. */
  missedDays: Map<string, number>;
  tankBelowFloorHours: number;
  planMs: number;
  learnedDays: number;
}

function run(variant: Variant): Outcome {
  const out: Outcome = {
    hours: [],
    costNok: 0,
    throttledKwh: 0,
    plannedStep: new Map(),
    missedDays: new Map(),
    tankBelowFloorHours: 0,
    planMs: 0,
    learnedDays: 0,
  };
  let tankC = 60;
  let smoothedKw = 0.5;
  let dayStartMs = startMs;
  // The hours metered so far this month: out.hours from this index on (days start at local midnight).
  let monthNow = '';
  let monthFirstHour = 0;
  for (let dayNo = 0; dayStartMs < startMs + days * DAY - 12 * H; dayNo++) {
    const slots = daySlots(dayStartMs, dayNo);
    const endMs = slots[slots.length - 1]!.endMs;
    const first = hourIndex(dayStartMs);
    const actual = slots.map((_, i) => load.hours[first + i]!);
    let base: number[];
    let guardUpper: number[] | null = null;
    if (variant === 'perfect') base = actual.map((h) => h.kwh);
    else if (variant === 'smoothed') base = slots.map(() => smoothedKw);
    else {
      const history = load.hours.slice(Math.max(0, first - HISTORY_DAYS * 24), first);
      const model = fitLoadModel(history, { timezone: TZ, nowMs: dayStartMs, smoothedKw, holidays: tariff!.holidays });
      if (model.source === 'learned') out.learnedDays++;
      const f = forecastLoad(
        model,
        slots.map((s) => s.startMs),
        actual.map((h) => h.outdoorC),
      );
      base = f.map((x) => x.meanKw);
      guardUpper = model.source === 'learned' ? f.map((x) => x.upper80Kw) : null;
    }
    const { weekday } = localDayAndHour(dayStartMs, TZ, tariff!.holidays);
    const carToday = weekday >= 1 && weekday <= 5;
    const input: HomePlanInput = {
      slots,
      timezone: TZ,
      currency: 'NOK',
      tanks: [{ ...tankBase, currentTempC: tankC }],
      evs: carToday ? [{ id: 'car', energyNeededKwh: 10, departureMs: dayStartMs + 7 * H, minPowerKw: 1.4, maxPowerKw: 7.4, efficiency: 1 }] : [],
      location: { limitKw: 17, baseLoadKw: base },
    };
    const month = monthKey(dayStartMs, TZ);
    if (month !== monthNow) [monthNow, monthFirstHour] = [month, out.hours.length];
    const context: CapacityContext = {
      rule,
      timezone: TZ,
      holidays: tariff!.holidays,
      meteredHours: out.hours.slice(monthFirstHour),
      vatRate: VAT,
    };
    const t0 = performance.now();
    const plan: Plan = planWithCapacity(input, dayStartMs, context);
    out.planMs += performance.now() - t0;
    const step = plan.capacity?.step ?? 0;
    out.plannedStep.set(month, Math.max(out.plannedStep.get(month) ?? 0, step));

    plan.slots.forEach((slot, i) => {
      const hourStartMs = slot.startMs;
      const hi = hourIndex(hourStartMs);
      const allowance = slot.hourAllowanceKwh ?? Infinity;
      let tankWant = slot.tanks?.tank?.energyKwh ?? 0;
      let carWant = slot.evs?.car?.energyKwh ?? 0;
      let used = 0;
      let tankGot = 0;
      for (let s = 0; s < 6; s++) {
        const kw = load.steps[hi * 6 + s]!.kw;
        const remainingH = (6 - s) * STEP_H;
        const guardBase = Math.max(kw, guardUpper?.[i] ?? 0);
        const roomKw = guardOn && Number.isFinite(allowance) ? Math.max(0, (allowance - used) / remainingH - guardBase) : Infinity;
        // The guard never throttles a tank below its floor (control's comfort promise).
        const tankStep = tankC < tankBase.minC ? tankWant / (6 - s) : Math.min(tankWant / (6 - s), roomKw * STEP_H);
        const carStep = Math.min(carWant / (6 - s), Math.max(0, roomKw * STEP_H - tankStep));
        out.throttledKwh += tankWant / (6 - s) - tankStep + (carWant / (6 - s) - carStep);
        tankWant -= tankWant / (6 - s);
        carWant -= carWant / (6 - s);
        tankGot += tankStep;
        used += kw * STEP_H + tankStep + carStep;
        smoothedKw = 0.3 * smoothedKw + 0.7 * kw;
      }
      out.hours.push({ startMs: hourStartMs, kWh: used });
      out.costNok += used * slot.price;
      // The tank over the hour, by the planner's own one-node model.
      const { hour } = localDayAndHour(hourStartMs, TZ, []);
      const e = C * (tankC - tankBase.coldWaterC);
      const ua = tankBase.heatLossWPerK / 1000;
      const next = (1 - ua / C) * e - (defaultDrawProfileKwh[hour] ?? 0) - ua * (tankBase.coldWaterC - tankBase.ambientC) + tankGot;
      tankC = Math.min(tankBase.maxC, tankBase.coldWaterC + Math.max(0, next) / C);
      if (tankC < tankBase.minC - 0.5) out.tankBelowFloorHours++;
    });
    const metSoFar = stepIndex(rule, capacityMeasure(rule, out.hours.slice(monthFirstHour), TZ, tariff!.holidays));
    if (metSoFar > step) out.missedDays.set(month, (out.missedDays.get(month) ?? 0) + 1);
    dayStartMs = endMs;
  }
  return out;
}

const started = performance.now();
const results = variants.map((variant) => {
  const o = run(variant);
  const months = [...new Set(o.hours.map((h) => monthKey(h.startMs, TZ)))];
  let feeNok = 0;
  const misses: string[] = [];
  const steps: Record<string, { planned: number; realised: number }> = {};
  for (const m of months) {
    const hours = o.hours.filter((h) => monthKey(h.startMs, TZ) === m);
    const measure = capacityMeasure(rule, hours, TZ, tariff.holidays);
    const realised = stepIndex(rule, measure);
    const planned = o.plannedStep.get(m) ?? 0;
    steps[m] = { planned, realised };
    if ((o.missedDays.get(m) ?? 0) > 0) misses.push(m);
    feeNok += capacityFee(rule, measure, Number(m.slice(5))) * VAT;
  }
  return {
    variant,
    stepMisses: misses.length,
    missedDays: [...o.missedDays.values()].reduce((a, b) => a + b, 0),
    missedMonths: misses,
    energyNok: Math.round(o.costNok),
    capacityFeeNok: Math.round(feeNok),
    billNok: Math.round(o.costNok + feeNok),
    throttledKwh: Math.round(o.throttledKwh * 10) / 10,
    tankBelowFloorHours: o.tankBelowFloorHours,
    learnedDays: o.learnedDays,
    steps,
    planSeconds: Math.round(o.planMs / 100) / 10,
  };
});

const pad = (s: string | number, n: number): string => String(s).padStart(n);
console.log(
  `House-load forecast backtest: ${days} days from 2025-01-06 (${TZ}), seed ${seed}, guard ${guardOn ? 'on' : 'off'}, tariff elvia, ${dayProfiles.length} price days`,
);
console.log(
  `${'forecast'.padEnd(10)}${pad('months missed', 15)}${pad('days', 6)}${pad('bill NOK', 10)}${pad('energy', 9)}${pad('capacity', 10)}${pad('throttled kWh', 15)}${pad('tank<floor h', 14)}`,
);
for (const r of results)
  console.log(
    `${r.variant.padEnd(10)}${pad(r.stepMisses, 15)}${pad(r.missedDays, 6)}${pad(r.billNok, 10)}${pad(r.energyNok, 9)}${pad(r.capacityFeeNok, 10)}${pad(r.throttledKwh, 15)}${pad(r.tankBelowFloorHours, 14)}`,
  );
console.log(`(${Math.round((performance.now() - started) / 100) / 10} s)`);
console.log(JSON.stringify({ days, seed, guard: guardOn, tariff: 'elvia', results }, null, 2));
