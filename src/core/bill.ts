/**
 * The realised bill: what each metered hour cost under the tariff in force, and the month so far
 * with its capacity step. Pure; prices and energies are arguments. Money excludes VAT except
 * `vat` and the totals.
 */
import { capacityFee, capacityMeasure, stepIndex, type HourEnergy } from './capacity.js';
import type { CapacityModel } from './tariff.js';
import { HOUR_MS } from './zoned-time.js';
import { slotCost, type TariffModel } from './tariff.js';
import type { PriceSlot } from './types.js';

/** Money by component: excluding VAT, except `vat` itself and `total`. */
export interface CostComponents {
  /** Spot + markup, or the fixed price. */
  energy: number;
  gridFee: number;
  tax: number;
  /** Refunded by the household subsidy (positive = money back). */
  subsidy: number;
  vat: number;
  /** Incentive deltas of the programme's events (negative = earned). */
  delta: number;
  total: number;
}

/** What one metered hour cost (money for the hour's energy, not per kWh). */
export interface HourCost extends CostComponents {
  hourStartMs: number;
  kwh: number;
  /** Mean spot price of the hour's slots, per kWh excluding VAT. */
  spotPerKwh: number;
  /** Where the spot price came from (`actual` or `forecast`...). */
  source: Exclude<PriceSlot['source'], 'fallback'>;
  gridPeriod: string;
}

/** The flat site keys as a tariff: spot without markup, one grid fee, tax and VAT. */
export function flatTariff(site: { gridFeePerKwh: number; taxPerKwh: number; vatPct: number }): TariffModel {
  return {
    energy: { basis: 'spot', markupPerKwh: 0 },
    gridEnergy: { perKwh: site.gridFeePerKwh, periods: [] },
    taxPerKwh: site.taxPerKwh,
    vatPct: site.vatPct,
    holidays: [],
  };
}

/**
 * The cost of `kwh` metered in the UTC hour starting at `hourStartMs`, priced slot by slot (the
 * energy taken as spread evenly over the hour's slots: the meter gives only the hour's total).
 * Null when the slots do not cover the hour with a real price (a fallback price is a guess, not
 * what was paid): the hour stays unpriced rather than priced wrongly.
 */
export function hourCost(
  tariff: TariffModel,
  hourStartMs: number,
  kwh: number,
  slots: ReadonlyArray<Pick<PriceSlot, 'startMs' | 'endMs' | 'spot' | 'delta' | 'source'>>,
  timezone: string,
): HourCost | null {
  const end = hourStartMs + HOUR_MS;
  const within = slots.filter((s) => s.startMs >= hourStartMs && s.endMs <= end);
  const covered = within.reduce((ms, s) => ms + (s.endMs - s.startMs), 0);
  if (covered !== HOUR_MS) return null;
  const sum = { spot: 0, energy: 0, gridFee: 0, tax: 0, subsidy: 0, vat: 0, delta: 0, total: 0 };
  for (const s of within) {
    const share = (s.endMs - s.startMs) / HOUR_MS;
    const c = slotCost(tariff, s.startMs, s.spot, s.delta, timezone);
    sum.spot += s.spot * share;
    for (const k of ['energy', 'gridFee', 'tax', 'subsidy', 'vat', 'delta', 'total'] as const) sum[k] += c[k] * share * kwh;
  }
  const worst = within.find((s) => s.source === 'fallback')?.source ?? within.find((s) => s.source !== 'actual')?.source ?? 'actual';
  if (worst === 'fallback') return null;
  const gridPeriod = slotCost(tariff, hourStartMs, 0, 0, timezone).gridPeriod;
  const { spot, ...money } = sum;
  return { hourStartMs, kwh, spotPerKwh: spot, source: worst, gridPeriod, ...money };
}

/**
 * The main meter's energy in an hour without wattshift: the house's own load (what was metered,
 * less what the flexible loads took) plus what the naive baseline of the plan in force (tank on its
 * thermostat, car at full power from arrival) would have had them take.
 */
export function baselineHourKwh(meteredKwh: number, flexibleTakenKwh: number, baselineFlexibleKwh: number): number {
  return Math.max(0, meteredKwh - flexibleTakenKwh) + baselineFlexibleKwh;
}

export interface CapacityStanding {
  /** The billed measure so far (mean of the month's top peaks), kW. */
  measureKw: number;
  /** Upper bound of the step it falls in (null: the top step, or a per-kW price). */
  stepUpToKw: number | null;
  /** Room left before the next step, kW (null when there is no next step). */
  marginKw: number | null;
  /** The month's capacity fee at this measure, excluding VAT. */
  fee: number;
  /** VAT on that fee. */
  vat: number;
}

