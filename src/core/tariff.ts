/**
 * Pricing one slot from a tariff: energy (spot + markup, or a fixed price), the grid energy fee of
 * the slot's local time-of-use period, energy tax, the household subsidy and VAT, plus the
 * programme's incentive delta. Pure; time is an argument. Local time comes from the zoned-time
 * helpers, so DST days (23 or 25 hours) take each hour's own wall-clock hour.
 */
import { localParts } from './zoned-time.js';
import type { PriceSlot, SlotCostComponents } from './types.js';

/** Local hours [from, to); from > to wraps past midnight. */
export interface HourWindow {
  from: number;
  to: number;
}

/** When a tariff rule applies. Public holidays count as weekend days. */
export interface TariffWhen {
  months?: ReadonlyArray<number> | undefined;
  days: 'all' | 'weekdays' | 'weekends';
  hours?: HourWindow | undefined;
}

export interface CapacityModel extends TariffWhen {
  measure: 'dailyPeaks' | 'hourlyPeaks';
  count: number;
  nightWeight?: { weight: number; hours: HourWindow } | undefined;
  steps?: ReadonlyArray<{ upToKw: number | null; perMonth: number }> | undefined;
  perKwPerMonth?: number | undefined;
  /** Per-kW price by season (each month in one season), instead of steps. */
  seasons?: ReadonlyArray<{ months: ReadonlyArray<number>; perKwPerMonth: number }> | undefined;
}

/** The tariff as the core sees it (the config schema's `Tariff` fits it). Money excludes VAT. */
export interface TariffModel {
  energy: { basis: 'spot'; markupPerKwh: number } | { basis: 'fixed'; pricePerKwh: number };
  subsidy?: { thresholdPerKwh: number; share: number } | undefined;
  gridEnergy: { perKwh: number; periods: ReadonlyArray<TariffWhen & { name: string; perKwh: number }> };
  capacity?: CapacityModel | undefined;
  taxPerKwh: number;
  vatPct: number;
  holidays: ReadonlyArray<string>;
}

/** Wall-clock facts of an instant that tariff rules look at. */
export interface TariffLocalTime {
  /** YYYY-MM-DD, local. */
  date: string;
  month: number;
  hour: number;
  /** Saturday, Sunday or a listed holiday. */
  weekend: boolean;
}

export function tariffLocalTime(ms: number, timezone: string, holidays: ReadonlyArray<string>): TariffLocalTime {
  const p = localParts(ms, timezone);
  const mm = String(p.month).padStart(2, '0');
  const dd = String(p.day).padStart(2, '0');
  const date = `${p.year}-${mm}-${dd}`;
  const weekday = new Date(Date.UTC(p.year, p.month - 1, p.day)).getUTCDay();
  const holiday = holidays.includes(date) || holidays.includes(`${mm}-${dd}`);
  return { date, month: p.month, hour: p.hour, weekend: weekday === 0 || weekday === 6 || holiday };
}

export function inHourWindow(w: HourWindow, hour: number): boolean {
  return w.from < w.to ? hour >= w.from && hour < w.to : hour >= w.from || hour < w.to;
}

export function ruleApplies(when: TariffWhen, t: TariffLocalTime): boolean {
  if (when.months && !when.months.includes(t.month)) return false;
  if (when.days === 'weekdays' && t.weekend) return false;
  if (when.days === 'weekends' && !t.weekend) return false;
  return !when.hours || inHourWindow(when.hours, t.hour);
}

/** The cost components of one kWh consumed in the slot starting at `startMs`. */
export function slotCost(tariff: TariffModel, startMs: number, spot: number, delta: number, timezone: string): SlotCostComponents {
  const t = tariffLocalTime(startMs, timezone, tariff.holidays);
  const fixed = tariff.energy.basis === 'fixed';
  const energy = tariff.energy.basis === 'fixed' ? tariff.energy.pricePerKwh : spot + tariff.energy.markupPerKwh;
  const sub = tariff.subsidy;
  const subsidy = !fixed && sub ? sub.share * Math.max(0, spot - sub.thresholdPerKwh) : 0;
  const period = tariff.gridEnergy.periods.find((p) => ruleApplies(p, t));
  const gridFee = period ? period.perKwh : tariff.gridEnergy.perKwh;
  const tax = tariff.taxPerKwh;
  const vat = (energy + gridFee + tax - subsidy) * (tariff.vatPct / 100);
  return { energy, gridFee, gridPeriod: period?.name ?? 'default', tax, subsidy, vat, delta, total: energy + gridFee + tax - subsidy + vat + delta };
}

/**
 * Re-prices slots built with zero fees and no VAT (so `price` = spot + delta) by the tariff:
 * `price` becomes what the household pays per kWh and `fees` the grid fee + tax.
 */
export function priceSlotsWithTariff(slots: ReadonlyArray<PriceSlot>, tariff: TariffModel, timezone: string): PriceSlot[] {
  return slots.map((s) => {
    const c = slotCost(tariff, s.startMs, s.spot, s.delta, timezone);
    return { ...s, fees: c.gridFee + c.tax, price: c.total, components: c };
  });
}
