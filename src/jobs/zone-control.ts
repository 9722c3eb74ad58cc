/**
 * The control loop's part for heated zones with a relay: each zone as a heater for `decide()` (its
 * floor is the lower edge of the band in effect now), and the frost floor laid over the decision,
 * logged once each time a zone falls below it (`ZONE_FROST_FLOOR`).
 */
import type { ZoneConfig } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { Plan, PlanSlot } from '../core/types.js';
import type { Decision, HeaterNow } from '../core/control.js';
import { zoneBandAt, type ZoneBand } from '../core/zone-bands.js';
import { thermostatSetpointC, withFrostFloor, zoneIntent } from '../core/zone-control.js';
import type { ZonePresetName } from '../config/schema-zone.js';
import { scheduleOf } from './plan-inputs.js';
import { zoneBandStarts } from './zone-inputs.js';

type Seen = Pick<HeaterNow, 'available' | 'temperatureC' | 'powerW' | 'slotEnergyKwh' | 'capKw' | 'sincePhaseReading'>;

/** The band in effect at `nowMs`, from the zone's schedule and preset. */
export function zoneBandNow(cfg: ZoneConfig, preset: ZonePresetName, nowMs: number, timezone: string): ZoneBand {
  const { starts, fallback } = zoneBandStarts(cfg, preset, nowMs, nowMs, (c) => scheduleOf(c, timezone));
  return zoneBandAt(starts, nowMs, fallback);
}

/**
 * A thermostat zone's comfort target now, °C: the setpoint it is left at when wattshift loses
 * control or stops, and holds alone (never below the band's lower edge).
 */
export function zoneComfortSetpointC(cfg: ZoneConfig, preset: ZonePresetName, nowMs: number, timezone: string): number | undefined {
  return cfg.thermostat ? thermostatSetpointC('hold', zoneBandNow(cfg, preset, nowMs, timezone), cfg.frostC, cfg.thermostat) : undefined;
}

export interface ZoneControl {
  /** The band in effect now, from the zone's schedule and preset. */
  bandNow(cfg: ZoneConfig, nowMs: number): ZoneBand;
  /** A relay zone as a heater: its floor the band's lower edge, its target the plan's slot for it. */
  heaterNow(cfg: ZoneConfig, seen: Seen, plan: Plan | null, slot: PlanSlot | undefined, nowMs: number): HeaterNow;
  /**
   * A thermostat zone's setpoint now: the band's top in a pre-heat slot, its lower edge in a slot
   * the plan coasts through, the comfort target otherwise and without a plan for it.
   */
  setpointNow(cfg: ZoneConfig, plan: Plan | null, slot: PlanSlot | undefined, nowMs: number): number | undefined;
  /** The decision with every zone below its frost floor heating. */
  frostFloor(decision: Decision, heaters: readonly { id: string; temperatureC: number | undefined }[]): Decision;
}

export function createZoneControl(deps: {
  zones: readonly ZoneConfig[];
  timezone: string;
  logger: Logger;
  /** The preset chosen for a zone (default: comfort). */
  presetOf?: (id: string) => ZonePresetName;
}): ZoneControl {
  const log = deps.logger.child({ component: 'zones' });
  const frostC = new Map(deps.zones.map((z) => [z.id, z.frostC]));
  /** Zones below their frost floor at the last tick, so the log line comes once per crossing. */
  let belowFrost = new Set<string>();
  const bandNow = (cfg: ZoneConfig, nowMs: number): ZoneBand => zoneBandNow(cfg, deps.presetOf?.(cfg.id) ?? 'comfort', nowMs, deps.timezone);
  return {
    bandNow,
    heaterNow(cfg, seen, plan, slot, nowMs) {
      const planned = slot?.zones?.[cfg.id];
      return {
        kind: 'hotWaterTank',
        id: cfg.id,
        mode: 'auto',
        ...seen,
        floorC: bandNow(cfg, nowMs).minC,
        elementKw: cfg.model.powerKw,
        // A plan that does not plan this zone (made before it was configured) leaves it to its own thermostat.
        planned: plan !== null && planned ? { energyKwh: planned.energyKwh, powerKw: planned.powerKw } : null,
      };
    },
    setpointNow(cfg, plan, slot, nowMs) {
      if (!cfg.thermostat) return undefined;
      const planned = plan === null ? undefined : slot?.zones?.[cfg.id];
      return thermostatSetpointC(zoneIntent(planned), bandNow(cfg, nowMs), cfg.frostC, cfg.thermostat);
    },
    frostFloor(decision, heaters) {
      const checks = heaters.flatMap((h) => {
        const f = frostC.get(h.id);
        return f === undefined ? [] : [{ id: h.id, temperatureC: h.temperatureC, frostC: f }];
      });
      const { decision: held, frost } = withFrostFloor(decision, checks);
      for (const id of frost) {
        if (belowFrost.has(id)) continue;
        const c = checks.find((x) => x.id === id)!;
        log.warn(
          { code: 'ZONE_FROST_FLOOR', device: id, temperatureC: c.temperatureC, frostC: c.frostC },
          'zone below its frost floor: heating whatever the price or cap',
        );
      }
      belowFrost = new Set(frost);
      return held;
    },
  };
}
