/**
 * Which car is at a charger, and that car's planning parameters. A charger names the car by the
 * session's OCPP id tag or go-e RFID card; a charger serving one car (or with a default) needs no
 * name. An unknown tag or card leaves the charger's own `model` as the car. Pure: no I/O, no time.
 */
import type { EvChargerConfig, EvModel, VehicleConfig, VehicleDepartureConfig } from '../config/schema.js';
import type { CronScheduleConfig } from '../config/time-fields.js';
import type { EvState } from '../ports.js';
import type { Plan } from '../core/types.js';
import { vehiclesServedBy } from '../config/vehicle-check.js';

/** How the car at a charger was found. */
export type IdentifiedBy = 'idTag' | 'card' | 'only' | 'default' | 'none';

export interface VehicleAtCharger {
  vehicle: VehicleConfig | null;
  by: IdentifiedBy;
  /** The tag or card the charger gave that no served car claims (logged once as VEHICLE_UNKNOWN). */
  unknownTag?: string;
}

/** The tag a charger gives for its session, as text (`card 3` for a go-e card index). */
export function sessionTag(ev: Pick<EvState, 'idTag' | 'goeCard'> | undefined): string | undefined {
  if (ev?.idTag !== undefined) return ev.idTag;
  if (typeof ev?.goeCard === 'number') return `card ${ev.goeCard}`;
  return undefined;
}

export function identifyVehicle(
  charger: EvChargerConfig,
  vehicles: readonly VehicleConfig[],
  ev: Pick<EvState, 'idTag' | 'goeCard'> | undefined,
): VehicleAtCharger {
  const served = vehiclesServedBy(charger, vehicles);
  if (served.length === 0) return { vehicle: null, by: 'none' };
  if (ev?.idTag !== undefined) {
    const v = served.find((x) => x.identify.idTags.includes(ev.idTag!));
    return v ? { vehicle: v, by: 'idTag' } : { vehicle: null, by: 'none', unknownTag: ev.idTag };
  }
  if (typeof ev?.goeCard === 'number') {
    const card = ev.goeCard;
    const v = served.find((x) => x.identify.goeCards.includes(card));
    return v ? { vehicle: v, by: 'card' } : { vehicle: null, by: 'none', unknownTag: `card ${card}` };
  }
  const fallback = served.find((v) => v.id === charger.defaultVehicle);
  if (fallback) return { vehicle: fallback, by: 'default' };
  if (served.length === 1) return { vehicle: served[0]!, by: 'only' };
  return { vehicle: null, by: 'none' };
}

/** The car's side of planning: a vehicle's, or the charger's own model's. */
export interface CarParams {
  capacityKwh: number;
  targetSocPct: number;
  targetEnergyKwh: number | undefined;
  departure: string;
  /** Departure schedules with their own targets; empty: `departure` every day. */
  departures: (CronScheduleConfig & Partial<Pick<VehicleDepartureConfig, 'targetSocPct' | 'targetEnergyKwh'>>)[];
  efficiency: number;
}

export function carParams(model: EvModel, vehicle: VehicleConfig | null): CarParams {
  const src = vehicle ?? model;
  const schedule = src.departureSchedule ? [src.departureSchedule] : [];
  return {
    capacityKwh: vehicle ? vehicle.capacityKwh : model.capacityKwh,
    targetSocPct: src.targetSocPct,
    targetEnergyKwh: src.targetEnergyKwh,
    departure: src.departure,
    departures: vehicle && vehicle.departures.length > 0 ? vehicle.departures : schedule,
    efficiency: src.efficiency,
  };
}

/** The car planned at a charger: a configured vehicle and how it was recognised. */
export interface PlannedCar {
  id: string;
  name: string;
  identifiedBy: IdentifiedBy;
}

/** The cars at the plugged chargers of a snapshot, by charger id. */
export function plannedCars(
  evs: readonly { config: { id: string }; plugged: boolean; vehicle?: VehicleConfig | null; identifiedBy?: IdentifiedBy }[],
): Map<string, PlannedCar> {
  const out = new Map<string, PlannedCar>();
  for (const e of evs) {
    if (e.plugged && e.vehicle)
      out.set(e.config.id, { id: e.vehicle.id, name: e.vehicle.name ?? e.vehicle.id, identifiedBy: e.identifiedBy ?? 'none' });
  }
  return out;
}

/** The plan with each charger's outcome naming the car planned there. */
export function withPlannedCars(plan: Plan, cars: ReadonlyMap<string, PlannedCar>): Plan {
  if (!plan.evs || cars.size === 0) return plan;
  const evs = Object.fromEntries(
    Object.entries(plan.evs).map(([id, e]) => {
      const car = cars.get(id);
      return [id, car ? { ...e, vehicle: car } : e];
    }),
  );
  return { ...plan, evs };
}
