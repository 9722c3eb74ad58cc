import {
  heatingKwOf,
  type ComfortWindowConfig,
  type Config,
  type EvChargerConfig,
  type TankDeviceConfig,
  type VehicleConfig,
} from '../config/schema.js';
import { heatPumpAsTank } from '../core/heat-pump.js';
import { carParams, type IdentifiedBy } from './vehicles.js';
import type {
  BuildPriceSeriesInput,
  ComfortDeadline,
  DeltaCurveInput,
  EvParams,
  HomePlanInput,
  LpcCap,
  OutdoorForecast,
  TankParams,
} from '../core/types.js';
import { localParts } from '../core/zoned-time.js';
import { buildPriceSeries } from '../core/prices.js';
import { priceSlotsWithTariff } from '../core/tariff.js';
import { siteTariff } from '../config/tariff-file.js';
import { nextLocalTimeMs } from '../core/departure.js';
import { evPowerRangeKw } from '../core/phase-switch.js';
import { fusePlanLimitKw, type Supply } from '../core/fuse.js';
import type { CronScheduleConfig } from '../config/time-fields.js';
import { cronSchedule, type CronSchedule } from '../timing/cron.js';
import type { HomeEvent } from '../spark/event-normalise.js';
import type { PriceData } from './price-refresh.js';
import { noOutdoorForecast, zoneParams, type ZoneNow } from './zone-inputs.js';

/** What the tank looks like now, as far as the daemon knows (a heat pump's: the tank it heats). */
export interface TankNow {
  config: TankDeviceConfig;
  measuredC: number | null;
  lastKnown: { tempC: number; atMs: number } | null;
  heatedSinceKwh: number;
  legionellaLastMs: number | null;
  floorOverrideC: number | null;
  /** Draws learned from the tank's energy balance, kWh per local hour (absent: the configured profile). */
  learnedDrawsKwh?: ReadonlyArray<number>;
}

export interface EvNow {
  config: EvChargerConfig;
  plugged: boolean;
  socPct: number | null;
  /** Energy delivered since the car was plugged in, kWh (grid side). */
  sessionKwh: number;
  /** When the car was plugged in (as seen by this run of the daemon), null when not plugged. */
  sessionStartMs: number | null;
  /** The car recognised at the charger (null: the charger's own model is the car), and how. */
  vehicle?: VehicleConfig | null;
  identifiedBy?: IdentifiedBy;
  departureOverrideMs: number | null;
  targetKwhOverride: number | null;
  targetSocOverride: number | null;
}

export interface PlanningSnapshot {
  nowMs: number;
  prices: PriceData;
  events: readonly HomeEvent[];
  tanks: TankNow[];
  evs: EvNow[];
  baseLoadKw: number;
  /** The learned base load per slot start, kW (absent: `baseLoadKw` for every slot). */
  baseLoadForecast?: (slotStartsMs: readonly number[]) => number[];
  /** Energy each device took in the current slot so far (the control loop's meter), kWh. */
  slotDeliveredKwh?: ReadonlyMap<string, number>;
  /** Heated zones (absent: none). */
  zones?: ZoneNow[];
  /** The outdoor temperature forecast for the zones (absent: none known). */
  outdoor?: OutdoorForecast;
}

/** The spot price inputs of a price series from what the price job holds. */
export function spotInputs(prices: PriceData, nordPoolFirst: boolean): BuildPriceSeriesInput['spot'] {
  return {
    ...(prices.actual ? { actual: prices.actual.input } : {}),
    ...(prices.forecast ? { forecast: prices.forecast.input } : {}),
    ...(prices.advice ? { advice: prices.advice.input } : {}),
    ...(prices.nordPool ? { nordPool: prices.nordPool.input, nordPoolFirst } : {}),
  };
}

/** Price-curve events as incentive curves (one curve per event, whatever resources it names). */
export function deltaCurves(events: readonly HomeEvent[]): DeltaCurveInput[] {
  const curves: DeltaCurveInput[] = [];
  for (const e of events) {
    if (e.priceDeltas.length === 0) continue;
    const first = e.priceDeltas[0]!;
    const byStart = new Map(e.priceDeltas.map((p) => [p.startMs, p.price]));
    curves.push({
      units: { currency: first.currency, energyUnit: first.energyUnit === 'MWh' ? 'MWh' : 'kWh' },
      resolutionMinutes: first.durationMs / 60_000,
      points: [...byStart].sort((a, b) => a[0] - b[0]).map(([startMs, price]) => ({ startMs, price })),
    });
  }
  return curves;
}

