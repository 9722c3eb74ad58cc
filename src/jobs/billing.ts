/**
 * The realised bill: prices every metered hour of the month once it is closed, with the spot
 * prices and incentive deltas the daemon saw and the tariff in force, stores the cost per hour
 * (location and devices) and keeps the month so far at the main meter for the views.
 */
import type { Config } from '../config/schema.js';
import { siteTariff } from '../config/tariff-file.js';
import { baselineHourKwh, flatTariff, hourCost, monthBill, type HourWithBaseline, type MonthBill } from '../core/bill.js';
import { capacityFee, capacityMeasure, capacityShares, monthKey } from '../core/capacity.js';
import { plannedByHour } from '../core/energy-history.js';
import { buildPriceSeries } from '../core/prices.js';
import type { TariffModel } from '../core/tariff.js';
import { HOUR_MS } from '../core/zoned-time.js';
import { codeOf } from '../errors.js';
import type { Logger } from '../log.js';
import type { HourlyCostInput, HourlyEnergyRow, Store } from '../store/types.js';
import { localMonthStartMs, monthHours } from './bill-planner.js';
import type { HomeEvent } from '../spark/event-normalise.js';
import { meterSubjectOf } from './metering.js';
import { deltaCurves, spotInputs } from './plan-inputs.js';
import type { PriceData } from './price-refresh.js';
import { BASELINE_KEY, flexibleDevices, storedPlans, type StoredPlanCache } from './stored-plans.js';

/** The month so far at the main meter, in the site currency. */
export interface BillSummary extends MonthBill {
  /** Local month, `YYYY-MM`. */
  month: string;
  /** When the local month began (the bill's last reset), ms. */
  monthStartMs: number;
  currency: string;
  /** Per metered device: its energy and what it cost this month (priced hours only). */
  devices: { id: string; kwh: number; total: number }[];
}

export interface Billing {
  /** Prices the closed hours not yet priced (or re-metered) and refreshes the summary. */
  tick(nowMs: number): void;
  /** The month so far; null before the first tick or without a main meter. */
  summary(): BillSummary | null;
  health(): { ok: boolean; lastError: { code: string; message: string; atMs: number } | null };
}

const unchanged = (a: number, b: number): boolean => Math.abs(a - b) < 1e-9;

/**
 * The month so far from the store: the main meter's priced hours and capacity measure, and each
 * device's cost. Null without a main meter (`location` subject).
 */
export function readBill(
  store: Pick<Store, 'readHourly' | 'readHourlyCost'>,
  site: Pick<Config['site'], 'timezone' | 'currency'>,
  tariff: TariffModel,
  subjects: readonly string[],
  nowMs: number,
): BillSummary | null {
  if (!subjects.includes('location')) return null;
  const monthStart = localMonthStartMs(nowMs, site.timezone);
  const closedTo = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
  const costsOf = (subject: string): HourWithBaseline[] => {
    const metered = new Map(store.readHourly(subject, monthStart, closedTo).map((h) => [h.hourStartMs, h]));
    // A cost counts while it prices the energy now stored for its hour.
    return store.readHourlyCost(subject, monthStart, closedTo).filter((c) => {
      const h = metered.get(c.hourStartMs);
      return h !== undefined && h.quality !== 'gap' && unchanged(h.kwh, c.kwh);
    });
  };
  const metered = monthHours(store.readHourly('location', monthStart, closedTo));
  const month = monthKey(nowMs, site.timezone);
  const bill = monthBill(tariff, site.timezone, Number(month.slice(5, 7)), costsOf('location'), metered);
  const devices = subjects
    .filter((s) => s.startsWith('device:'))
    .flatMap((s) => {
      const c = costsOf(s);
      return c.length === 0
        ? []
        : [{ id: s.slice('device:'.length), kwh: c.reduce((a, x) => a + x.kwh, 0), total: c.reduce((a, x) => a + x.total, 0) }];
    });
  return { ...bill, month, monthStartMs: monthStart, currency: site.currency, devices };
}

