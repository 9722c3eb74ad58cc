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
  const values: number[] = [];
  if (rule.measure === 'dailyPeaks') {
    const dayMax = new Map<string, number>();
    for (const h of hours) {
      const w = capacityWeight(rule, h.startMs, timezone, holidays);
      if (w === 0) continue;
      const day = tariffLocalTime(h.startMs, timezone, holidays).date;
      dayMax.set(day, Math.max(dayMax.get(day) ?? 0, h.kWh * w));
    }
    values.push(...dayMax.values());
  } else {
    for (const h of hours) {
      const w = capacityWeight(rule, h.startMs, timezone, holidays);
      if (w > 0) values.push(h.kWh * w);
    }
  }
  return meanOfTop(values, rule.count);
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