/** A priced hour with what the same hour would have cost without wattshift (see core/baseline). */
export interface HourWithBaseline extends HourCost {
  /** Baseline energy of the hour, kWh; null where no stored plan covered the hour. */
  baselineKwh: number | null;
  /** The baseline energy priced like the hour (VAT included); null with `baselineKwh`. */
  baselineTotal: number | null;
}

/** The month as it would have been without wattshift, over the same priced hours. */
export interface BaselineBill {
  /** Energy cost of the baseline hours plus the capacity fee its peaks reach, VAT included. */
  total: number;
  /** The baseline's capacity fee with VAT (0 without a capacity rule). */
  capacityFee: number;
  /** Priced hours whose baseline comes from the plan in force. */
  hoursFromPlan: number;
  /** Priced hours no stored plan covered: counted at their realised cost (no savings claimed). */
  hoursWithoutPlan: number;
}

/** The month's bill so far at the main meter; `vat` and `total` include the capacity fee's. */
export interface MonthBill extends CostComponents {
  kwh: number;
  /** Null without a capacity rule in the tariff. */
  capacity: CapacityStanding | null;
  hoursPriced: number;
  /** Metered hours without a price (prices missing when they were metered): not in the sums. */
  hoursUnpriced: number;
  baseline: BaselineBill;
  /** `baseline.total − total`: what wattshift saved this month so far (negative: it cost more). */
  savings: number;
}

/**
 * Local month `month` (1–12) so far from the location's priced hours and its metered hours (the
 * capacity measure counts every metered hour, priced or not: the grid company meters them all).
 */
export function monthBill(
  tariff: TariffModel,
  timezone: string,
  month: number,
  costs: ReadonlyArray<HourWithBaseline>,
  metered: ReadonlyArray<HourEnergy>,
): MonthBill {
  const sum = { kwh: 0, energy: 0, gridFee: 0, tax: 0, subsidy: 0, vat: 0, delta: 0, total: 0 };
  for (const c of costs) for (const k of Object.keys(sum) as (keyof typeof sum)[]) sum[k] += c[k];
  const priced = new Set(costs.map((c) => c.hourStartMs));
  const rule = tariff.capacity;
  let capacity: CapacityStanding | null = null;
  if (rule) {
    capacity = standing(rule, tariff, timezone, month, metered);
    sum.vat += capacity.vat;
    sum.total += capacity.fee + capacity.vat;
  }
  const baseline = baselineBill(tariff, timezone, month, costs, metered);
  return {
    ...sum,
    capacity,
    hoursPriced: costs.length,
    hoursUnpriced: metered.filter((h) => !priced.has(h.startMs)).length,
    baseline,
    savings: baseline.total - sum.total,
  };
}

function standing(rule: CapacityModel, tariff: TariffModel, timezone: string, month: number, metered: ReadonlyArray<HourEnergy>): CapacityStanding {
  const measureKw = capacityMeasure(rule, metered, timezone, tariff.holidays);
  const upTo = rule.steps ? (rule.steps[stepIndex(rule, measureKw)]?.upToKw ?? null) : null;
  const fee = capacityFee(rule, measureKw, month);
  return { measureKw, stepUpToKw: upTo, marginKw: upTo === null ? null : upTo - measureKw, fee, vat: fee * (tariff.vatPct / 100) };
}

/** The baseline month: its hours' cost, and the capacity fee its peaks (baseline energy where known) reach. */
function baselineBill(
  tariff: TariffModel,
  timezone: string,
  month: number,
  costs: ReadonlyArray<HourWithBaseline>,
  metered: ReadonlyArray<HourEnergy>,
): BaselineBill {
  const known = new Map(costs.flatMap((c) => (c.baselineKwh === null ? [] : [[c.hourStartMs, c.baselineKwh] as const])));
  const hoursFromPlan = known.size;
  let total = costs.reduce((s, c) => s + (c.baselineTotal ?? c.total), 0);
  let capacityFee = 0;
  if (tariff.capacity) {
    const c = standing(
      tariff.capacity,
      tariff,
      timezone,
      month,
      metered.map((h) => ({ startMs: h.startMs, kWh: known.get(h.startMs) ?? h.kWh })),
    );
    capacityFee = c.fee + c.vat;
    total += capacityFee;
  }
  return { total, capacityFee, hoursFromPlan, hoursWithoutPlan: costs.length - hoursFromPlan };
}
