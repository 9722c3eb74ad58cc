/**
 * Energy history for the status views: local days and months, their metered energy with how
 * well it is covered, and, where a stored plan covered the hours, what the plan expected against
 * what was metered. Pure: the hours and plans come in, `nowMs` is an argument.
 */
import { HOUR_MS, localDateString, localDayStartMs, localParts, localTimeToUtcMs } from './zoned-time.js';

/** A local day (`2026-11-23`) or month (`2026-11`), [startMs, endMs). */
export interface HistoryPeriod {
  label: string;
  startMs: number;
  endMs: number;
}

/** What the store sums for one subject and period (the row counts are hours with a stored row). */
export interface PeriodTotals {
  /** kWh of the hours with energy (`gap` hours carry none). */
  kwh: number;
  /** Hours measured or estimated over the whole hour. */
  completeHours: number;
  /** Hours covered only in part: their kWh is a lower bound. */
  partialHours: number;
  /** Hours stored as `gap`. */
  gapHours: number;
}

/**
 * `complete`: every hour of the period so far has its whole energy; `partial`: some hours are
 * missing or covered in part (the figure is a lower bound); `gap`: no energy known at all.
 */
export type HistoryQuality = 'complete' | 'partial' | 'gap';

export interface PeriodEnergy {
  kwh: number;
  quality: HistoryQuality;
  /** Hours of the period up to now (the hour still running not counted). */
  hours: number;
  /** Hours of those with their whole energy. */
  completeHours: number;
}

/** The last `days` local days and `months` local months up to the one containing `nowMs`, newest first. */
export function historyPeriods(
  nowMs: number,
  timezone: string,
  counts: { days: number; months: number },
): { days: HistoryPeriod[]; months: HistoryPeriod[] } {
  const days: HistoryPeriod[] = [];
  for (let i = 0; i < counts.days; i++) {
    const startMs = localDayStartMs(nowMs, timezone, -i);
    days.push({ label: localDateString(startMs, timezone), startMs, endMs: localDayStartMs(startMs, timezone, 1) });
  }
  const now = localParts(nowMs, timezone);
  const months: HistoryPeriod[] = [];
  for (let i = 0; i < counts.months; i++) {
    const first = new Date(Date.UTC(now.year, now.month - 1 - i, 1));
    const y = first.getUTCFullYear();
    const m = first.getUTCMonth() + 1;
    months.push({
      label: `${y}-${String(m).padStart(2, '0')}`,
      startMs: localTimeToUtcMs(y, m, 1, 0, timezone),
      endMs: localTimeToUtcMs(y, m + 1, 1, 0, timezone),
    });
  }
  return { days, months };
}

/** Whole hours of `period` that have ended by `nowMs`. */
export function endedHours(period: HistoryPeriod, nowMs: number): number {
  const end = Math.min(period.endMs, Math.floor(nowMs / HOUR_MS) * HOUR_MS);
  return Math.max(0, Math.round((end - period.startMs) / HOUR_MS));
}

/** The energy of a period from the store's sums, with its quality. */
export function periodEnergy(totals: PeriodTotals, period: HistoryPeriod, nowMs: number): PeriodEnergy {
  const hours = endedHours(period, nowMs);
  const known = totals.completeHours + totals.partialHours;
  const quality: HistoryQuality = known === 0 ? 'gap' : totals.completeHours >= hours && totals.partialHours === 0 ? 'complete' : 'partial';
  return { kwh: totals.kwh, quality, hours, completeHours: totals.completeHours };
}

/** What a period cost at the main meter, from its priced hours (the capacity fee is not in it). */
export interface PeriodMoney {
  /** Priced hours' cost, VAT included. */
  cost: number;
  /** Incentive earned (−Σ delta: positive when the programme paid). */
  incentive: number;
  /** Baseline minus cost over the priced hours (hours without a plan's baseline count as saving nothing). */
  savings: number;
  /** `complete`: every ended hour priced; `partial`: some hours unpriced (the sums cover only the priced ones); `gap`: none priced. */
  quality: HistoryQuality;
  pricedHours: number;
  hours: number;
}

export function periodMoney(
  totals: { hours: number; total: number; delta: number; baselineTotal: number },
  period: HistoryPeriod,
  nowMs: number,
): PeriodMoney {
  const hours = endedHours(period, nowMs);
  const quality: HistoryQuality = totals.hours === 0 ? 'gap' : totals.hours >= hours ? 'complete' : 'partial';
  return { cost: totals.total, incentive: 0 - totals.delta, savings: totals.baselineTotal - totals.total, quality, pricedHours: totals.hours, hours };
}

/** The planned energy of each flexible device per slot, as a stored plan carries it. */
export interface PlannedSlots {
  createdMs: number;
  slots: ReadonlyArray<{ startMs: number; endMs: number; energyKwh: Readonly<Record<string, number>> }>;
}

/**
 * kWh each device was planned to take in each whole hour, by the plan in force when the hour
 * began (the newest plan made at or before its start that covers the whole hour). Hours that no
 * such plan covers are absent: the plan is not known for them.
 */
export function plannedByHour(plans: readonly PlannedSlots[], fromMs: number, toMs: number): Map<number, Record<string, number>> {
  const byAge = [...plans].sort((a, b) => b.createdMs - a.createdMs);
  const out = new Map<number, Record<string, number>>();
  for (let hour = Math.ceil(fromMs / HOUR_MS) * HOUR_MS; hour + HOUR_MS <= toMs; hour += HOUR_MS) {
    for (const plan of byAge) {
      if (plan.createdMs > hour) continue;
      const inHour = plan.slots.filter((s) => s.startMs >= hour && s.endMs <= hour + HOUR_MS);
      const covered = inHour.reduce((sum, s) => sum + (s.endMs - s.startMs), 0);
      if (covered < HOUR_MS) continue;
      const kwh: Record<string, number> = {};
      for (const s of inHour) for (const [id, e] of Object.entries(s.energyKwh)) kwh[id] = (kwh[id] ?? 0) + e;
      out.set(hour, kwh);
      break;
    }
  }
  return out;
}

export interface PlanOutcome {
  plannedKwh: number;
  meteredKwh: number;
  /** Hours compared: a known plan and the whole hour metered. */
  hours: number;
}

/**
 * Planned against metered energy of one device over `period`, on the hours that have both a
 * known plan and a complete metered hour; null when there is none.
 */
export function planOutcome(
  deviceId: string,
  period: HistoryPeriod,
  planned: ReadonlyMap<number, Readonly<Record<string, number>>>,
  metered: ReadonlyArray<{ hourStartMs: number; kwh: number; complete: boolean }>,
): PlanOutcome | null {
  let plannedKwh = 0;
  let meteredKwh = 0;
  let hours = 0;
  for (const m of metered) {
    if (!m.complete || m.hourStartMs < period.startMs || m.hourStartMs >= period.endMs) continue;
    const plan = planned.get(m.hourStartMs);
    if (!plan) continue;
    plannedKwh += plan[deviceId] ?? 0;
    meteredKwh += m.kwh;
    hours++;
  }
  return hours === 0 ? null : { plannedKwh, meteredKwh, hours };
}
