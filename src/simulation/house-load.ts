/**
 * A seeded year (or any span) of a home's own load, for backtests of the load forecast: a daily
 * shape by kind of day (mornings, evenings, weekends at home), electric heating the planner does
 * not control (kW per kelvin below a balance temperature), outdoor temperatures with a season,
 * a day-to-day weather swing and a daily cycle, noise per hour, short spikes (a kettle, an oven)
 * within the hour, and now and then an unusual day (away, or guests). Pure: the same seed gives
 * the same load.
 */
import { rng } from '../core/prng.js';
import { localDayAndHour } from '../core/load-forecast.js';

const STEP_MS = 10 * 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export interface HouseLoadOptions {
  startMs: number;
  days: number;
  timezone: string;
  seed: number;
  /** Heating the planner does not control, kW per kelvin below `balanceC`. Default 0.12 kW/K below 15 °C. */
  heatingKwPerK?: number;
  balanceC?: number;
  /** Share of days that are unusual (half away, half guests). Default 0.04. */
  unusualShare?: number;
}

export interface HouseLoad {
  /** Ten-minute steps: the load's mean power over each, kW. */
  steps: { startMs: number; kw: number }[];
  /** Whole hours: energy (= mean kW) and the hour's mean outdoor temperature. */
  hours: { hourStartMs: number; kwh: number; outdoorC: number }[];
  /** The unusual days' starts and kinds. */
  unusual: { dayStartMs: number; kind: 'away' | 'guests' }[];
}

/** The usual load by kind of day and local hour, kW (no heating). */
function usualKw(weekday: number, hour: number): number {
  const weekend = weekday === 0 || weekday === 6;
  if (hour < 6) return 0.35;
  if (hour < 9) return weekend ? 0.6 : 1.1;
  if (hour < 16) return weekend ? 0.9 : 0.45;
  if (hour < 21) return 1.5;
  return 0.8;
}

export function houseLoad(o: HouseLoadOptions): HouseLoad {
  const random = rng(o.seed);
  const normal = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const heatingKwPerK = o.heatingKwPerK ?? 0.12;
  const balanceC = o.balanceC ?? 15;
  const unusualShare = o.unusualShare ?? 0.04;
  const steps: HouseLoad['steps'] = [];
  const hours: HouseLoad['hours'] = [];
  const unusual: HouseLoad['unusual'] = [];
  let weather = 0;
  for (let d = 0; d < o.days; d++) {
    const dayStartMs = o.startMs + d * DAY_MS;
    // Day of the year from the start; the coldest around mid-January.
    const dayOfYear = Math.floor((dayStartMs - Date.UTC(new Date(dayStartMs).getUTCFullYear(), 0, 1)) / DAY_MS);
    const seasonC = 6 - 10 * Math.cos((2 * Math.PI * (dayOfYear - 15)) / 365);
    weather = 0.8 * weather + 2.2 * normal();
    const u = random();
    const kind = u < unusualShare / 2 ? 'away' : u < unusualShare ? 'guests' : null;
    if (kind) unusual.push({ dayStartMs, kind });
    for (let h = 0; h < 24; h++) {
      const hourStartMs = dayStartMs + h * HOUR_MS;
      const { weekday, hour } = localDayAndHour(hourStartMs, o.timezone, []);
      const outdoorC = seasonC + weather - 3 * Math.cos((2 * Math.PI * (hour - 3)) / 24);
      let kw = usualKw(weekday, hour) * Math.exp(0.25 * normal() - 0.03);
      if (kind === 'away') kw *= 0.4;
      if (kind === 'guests' && hour >= 16) kw += 1.5;
      kw += heatingKwPerK * Math.max(0, balanceC - outdoorC);
      let sum = 0;
      for (let s = 0; s < 6; s++) {
        // Cooking and the kettle: short spikes in the mornings and evenings.
        const spike = (hour >= 6 && hour < 9) || (hour >= 16 && hour < 20) ? (random() < 0.12 ? 2 : 0) : 0;
        const stepKw = Math.max(0.05, kw * (1 + 0.1 * normal()) + spike);
        steps.push({ startMs: hourStartMs + s * STEP_MS, kw: stepKw });
        sum += stepKw;
      }
      hours.push({ hourStartMs, kwh: sum / 6, outdoorC });
    }
  }
  return { steps, hours, unusual };
}
