/**
 * The house's own load and the tanks' hot-water draws, learned (core/load-forecast.ts,
 * core/draw-forecast.ts) and kept in memory. The load is refitted on first use and then once a
 * day from the store's hourly rows: the location's metered energy less the metered energy of the
 * controlled devices, hour by hour. The draws come from the tanks' closed hours seen by this run
 * (a thermometer's reading at each hour's ends and the element's counter), which are not stored:
 * after a restart a tank keeps its configured profile until it has a week of hours again. The
 * outdoor temperature of each hour is kept the same way, from the weather forecast, so the outdoor
 * term can be learned only once a run has seen most hours of its history.
 */
import { isTankDevice, type Config, type TankDeviceConfig } from '../config/schema.js';
import type { Store } from '../store/types.js';
import type { OutdoorForecast, TankParams } from '../core/types.js';
import { outdoorTempsForSlots } from '../core/outdoor.js';
import { fitLoadModel, forecastLoad, type LoadHour, type LoadModel, type SlotLoadForecast } from '../core/load-forecast.js';
import { configuredDraws, fitDrawProfile, MIN_DRAW_HOURS, type DrawProfile, type TankHour } from '../core/draw-forecast.js';
import { siteTariff } from '../config/tariff-file.js';
import type { ControlSnapshot } from './control-loop.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** History read for a fit: ten weeks, enough for a profile per weekday (eight weeks) with room for gaps. */
const HISTORY_DAYS = 70;
/** How late in an hour a tank's first reading may come and still stand for the hour's start. */
const BOUNDARY_MS = 2 * 60_000;
/** Closed tank hours kept per tank: four weeks. */
const TANK_HOURS_KEPT = 28 * 24;

export interface LoadForecaster {
  /** The current fit (refitted when a day old). */
  model(nowMs: number): LoadModel;
  /** Per slot start: mean and intervals of the house's own load, kW. */
  forSlots(nowMs: number, slotStartsMs: readonly number[], outdoorTempsC?: ReadonlyArray<number | undefined>): SlotLoadForecast[];
  /**
   * The base load the hourly guard reckons with for the rest of the hour: the learned forecast's
   * upper 80 % bound for this hour, or undefined while the forecast is the smoothed number.
   */
  guardBaseLoadKw(nowMs: number, outdoorC?: number): number | undefined;
  /** Each tank's draw profile (learned, configured or default), kWh per local hour. */
  drawProfiles(nowMs: number): ReadonlyMap<string, DrawProfile>;
  /**
   * Feeds a control tick: the tanks' thermometers and counters at each hour's ends, and the outdoor
   * temperature of the hour (the forecast's, at its first tick) for the fit's outdoor term.
   */
  observe(snap: Pick<ControlSnapshot, 'atMs' | 'readings'>, outdoorC?: number): void;
}

/** The forecast's temperature at `atMs`, or undefined when nothing is known (source `none`). */
export function forecastTempC(forecast: OutdoorForecast, atMs: number, nowMs: number): number | undefined {
  return forecast.source === 'none' ? undefined : outdoorTempsForSlots(forecast, [atMs], nowMs).tempsC[0];
}

/** The forecast's temperatures on the slots, or undefined when nothing is known. */
export function forecastTempsC(forecast: OutdoorForecast, slotStartsMs: readonly number[], nowMs: number): number[] | undefined {
  return forecast.source === 'none' ? undefined : outdoorTempsForSlots(forecast, slotStartsMs, nowMs).tempsC;
}

/** A tank model's terms as the balance needs them (no plan state). */
function balanceParams(d: TankDeviceConfig): TankParams {
  const m = d.model;
  return {
    volumeL: m.volumeL,
    powerKw: d.kind === 'hotWaterTank' ? d.model.elementKw : 0,
    coldWaterC: m.coldWaterC,
    ambientC: m.ambientC,
    heatLossWPerK: m.lossWPerK,
    minC: m.floorC,
    maxC: m.maxC,
    control: 'continuous',
    ...(m.drawProfileKwh ? { drawProfileKwh: m.drawProfileKwh } : {}),
  };
}

