/**
 * The monthly capacity fee: the measure a grid company bills (the mean of the N highest daily
 * maxima of hourly energy on N different days, or of the N highest hours) and its fee (a step or
 * a price per kW). Pure; hours are UTC hour starts with their energy, months are local.
 */
import { HOUR_MS } from './zoned-time.js';
import { inHourWindow, ruleApplies, tariffLocalTime, type CapacityModel } from './tariff.js';

export interface HourEnergy {
  /** UTC start of the hour. */
  startMs: number;
  kWh: number;
}

/** Sums energies of slots (any length dividing an hour) into UTC hours, in time order. */
export function hourlyEnergies(items: ReadonlyArray<HourEnergy>): HourEnergy[] {
  const byHour = new Map<number, number>();
  for (const it of items) {
    const h = Math.floor(it.startMs / HOUR_MS) * HOUR_MS;
    byHour.set(h, (byHour.get(h) ?? 0) + it.kWh);
  }
  return [...byHour].sort((a, b) => a[0] - b[0]).map(([startMs, kWh]) => ({ startMs, kWh }));
}

/** Local month key `YYYY-MM` of an instant. */
export function monthKey(ms: number, timezone: string): string {
  return tariffLocalTime(ms, timezone, []).date.slice(0, 7);
}

/** The factor an hour counts with: 0 where the rule does not look, the night weight, else 1. */
export function capacityWeight(rule: CapacityModel, startMs: number, timezone: string, holidays: ReadonlyArray<string>): number {
  const t = tariffLocalTime(startMs, timezone, holidays);
  if (!ruleApplies(rule, t)) return 0;
  return rule.nightWeight && inHourWindow(rule.nightWeight.hours, t.hour) ? rule.nightWeight.weight : 1;
}

/**
 * The billed measure (kW) of one month's hours: weighted hourly energies, then the mean of the
 * `count` highest (one per local day for `dailyPeaks`). Fewer candidates than `count`: the mean
 * of those there are; none: 0.
 */
export function capacityMeasure(rule: CapacityModel, hours: ReadonlyArray<HourEnergy>, timezone: string, holidays: ReadonlyArray<string>): number {
  return meanOfTop(
    measuredPeaks(rule, hours, timezone, holidays).map((p) => p.kWh),
    rule.count,
  );
}

/** The candidates the measure is taken from: each weighted hour, or each local day's highest one (`kWh` weighted). */
function measuredPeaks(rule: CapacityModel, hours: ReadonlyArray<HourEnergy>, timezone: string, holidays: ReadonlyArray<string>): HourEnergy[] {
  const peaks: HourEnergy[] = [];
  const dayPeak = new Map<string, HourEnergy>();
  for (const h of hours) {
    const w = capacityWeight(rule, h.startMs, timezone, holidays);
    if (w === 0) continue;
    const peak = { startMs: h.startMs, kWh: h.kWh * w };
    if (rule.measure !== 'dailyPeaks') {
      peaks.push(peak);
      continue;
    }
    const day = tariffLocalTime(h.startMs, timezone, holidays).date;
    if ((dayPeak.get(day)?.kWh ?? -1) < peak.kWh) dayPeak.set(day, peak);
  }
  return rule.measure === 'dailyPeaks' ? [...dayPeak.values()] : peaks;
}

/**
 * Each hour's share of a month's capacity `fee`: the fee falls on the hours that set the measure
 * (the `count` highest peaks), in proportion to their weighted energy; every other hour has none.
 */
export function capacityShares(
  rule: CapacityModel,
  hours: ReadonlyArray<HourEnergy>,
  timezone: string,
  holidays: ReadonlyArray<string>,
  fee: number,
): Map<number, number> {
  const top = measuredPeaks(rule, hours, timezone, holidays)
    .sort((a, b) => b.kWh - a.kWh)
    .slice(0, rule.count);
  const sum = top.reduce((s, p) => s + p.kWh, 0);
  return new Map(top.map((p) => [p.startMs, sum > 0 ? (fee * p.kWh) / sum : fee / top.length]));
}

export function meanOfTop(values: number[], count: number): number {
  const top = values.sort((a, b) => b - a).slice(0, count);
  return top.length === 0 ? 0 : top.reduce((a, b) => a + b, 0) / top.length;
}

/** Index of the step a measure falls in (a measure on a boundary belongs to the lower step). */
export function stepIndex(rule: CapacityModel, measureKw: number): number {
  const steps = rule.steps ?? [];
  const i = steps.findIndex((s) => s.upToKw === null || measureKw <= s.upToKw + 1e-9);
  return i < 0 ? steps.length - 1 : i;
}

/** The fee of local month `month` (1–12) for a measure, excluding VAT. */
export function capacityFee(rule: CapacityModel, measureKw: number, month: number): number {
  if (rule.perKwPerMonth !== undefined) return rule.perKwPerMonth * measureKw;
  if (rule.seasons) return (rule.seasons.find((s) => s.months.includes(month))?.perKwPerMonth ?? 0) * measureKw;
  const step = rule.steps?.[stepIndex(rule, measureKw)];
  return step ? step.perMonth : 0;
}

/** What the capacity planner needs beside the plan's input: the rule and the month's metered hours so far. */
export interface CapacityContext {
  rule: CapacityModel;
  timezone: string;
  holidays: ReadonlyArray<string>;
  /** The location's metered energy this month per UTC hour, the current hour so far included. */
  meteredHours: ReadonlyArray<HourEnergy>;
  /** VAT multiplier on the fee (1.25 = 25 %). */
  vatRate: number;
}
