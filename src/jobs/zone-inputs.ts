/**
 * A heated zone's planner input from its config and what the daemon knows now: the band of each
 * slot (schedule and preset), the outdoor temperature of each slot, the room model (learnt, or the
 * documented default) and the room temperature.
 */
import type { ZoneConfig } from '../config/schema.js';
import type { ZonePresetName } from '../config/schema-zone.js';
import type { CronScheduleConfig } from '../config/time-fields.js';
import type { CronSchedule } from '../timing/cron.js';
import type { OutdoorForecast, RoomModelParams, ZoneParams } from '../core/types.js';
import { zoneBandsForSlots, type BandStart, type ZoneBand } from '../core/zone-bands.js';
import { outdoorTempsForSlots } from '../core/outdoor.js';
import { defaultRoomModel } from '../core/room-model.js';
import { roomModelOf, type RoomLearnerState } from '../core/room-model-learn.js';

/** What a zone looks like now, as far as the daemon knows. */
export interface ZoneNow {
  config: ZoneConfig;
  /** Room temperature now, °C; null when the thermometer is missing, silent or stale. */
  measuredC: number | null;
  /** The preset chosen by command (`comfort` follows the schedule). */
  preset: ZonePresetName;
  /** The room learner's state (absent or null: nothing learnt yet). */
  learner?: RoomLearnerState | null;
}

/** No forecast: every slot at the documented unknown temperature, and the plan says so. */
export const noOutdoorForecast: OutdoorForecast = { source: 'none', points: [], updatedMs: null };

/** The zone's model before any learning: the documented default from its heater and building, with the config's overrides. */
export function zonePriorModel(config: ZoneConfig): RoomModelParams {
  const m = config.model;
  const model = defaultRoomModel({
    powerKw: m.powerKw,
    cop: m.cop,
    construction: m.construction,
    ...(m.floorAreaM2 !== undefined ? { floorAreaM2: m.floorAreaM2 } : {}),
    ...(m.heatLossKwPerK !== undefined ? { heatLossKwPerK: m.heatLossKwPerK } : {}),
  });
  return m.heatCapacityKwhPerK !== undefined ? { ...model, heatCapacityKwhPerK: m.heatCapacityKwhPerK } : model;
}

/** The model the plan uses: the learnt one once the learner trusts it, else the prior. */
export function zoneModel(zone: ZoneNow): RoomModelParams {
  const prior = zonePriorModel(zone.config);
  return zone.learner ? roomModelOf(zone.learner, prior).model : prior;
}

/** How far back a schedule is looked at for the band in effect when the plan starts: a weekly schedule's last start. */
const lookBackMs = 8 * 24 * 3_600_000;

/** The band starts of the zone's preset in (`fromMs` − 8 days, `toMs`], and the band before the first (or all day). */
export function zoneBandStarts(
  config: ZoneConfig,
  preset: ZonePresetName,
  fromMs: number,
  toMs: number,
  scheduleOf: (c: CronScheduleConfig) => CronSchedule,
): { starts: BandStart[]; fallback: ZoneBand } {
  if (preset !== 'comfort' || config.schedule.length === 0) return { starts: [], fallback: { ...config.presets[preset] } };
  const starts = config.schedule.flatMap((entry) =>
    scheduleOf(entry)
      .occurrencesMs(fromMs - lookBackMs, toMs, 10_000)
      .map((atMs) => ({ atMs, minC: entry.minC, maxC: entry.maxC })),
  );
  return { starts, fallback: { ...config.presets.comfort } };
}

export interface ZoneInputContext {
  nowMs: number;
  slots: ReadonlyArray<{ startMs: number; endMs: number }>;
  outdoor: OutdoorForecast;
  slotDeliveredKwh: number;
  scheduleOf: (c: CronScheduleConfig) => CronSchedule;
}

/** The planner's input for one zone. */
export function zoneParams(zone: ZoneNow, ctx: ZoneInputContext): ZoneParams {
  const c = zone.config;
  const first = ctx.slots[0]?.startMs ?? ctx.nowMs;
  const last = ctx.slots.at(-1)?.endMs ?? ctx.nowMs;
  const { starts, fallback } = zoneBandStarts(c, zone.preset, first, last, ctx.scheduleOf);
  const outdoor = outdoorTempsForSlots(
    ctx.outdoor,
    ctx.slots.map((s) => s.startMs),
    ctx.nowMs,
  );
  return {
    id: c.id,
    powerKw: c.model.powerKw,
    cop: c.model.cop,
    control: c.thermostat ? 'continuous' : 'relay',
    model: zoneModel(zone),
    currentTempC: zone.measuredC,
    outdoorTempC: outdoor.tempsC,
    outdoorSource: outdoor.source,
    band: zoneBandsForSlots(starts, ctx.slots, fallback),
    frostC: c.frostC,
    slotDeliveredKwh: ctx.slotDeliveredKwh,
  };
}
