/**
 * A heated zone's control, pure parts. A relay zone is controlled as a heater: allowed in planned
 * slots, blocked otherwise only while the room is at or above its band's lower edge; the frost
 * floor outranks everything, a cap included. A thermostat zone gets a setpoint instead.
 */
import type { Decision, Setpoint } from './control.js';
import type { ZoneBand } from './zone-bands.js';

/** A zone below its frost floor now: its relay is allowed whatever the decision said. */
export interface FrostCheck {
  id: string;
  temperatureC: number | undefined;
  frostC: number;
}

/**
 * The decision with every zone below its frost floor allowed to heat (a cap's block lifted too),
 * and the ids of those zones, for the log.
 */
export function withFrostFloor(decision: Decision, zones: readonly FrostCheck[]): { decision: Decision; frost: string[] } {
  const below = new Map(zones.filter((z) => z.temperatureC !== undefined && z.temperatureC < z.frostC).map((z) => [z.id, z]));
  if (below.size === 0) return { decision, frost: [] };
  const frost: string[] = [];
  const setpoints = decision.setpoints.map((s): Setpoint => {
    const z = below.get(s.id);
    if (!z || s.kind !== 'heater' || s.allow) return s;
    frost.push(s.id);
    return { kind: 'heater', id: s.id, allow: true, reason: `below frost floor ${z.frostC} °C: heating whatever the price or cap` };
  });
  return { decision: { ...decision, setpoints }, frost };
}

/** A thermostat's setpoint range and resolution, °C. */
export interface ThermostatLimits {
  minC: number;
  maxC: number;
  stepC: number;
}

/** What the plan does with the zone in the slot now: heat ahead of need, coast on stored heat, or hold the band. */
export type ZoneIntent = 'preheat' | 'coast' | 'hold';

/** The comfort target of a band, °C: its middle, where a thermostat left alone keeps the room. */
export const comfortTargetC = (band: ZoneBand): number => (band.minC + band.maxC) / 2;

/**
 * The setpoint for a thermostat: the band's top when pre-heating, its lower edge when coasting, the
 * comfort target otherwise (and with no plan); never below the frost floor, rounded to the
 * thermostat's step within its limits (rounded up, so a coast setpoint never falls below the band).
 */
export function thermostatSetpointC(intent: ZoneIntent, band: ZoneBand, frostC: number, t: ThermostatLimits): number {
  const wanted = intent === 'preheat' ? band.maxC : intent === 'coast' ? band.minC : comfortTargetC(band);
  const stepped = Math.ceil(Math.max(wanted, frostC) / t.stepC - 1e-9) * t.stepC;
  return Math.min(t.maxC, Math.max(t.minC, Number(stepped.toFixed(3))));
}

/**
 * The plan's intent for a thermostat zone in the slot: pre-heating when it plans the room to end
 * the slot above the middle of the band with the heater on, coasting when it plans no heat, else
 * holding. Null plan: hold (the comfort target).
 */
export function zoneIntent(planned: { on: boolean; energyKwh: number; endTempC: number; minC: number; maxC: number } | undefined): ZoneIntent {
  if (!planned) return 'hold';
  if (!planned.on || planned.energyKwh <= 1e-6) return 'coast';
  return planned.endTempC > comfortTargetC(planned) + 1e-6 ? 'preheat' : 'hold';
}