export function createLoadForecaster(deps: {
  config: Config;
  store: Pick<Store, 'readHourly'>;
  /** The stored subject of each controlled device that has hourly rows (`device:<id>`). */
  deviceSubjects: readonly string[];
  /** Whether the location has a main meter (without one there is no history of the house's own load). */
  hasMainMeter: boolean;
  /** The tracker's smoothed base load, kW: the forecast while the history is short. */
  smoothedKw: () => number;
}): LoadForecaster {
  const { config } = deps;
  const timezone = config.site.timezone;
  const holidays = siteTariff(config)?.holidays ?? [];
  let fit: { atMs: number; model: LoadModel } | null = null;
  /** Each hour's outdoor temperature as this run saw it (not stored: lost at a restart). */
  const outdoorByHour = new Map<number, number>();

  function ownLoadHours(nowMs: number): LoadHour[] {
    const toMs = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
    const fromMs = toMs - HISTORY_DAYS * DAY_MS;
    const devices = deps.deviceSubjects.map((s) => new Map(deps.store.readHourly(s, fromMs, toMs).map((r) => [r.hourStartMs, r])));
    const complete = (q: string): boolean => q === 'measured' || q === 'estimated';
    return deps.store.readHourly('location', fromMs, toMs).flatMap((loc): LoadHour[] => {
      if (!complete(loc.quality)) return [];
      let devicesKwh = 0;
      for (const rows of devices) {
        const r = rows.get(loc.hourStartMs);
        // A metered device without its hour leaves the house's share unknown: the hour is skipped.
        if (!r || !complete(r.quality)) return [];
        devicesKwh += r.kwh;
      }
      return [{ hourStartMs: loc.hourStartMs, kwh: Math.max(0, loc.kwh - devicesKwh), outdoorC: outdoorByHour.get(loc.hourStartMs) }];
    });
  }

  function model(nowMs: number): LoadModel {
    if (fit && nowMs - fit.atMs < DAY_MS && nowMs >= fit.atMs) {
      // The smoothed number moves between fits; a smoothed model follows it.
      if (fit.model.source === 'smoothed') fit.model = { ...fit.model, smoothedKw: deps.smoothedKw() };
      return fit.model;
    }
    const rows = deps.hasMainMeter ? ownLoadHours(nowMs) : [];
    const m = fitLoadModel(rows, { timezone, nowMs, smoothedKw: deps.smoothedKw(), holidays });
    fit = {
      atMs: nowMs,
      model: deps.hasMainMeter ? m : { ...m, note: 'no main meter: the smoothed base load' },
    };
    return fit.model;
  }

  // Tanks with a thermometer: each one's reading at the last hour boundary seen, and its closed hours.
  const tanks = config.devices.filter(isTankDevice).filter((d) => d.kind === 'hotWaterTank');
  const atBoundary = new Map<string, { hourStartMs: number; tempC: number; energyKwh: number }>();
  const closed = new Map<string, TankHour[]>(tanks.map((d) => [d.id, []]));
  const draws = new Map<string, { atMs: number; profile: DrawProfile }>();

  return {
    model,
    forSlots: (nowMs, slotStartsMs, outdoorTempsC) => forecastLoad(model(nowMs), slotStartsMs, outdoorTempsC),
    guardBaseLoadKw(nowMs, outdoorC) {
      const m = model(nowMs);
      if (m.source !== 'learned') return undefined;
      return forecastLoad(m, [Math.floor(nowMs / HOUR_MS) * HOUR_MS], [outdoorC])[0]!.upper80Kw;
    },
    drawProfiles(nowMs) {
      const out = new Map<string, DrawProfile>();
      for (const d of tanks) {
        const known = draws.get(d.id);
        if (known && nowMs - known.atMs < DAY_MS && nowMs >= known.atMs) {
          out.set(d.id, known.profile);
          continue;
        }
        const hours = closed.get(d.id) ?? [];
        const params = balanceParams(d);
        const profile = hours.length >= MIN_DRAW_HOURS ? fitDrawProfile(params, hours, { timezone, nowMs }) : configuredDraws(params);
        draws.set(d.id, { atMs: nowMs, profile });
        out.set(d.id, profile);
      }
      return out;
    },
    observe(snap, outdoorC) {
      const hourStartMs = Math.floor(snap.atMs / HOUR_MS) * HOUR_MS;
      if (outdoorC !== undefined && Number.isFinite(outdoorC) && !outdoorByHour.has(hourStartMs)) {
        outdoorByHour.set(hourStartMs, outdoorC);
        for (const h of outdoorByHour.keys()) if (h < hourStartMs - HISTORY_DAYS * DAY_MS) outdoorByHour.delete(h);
      }
      for (const d of tanks) {
        const r = snap.readings.get(d.id);
        const prev = atBoundary.get(d.id);
        if (prev?.hourStartMs === hourStartMs) continue;
        // A boundary reading is taken within the hour's first minutes, or the hour is not whole.
        if (r?.temperatureC === undefined || r.energyKwh === undefined || snap.atMs - hourStartMs > BOUNDARY_MS) {
          atBoundary.delete(d.id);
          continue;
        }
        // Only the next hour's boundary reading closes an hour.
        if (prev && prev.hourStartMs === hourStartMs - HOUR_MS && r.energyKwh >= prev.energyKwh) {
          const list = closed.get(d.id)!;
          list.push({ hourStartMs: prev.hourStartMs, heatInKwh: r.energyKwh - prev.energyKwh, startC: prev.tempC, endC: r.temperatureC });
          if (list.length > TANK_HOURS_KEPT) list.splice(0, list.length - TANK_HOURS_KEPT);
        }
        atBoundary.set(d.id, { hourStartMs, tempC: r.temperatureC, energyKwh: r.energyKwh });
      }
    },
  };
}