/** The planned device that owns a resource: its kind and id, or null (a meter, or nothing of ours). */
export type ResourceOwner = (resourceId: string) => { scope: 'tank' | 'ev' | 'zone'; deviceId: string } | null;

/**
 * LPC caps of the events, scoped to the location or to the device that owns the resource, and the
 * reserved caps of `LPCReservation` events (location caps, marked with their event). A reserved
 * point that an LPC event's location cap overlaps is dropped: the request replaces the reservation.
 */
export function lpcCaps(events: readonly HomeEvent[], ownerOf: ResourceOwner): LpcCap[] {
  const asked = events.flatMap((e) =>
    e.lpcCaps.flatMap((c): LpcCap[] => {
      const span = { startMs: c.startMs, endMs: c.startMs + c.durationMs, maxKw: c.maxKw };
      if (c.resourceId === null) return [{ ...span, scope: 'location' }];
      const owner = ownerOf(c.resourceId);
      return owner === null ? [] : [{ ...span, ...owner }];
    }),
  );
  const askedForHome = asked.filter((c) => c.scope === 'location');
  const reserved = events.flatMap((e) =>
    (e.lpcReservations ?? []).flatMap((c): LpcCap[] => {
      const startMs = c.startMs;
      const endMs = c.startMs + c.durationMs;
      if (askedForHome.some((a) => a.startMs < endMs && a.endMs > startMs)) return [];
      return [{ startMs, endMs, maxKw: c.maxKw, scope: 'location', reservationId: e.id }];
    }),
  );
  return [...asked, ...reserved];
}

function tankParams(t: TankNow, slotMinutes: number, slotDeliveredKwh: number, comfort: ComfortDeadline[]): TankParams & { id: string } {
  const m = t.config.model;
  const params: TankParams & { id: string } = {
    id: t.config.id,
    comfort,
    slotDeliveredKwh,
    volumeL: m.volumeL,
    powerKw: heatingKwOf(t.config),
    coldWaterC: m.coldWaterC,
    ambientC: m.ambientC,
    heatLossWPerK: m.lossWPerK,
    minC: t.floorOverrideC ?? m.floorC,
    maxC: m.maxC,
    drawProfileKwh: t.learnedDrawsKwh ?? m.drawProfileKwh,
    currentTempC: t.measuredC,
    lastKnown: t.lastKnown,
    heatedSinceKwh: t.heatedSinceKwh,
    control: 'relayOnly' in m && m.relayOnly ? 'relay' : 'continuous',
    legionella: m.legionella.enabled ? { tempC: m.legionella.tempC, everyDays: m.legionella.intervalDays, lastReachedMs: t.legionellaLastMs } : null,
    antiCycling: {
      minOnSlots: Math.max(1, Math.ceil(m.minOnMinutes / slotMinutes)),
      minOffSlots: Math.max(1, Math.ceil(m.minOffMinutes / slotMinutes)),
      maxStartsPerDay: m.maxStartsPerDay,
    },
  };
  // A heat pump is planned in electric energy: its tank's heat terms over the COP.
  return t.config.kind === 'heatPump' ? heatPumpAsTank({ ...params, maxC: t.config.model.boostC }, t.config.model.cop) : params;
}

/** node-cron schedules of the config, made once each (a plan is made every few minutes). */
const schedules = new Map<string, CronSchedule>();

export function scheduleOf(config: CronScheduleConfig, siteTimezone: string): CronSchedule {
  const spec = { cron: config.cron, timezone: config.timezone ?? siteTimezone };
  const key = `${spec.timezone} ${spec.cron}`;
  let s = schedules.get(key);
  if (!s) schedules.set(key, (s = cronSchedule(spec)));
  return s;
}

const pad2 = (n: number): string => String(n).padStart(2, '0');