/** The tariff that prices the bill: the site's, else its flat keys. */
export function billTariff(config: Pick<Config, 'site'>): TariffModel {
  return siteTariff(config) ?? flatTariff(config.site);
}

export function createBilling(deps: {
  config: Pick<Config, 'site' | 'prices' | 'devices'>;
  store: Pick<Store, 'readHourly' | 'readHourlyCost' | 'upsertHourlyCost' | 'setCapacityShares' | 'planIdsBetween' | 'plansById'>;
  /** Metering subjects: `location` (the main meter) and `device:<id>`. */
  subjects: readonly string[];
  prices: () => PriceData;
  /** Events whose span overlaps [fromMs, toMs), ended ones included. */
  events: (fromMs: number, toMs: number) => readonly HomeEvent[];
  /**
   * How many times metering has written closed hours (Metering `hourWrites`). With it, a tick
   * whose hour, metered rows and prices are those of the last good tick does nothing: the month's
   * rows are read again only when something that prices them changed.
   */
  hourWrites?: () => number;
  logger: Logger;
}): Billing {
  const log = deps.logger.child({ component: 'billing' });
  const { site } = deps.config;
  const tariff = billTariff(deps.config);
  let summary: BillSummary | null = null;
  let lastError: { code: string; message: string; atMs: number } | null = null;
  /** The stored plans read so far: each hour that closes needs the plans in force then, most already read. */
  const planCache: StoredPlanCache = new Map();
  /** What the last good tick priced from: the last closed hour, metering's writes, the prices seen. */
  let pricedFrom: { closedTo: number; hourWrites: number; prices: readonly unknown[] } | null = null;
  /** The price parts a refresh replaces when it fetches them (the holder itself stays the same object). */
  const priceParts = (p: PriceData): readonly unknown[] => [p.actual, p.nordPool, p.forecast, p.advice];

  /**
   * Baseline kWh of the main meter's hours in [fromMs, toMs) by the stored plan in force when each
   * began (core/bill `baselineHourKwh`); hours no plan with a baseline covered are absent. What the
   * flexible loads took is their own meter's hour where they have one, else what the plan gave them.
   */
  function baselineByHour(hours: readonly HourlyEnergyRow[], fromMs: number, toMs: number): Map<number, number> {
    const planned = plannedByHour(storedPlans(deps.store, deps.config.devices, fromMs, toMs, planCache).plans, fromMs, toMs);
    const subjectOf = meterSubjectOf(deps.config.devices);
    const flexible = flexibleDevices(deps.config.devices).map((id) => {
      const subject = subjectOf(id);
      const rows = deps.subjects.includes(subject) ? deps.store.readHourly(subject, fromMs, toMs).filter((h) => h.quality !== 'gap') : [];
      return { id, metered: new Map(rows.map((h) => [h.hourStartMs, h.kwh])) };
    });
    const out = new Map<number, number>();
    for (const h of hours) {
      const plan = planned.get(h.hourStartMs);
      const baseline = plan?.[BASELINE_KEY];
      if (!plan || baseline === undefined) continue;
      const taken = flexible.reduce((sum, f) => sum + (f.metered.get(h.hourStartMs) ?? plan[f.id] ?? 0), 0);
      out.set(h.hourStartMs, baselineHourKwh(h.kwh, taken, baseline));
    }
    return out;
  }

  function priceHours(subject: string, hours: readonly HourlyEnergyRow[]): HourlyCostInput[] {
    if (hours.length === 0) return [];
    const fromMs = hours[0]!.hourStartMs;
    const toMs = hours[hours.length - 1]!.hourStartMs + HOUR_MS;
    const prices = deps.prices();
    const slots = buildPriceSeries({
      slotMinutes: site.slotMinutes,
      fromMs,
      toMs,
      timezone: site.timezone,
      currency: site.currency,
      spot: spotInputs(prices, deps.config.prices.nordPool.use === 'first'),
      deltas: deltaCurves(deps.events(fromMs, toMs)),
      fees: { gridFeePerKwh: 0, taxPerKwh: 0, vatRate: 1 },
      ...(site.exchangeRates ? { exchangeRates: site.exchangeRates as Record<string, number> } : {}),
    });
    const baselines = subject === 'location' ? baselineByHour(hours, fromMs, toMs) : new Map<number, number>();
    return hours.flatMap((h) => {
      const c = hourCost(tariff, h.hourStartMs, h.kwh, slots, site.timezone);
      if (!c) return [];
      const baselineKwh = baselines.get(h.hourStartMs) ?? null;
      const baselineTotal = baselineKwh === null ? null : (hourCost(tariff, h.hourStartMs, baselineKwh, slots, site.timezone)?.total ?? null);
      return [{ ...c, subject, currency: site.currency, baselineKwh: baselineTotal === null ? null : baselineKwh, baselineTotal }];
    });
  }

  /** Stores each main-meter hour's share of the month's capacity fee as the month's peaks now stand. */
  function shareCapacity(nowMs: number, monthStart: number, closedTo: number): void {
    const rule = tariff.capacity;
    if (!rule || !deps.subjects.includes('location')) return;
    const metered = monthHours(deps.store.readHourly('location', monthStart, closedTo));
    const fee = capacityFee(rule, capacityMeasure(rule, metered, site.timezone, tariff.holidays), Number(monthKey(nowMs, site.timezone).slice(5, 7)));
    const shares = capacityShares(rule, metered, site.timezone, tariff.holidays, fee);
    deps.store.setCapacityShares(
      'location',
      monthStart,
      closedTo,
      [...shares].map(([hourStartMs, share]) => ({ hourStartMs, share })),
    );
  }

  function tickOnce(nowMs: number): void {
    const monthStart = localMonthStartMs(nowMs, site.timezone);
    const closedTo = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
    for (const subject of deps.subjects) {
      const stored = new Map(deps.store.readHourlyCost(subject, monthStart, closedTo).map((c) => [c.hourStartMs, c.kwh]));
      const todo = deps.store.readHourly(subject, monthStart, closedTo).filter((h) => {
        const kwh = stored.get(h.hourStartMs);
        return h.quality !== 'gap' && (kwh === undefined || !unchanged(kwh, h.kwh));
      });
      deps.store.upsertHourlyCost(priceHours(subject, todo));
    }
    shareCapacity(nowMs, monthStart, closedTo);
    summary = readBill(deps.store, site, tariff, deps.subjects, nowMs);
  }

  return {
    tick(nowMs) {
      const hourWrites = deps.hourWrites?.();
      const inputs =
        hourWrites === undefined ? null : { closedTo: Math.floor(nowMs / HOUR_MS) * HOUR_MS, hourWrites, prices: priceParts(deps.prices()) };
      const last = pricedFrom;
      if (
        inputs &&
        last &&
        inputs.closedTo === last.closedTo &&
        inputs.hourWrites === last.hourWrites &&
        inputs.prices.every((part, i) => part === last.prices[i])
      )
        return;
      try {
        tickOnce(nowMs);
        pricedFrom = inputs;
        if (lastError) log.info({ downSinceCode: lastError.code }, 'billing recovered');
        lastError = null;
      } catch (err) {
        // The bill waits; the hours stay unpriced and the next tick tries again.
        const code = codeOf(err);
        if (lastError?.code !== code) log.error({ code, err }, 'pricing metered hours failed; the bill is not updated');
        lastError = { code, message: err instanceof Error ? err.message : String(err), atMs: nowMs };
      }
    },
    summary: () => summary,
    health: () => ({ ok: lastError === null, lastError }),
  };
}
