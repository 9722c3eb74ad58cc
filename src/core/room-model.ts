/**
 * A room's first-order thermal model, C·dT/dt = heat + gains − UA·(T − T_out), its documented
 * defaults, and its exact solution over a step with constant inputs. Pure.
 */
import { WattshiftError } from '../errors.js';
import type { RoomModelParams } from './types.js';

/** Construction classes of EN ISO 13790:2008, 12.3.1.2 (Table 12). */
export type ConstructionClass = 'veryLight' | 'light' | 'medium' | 'heavy' | 'veryHeavy';

/**
 * Internal heat capacity per floor area, kJ/(m²·K), by construction class: EN ISO 13790:2008,
 * 12.3.1.2, Table 12 (C_m = 80 000 … 370 000 J/K per m² of floor).
 */
export const HEAT_CAPACITY_KJ_PER_M2K: Readonly<Record<ConstructionClass, number>> = {
  veryLight: 80,
  light: 110,
  medium: 165,
  heavy: 260,
  veryHeavy: 370,
};

/** The heater is taken as sized to hold this indoor temperature … */
export const DESIGN_INDOOR_C = 21;
/** … at this design outdoor temperature (a Nordic dimensioning temperature), °C. */
export const DESIGN_OUTDOOR_C = -20;
/**
 * Floor area a heater serves when none is given: panel heaters in Nordic homes are commonly sized
 * at about 60 W per m² of floor (a rule of thumb, not a standard).
 */
export const DEFAULT_WATTS_PER_M2 = 60;
/**
 * A default model's one-hour prediction error, K. Conservative on purpose: a room's real time
 * constant may be half or twice the default's, which over an hour off and on moves the prediction
 * by several tenths of a kelvin; 1 K says the plan's temperatures are rough until learned.
 */
export const DEFAULT_ERROR_K = 1;

export interface DefaultRoomInput {
  /** The heater's electric power, kW. */
  powerKw: number;
  /** The room's floor area, m² (default: the area the heater serves at `DEFAULT_WATTS_PER_M2`). */
  floorAreaM2?: number;
  /** Default `medium`. */
  construction?: ConstructionClass;
  /** Heat loss, kW/K, when known (default: the heater holds 21 °C at −20 °C, UA = P / 41 K). */
  heatLossKwPerK?: number;
  /** Heat per electric kWh (a heat pump's COP), default 1: the heater's heat output sizes UA. */
  cop?: number;
}

/** The documented default model of a room heated by a heater of `powerKw`. */
export function defaultRoomModel(r: DefaultRoomInput): RoomModelParams {
  const cop = r.cop ?? 1;
  if (!(r.powerKw > 0) || !Number.isFinite(r.powerKw) || !(cop > 0))
    throw new WattshiftError('PLAN_INPUT_INVALID', `a room's heater needs a positive power (got ${r.powerKw} kW, COP ${cop})`);
  const area = r.floorAreaM2 ?? (r.powerKw * 1000) / DEFAULT_WATTS_PER_M2;
  if (!(area > 0) || !Number.isFinite(area)) throw new WattshiftError('PLAN_INPUT_INVALID', `a room's floor area must be positive (got ${area} m²)`);
  const ua = r.heatLossKwPerK ?? (r.powerKw * cop) / (DESIGN_INDOOR_C - DESIGN_OUTDOOR_C);
  if (!(ua > 0) || !Number.isFinite(ua)) throw new WattshiftError('PLAN_INPUT_INVALID', `a room's heat loss must be positive (got ${ua} kW/K)`);
  return {
    heatCapacityKwhPerK: (HEAT_CAPACITY_KJ_PER_M2K[r.construction ?? 'medium'] * area) / 3600,
    heatLossKwPerK: ua,
    errorK: DEFAULT_ERROR_K,
    source: 'default',
  };
}

export interface RoomStep {
  /** Room temperature at the start of the step, °C. */
  startC: number;
  outdoorC: number;
  /** Heat the heater puts into the room (electric power × COP), kW, constant over the step. */
  heatKw: number;
  /** Free heat (people, appliances, sun), kW. */
  gainsKw: number;
  hours: number;
}

/** The room's temperature a step later, the exact solution of the model with constant inputs. */
export function roomTempAfter(m: RoomModelParams, s: RoomStep): number {
  const steady = s.outdoorC + (s.heatKw + s.gainsKw) / m.heatLossKwPerK;
  return steady + (s.startC - steady) * Math.exp((-m.heatLossKwPerK * s.hours) / m.heatCapacityKwhPerK);
}

/** Retention over a step: the share of the room's excess over its steady temperature left after `hours`. */
export const roomRetention = (m: RoomModelParams, hours: number): number => Math.exp((-m.heatLossKwPerK * hours) / m.heatCapacityKwhPerK);

/** The room's temperature at the end of each slot, heat and outdoor temperature constant within one. */
export function simulateRoom(
  m: RoomModelParams,
  run: { startC: number; hours: number; outdoorC: ReadonlyArray<number>; heatKw: ReadonlyArray<number>; gainsKw?: number | ReadonlyArray<number> },
): number[] {
  const gainsAt = (t: number): number => (typeof run.gainsKw === 'number' ? run.gainsKw : (run.gainsKw?.[t] ?? 0));
  const out: number[] = [];
  let temp = run.startC;
  for (let t = 0; t < run.heatKw.length; t++) {
    temp = roomTempAfter(m, {
      startC: temp,
      outdoorC: run.outdoorC[t] as number,
      heatKw: run.heatKw[t] as number,
      gainsKw: gainsAt(t),
      hours: run.hours,
    });
    out.push(temp);
  }
  return out;
}