/** The occurrences of the tank's comfort windows in (`nowMs`, `toMs`], as the planner's deadlines. */
export function comfortDeadlines(windows: readonly ComfortWindowConfig[], nowMs: number, toMs: number, timezone: string): ComfortDeadline[] {
  return windows.flatMap((w) => {
    const schedule = scheduleOf(w, timezone);
    return schedule.occurrencesMs(nowMs, toMs).map((atMs) => {
      const local = localParts(atMs, schedule.spec.timezone);
      return { atMs, tempC: w.tempC, label: w.label ?? `hot water ≥ ${w.tempC} °C by ${pad2(local.hour)}:${pad2(local.minute)}` };
    });
  });
}

/** The car's next departure (a command's override, else the next of its schedules, else its daily time) and that departure's own targets. */
export function nextDeparture(
  ev: EvNow,
  nowMs: number,
  timezone: string,
): { atMs: number; targetSocPct?: number | undefined; targetEnergyKwh?: number | undefined } {
  const car = carParams(ev.config.model, ev.vehicle ?? null);
  if (ev.departureOverrideMs !== null && ev.departureOverrideMs > nowMs) return { atMs: ev.departureOverrideMs };
  const next = car.departures
    .map((d) => ({ atMs: scheduleOf(d, timezone).nextAfterMs(nowMs), targetSocPct: d.targetSocPct, targetEnergyKwh: d.targetEnergyKwh }))
    .sort((a, b) => a.atMs - b.atMs)[0];
  return next ?? { atMs: nextLocalTimeMs(nowMs, car.departure, timezone) };
}

/** The car's next departure: a command's override, else the next of its schedules, else its daily time. */
export function nextDepartureMs(ev: EvNow, nowMs: number, timezone: string): number {
  return nextDeparture(ev, nowMs, timezone).atMs;
}

function evParams(ev: EvNow, nowMs: number, timezone: string, supply: Supply, slotDeliveredKwh: number): EvParams & { id: string } {
  const m = ev.config.model;
  const car = carParams(m, ev.vehicle ?? null);
  // On an IT supply a 3-phase charger draws √3·U·I, not 3·U·I: planning 3·U·I would plan power it cannot draw.
  // With phase switching: from the 1-phase minimum to the 3-phase maximum.
  const { minKw, maxKw } = evPowerRangeKw(m, supply);
  const departure = nextDeparture(ev, nowMs, timezone);
  const common = {
    id: ev.config.id,
    slotDeliveredKwh,
    departureMs: departure.atMs,
    minPowerKw: minKw,
    maxPowerKw: maxKw,
    efficiency: car.efficiency,
    ...(ev.sessionStartMs !== null ? { session: { startMs: ev.sessionStartMs, deliveredKwh: ev.sessionKwh } } : {}),
  };
  if (ev.socPct !== null) {
    return {
      ...common,
      socPct: ev.socPct,
      targetSocPct: ev.targetSocOverride ?? departure.targetSocPct ?? car.targetSocPct,
      capacityKwh: car.capacityKwh,
    };
  }
  const target = ev.targetKwhOverride ?? departure.targetEnergyKwh ?? car.targetEnergyKwh ?? 0.4 * car.capacityKwh;
  return { ...common, energyNeededKwh: Math.max(0, target - ev.sessionKwh * car.efficiency) };
}

/**
 * How many slots after the current one start within `windowMinutes` of now (`planner.frozenWindowMinutes`:
 * "slots starting within this many minutes are not re-planned"). With hourly slots and 15 minutes
 * that is the next slot only in the current slot's last quarter hour, not always.
 */
export function frozenSlotsAfterCurrent(windowMinutes: number, slotMinutes: number, nowMs: number): number {
  const slotMs = slotMinutes * 60_000;
  const nextStartMs = Math.floor(nowMs / slotMs) * slotMs + slotMs;
  const horizonMs = nowMs + windowMinutes * 60_000;
  return horizonMs < nextStartMs ? 0 : Math.floor((horizonMs - nextStartMs) / slotMs) + 1;
}

