/**
 * The energy history the status page and `wattshift status` show: the last local days and months
 * of every metered device and the whole home, from the hourly rows in SQLite, and for the days the
 * stored plans cover, what the plan expected against what was metered. Every read is bounded: one
 * summing query per device and table, at most KEEP_PLANS plans and two weeks of one device's hours.
 */
import type { Config } from '../config/schema.js';
import {
  historyPeriods,
  periodEnergy,
  periodMoney,
  planOutcome,
  plannedByHour,
  type HistoryPeriod,
  type PeriodEnergy,
  type PeriodMoney,
  type PlanOutcome,
} from '../core/energy-history.js';
import { meterSubjectOf } from '../jobs/metering.js';
import { storedPlans } from '../jobs/stored-plans.js';
import type { Store } from '../store/types.js';

/** Local days and months shown. */
export const HISTORY_DAYS = 14;
export const HISTORY_MONTHS = 12;

export interface HistoryRow extends HistoryPeriod {
  /** By device id (the main meter's is the whole home). */
  energy: Record<string, PeriodEnergy>;
  /** Planned against metered, by flexible device id, where a stored plan covered metered hours. */
  plan: Record<string, PlanOutcome>;
  /** What the whole home's priced hours cost, earned and saved; absent without a main meter. */
  money?: PeriodMoney;
}

export interface EnergyHistory {
  nowMs: number;
  timezone: string;
  /** Currency of the money figures. */
  currency: string;
  devices: { id: string; name: string; wholeHome: boolean }[];
  days: HistoryRow[];
  months: HistoryRow[];
  /** Stored plans that could not be read (their hours count as not planned). */
  unreadablePlans: number;
}

type HistoryStore = Pick<Store, 'energyTotals' | 'costTotals' | 'planIdsBetween' | 'plansById' | 'readHourly'>;

/** Reads the history at `nowMs` (throws the store's STORE_FAILED when a read fails). */
export function readEnergyHistory(store: HistoryStore, config: Config, nowMs: number): EnergyHistory {
  const tz = config.site.timezone;
  const { days, months } = historyPeriods(nowMs, tz, { days: HISTORY_DAYS, months: HISTORY_MONTHS });
  const subjectOf = meterSubjectOf(config.devices);
  const dayRows: HistoryRow[] = days.map((p) => ({ ...p, energy: {}, plan: {} }));
  const monthRows: HistoryRow[] = months.map((p) => ({ ...p, energy: {}, plan: {} }));
  for (const d of config.devices) {
    const subject = subjectOf(d.id);
    store.energyTotals(subject, days).forEach((t, i) => (dayRows[i]!.energy[d.id] = periodEnergy(t, days[i]!, nowMs)));
    store.energyTotals(subject, months).forEach((t, i) => (monthRows[i]!.energy[d.id] = periodEnergy(t, months[i]!, nowMs)));
  }
  if (config.devices.some((d) => subjectOf(d.id) === 'location')) {
    store.costTotals('location', days).forEach((t, i) => (dayRows[i]!.money = periodMoney(t, days[i]!, nowMs)));
    store.costTotals('location', months).forEach((t, i) => (monthRows[i]!.money = periodMoney(t, months[i]!, nowMs)));
  }
  const fromMs = days[days.length - 1]?.startMs ?? nowMs;
  const { plans, unreadable } = storedPlans(store, config.devices, fromMs, nowMs);
  if (plans.length > 0) {
    const planFrom = Math.max(fromMs, Math.min(...plans.map((p) => p.createdMs)));
    const planned = plannedByHour(plans, planFrom, nowMs);
    for (const d of config.devices.filter((x) => x.kind !== 'meter' && x.kind !== 'solar')) {
      const metered = store
        .readHourly(subjectOf(d.id), planFrom, nowMs)
        .map((r) => ({ hourStartMs: r.hourStartMs, kwh: r.kwh, complete: r.quality === 'measured' || r.quality === 'estimated' }));
      for (const row of dayRows) {
        const outcome = planOutcome(d.id, row, planned, metered);
        if (outcome) row.plan[d.id] = outcome;
      }
    }
  }
  return {
    nowMs,
    timezone: tz,
    currency: config.site.currency,
    devices: config.devices.map((d) => ({ id: d.id, name: d.name ?? d.id, wholeHome: subjectOf(d.id) === 'location' })),
    days: dayRows,
    months: monthRows,
    unreadablePlans: unreadable,
  };
}

/** Whether a period holds anything known: some device's metered energy or a priced hour. */
function hasData(row: HistoryRow): boolean {
  return Object.values(row.energy).some((e) => e.quality !== 'gap') || (row.money !== undefined && row.money.quality !== 'gap');
}

/**
 * The periods worth showing, newest first: from the current one back to the oldest that holds
 * data, so that a fresh install shows no run of empty periods; none when nothing is known yet.
 * The JSON keeps every period.
 */
export function periodsWithData(rows: readonly HistoryRow[]): HistoryRow[] {
  let oldest = -1;
  rows.forEach((r, i) => {
    if (hasData(r)) oldest = i;
  });
  return rows.slice(0, oldest + 1);
}

/**
 * The daemon's history, read again at most every `everyMs` (hours are written when they close,
 * so a page refreshed each minute needs no fresh read each time).
 */
export function cachedEnergyHistory(read: (nowMs: number) => EnergyHistory, everyMs = 5 * 60_000): (nowMs: number) => EnergyHistory {
  let last: { atMs: number; value: EnergyHistory } | null = null;
  return (nowMs) => {
    if (!last || nowMs - last.atMs >= everyMs || nowMs < last.atMs) last = { atMs: nowMs, value: read(nowMs) };
    return last.value;
  };
}