/** The location limit the plan keeps: with a main fuse, no more than it carries with the heaters on their lines. */
export function planLimitKw(config: Config): number {
  const fuse = config.site.fuse;
  if (!fuse) return config.site.locationLimitKw;
  const heaters = config.devices.flatMap((d) =>
    d.kind === 'hotWaterTank' ? [d.model.elementKw] : d.kind === 'heatPump' ? [d.model.electricKw] : [],
  );
  return Math.min(config.site.locationLimitKw, fusePlanLimitKw(fuse, heaters));
}

/**
 * The planner's input from the config and what the daemon knows now. `resources` maps resource ids
 * (configured or registered) to device ids, so resource LPC caps reach the device they name.
 */
export function buildPlanInput(config: Config, snap: PlanningSnapshot, resources: ReadonlyMap<string, string>): HomePlanInput {
  const slotMs = config.site.slotMinutes * 60_000;
  const fromMs = Math.floor(snap.nowMs / slotMs) * slotMs;
  const toMs = fromMs + config.planner.horizonHours * 3_600_000;
  const { prices } = snap;
  // With a tariff, the series carries spot + delta only and the tariff prices each slot.
  const tariff = siteTariff(config);
  const fees = tariff
    ? { gridFeePerKwh: 0, taxPerKwh: 0, vatRate: 1 }
    : { gridFeePerKwh: config.site.gridFeePerKwh, taxPerKwh: config.site.taxPerKwh, vatRate: 1 + config.site.vatPct / 100 };
  const series = buildPriceSeries({
    slotMinutes: config.site.slotMinutes,
    fromMs,
    toMs,
    timezone: config.site.timezone,
    currency: config.site.currency,
    spot: spotInputs(prices, config.prices.nordPool.use === 'first'),
    deltas: deltaCurves(snap.events),
    fees,
    ...(config.site.exchangeRates ? { exchangeRates: config.site.exchangeRates as Record<string, number> } : {}),
  });
  const slots = tariff ? priceSlotsWithTariff(series, tariff, config.site.timezone) : series;
  const ownerOf: ResourceOwner = (resourceId) => {
    const d = config.devices.find((x) => x.id === resources.get(resourceId));
    return d?.kind === 'hotWaterTank' || d?.kind === 'heatPump'
      ? { scope: 'tank', deviceId: d.id }
      : d?.kind === 'evCharger'
        ? { scope: 'ev', deviceId: d.id }
        : d?.kind === 'zone'
          ? { scope: 'zone', deviceId: d.id }
          : null;
  };
  const fallback = config.planner.evFallbackWindow;
  const delivered = (id: string): number => snap.slotDeliveredKwh?.get(id) ?? 0;
  return {
    slots,
    timezone: config.site.timezone,
    currency: config.site.currency,
    tanks: snap.tanks.map((t) =>
      tankParams(
        t,
        config.site.slotMinutes,
        delivered(t.config.id),
        comfortDeadlines(t.config.model.comfort, snap.nowMs, toMs, config.site.timezone),
      ),
    ),
    evs: snap.evs
      .filter((e) => e.plugged)
      .map((e) => evParams(e, snap.nowMs, config.site.timezone, config.site.fuse?.supply ?? 'TN', delivered(e.config.id))),
    location: {
      limitKw: planLimitKw(config),
      baseLoadKw: snap.baseLoadForecast ? snap.baseLoadForecast(slots.map((s) => s.startMs)) : snap.baseLoadKw,
      lpc: lpcCaps(snap.events, ownerOf),
    },
    ...(snap.zones && snap.zones.length > 0
      ? {
          zones: snap.zones.map((z) =>
            zoneParams(z, {
              nowMs: snap.nowMs,
              slots,
              outdoor: snap.outdoor ?? noOutdoorForecast,
              slotDeliveredKwh: delivered(z.config.id),
              scheduleOf: (c) => scheduleOf(c, config.site.timezone),
            }),
          ),
        }
      : {}),
    options: {
      frozenSlots: frozenSlotsAfterCurrent(config.planner.frozenWindowMinutes, config.site.slotMinutes, snap.nowMs),
      evFallbackWindow: { startHour: Number(fallback.start.slice(0, 2)), endHour: Number(fallback.end.slice(0, 2)) },
    },
  };
}
