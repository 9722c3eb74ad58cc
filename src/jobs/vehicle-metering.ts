/**
 * Each vehicle's energy: a counter of its own that grows only by what the charger it is plugged
 * into meters while it is identified there, fed to metering every tick (so hours away from any
 * charger are measured as zero). The counter goes on from the stored metering state after a
 * restart. A charger's counter that falls (a reset, a swapped meter) adds nothing.
 */
import type { Metering } from './metering.js';

/** The metering subject of a vehicle's energy (hourly rows are stored under it). */
export const vehicleSubject = (vehicleId: string): string => `vehicle:${vehicleId}`;

export interface ChargerSample {
  chargerId: string;
  /** The car identified at the charger now, or null. */
  vehicleId: string | null;
  /** The charger's energy register, kWh, when read. */
  energyKwh: number | undefined;
}

export interface VehicleMetering {
  feed(atMs: number, chargers: readonly ChargerSample[]): void;
  /** Energy attributed to each vehicle since this run started, kWh (for status and tests). */
  totals(): Map<string, number>;
}

export function createVehicleMetering(deps: { vehicleIds: readonly string[]; metering: Pick<Metering, 'feed' | 'lastValue'> }): VehicleMetering {
  const counters = new Map(deps.vehicleIds.map((id) => [id, deps.metering.lastValue(vehicleSubject(id)) ?? 0]));
  const started = new Map(counters);
  const last = new Map<string, { vehicleId: string | null; energyKwh: number }>();
  return {
    feed(atMs, chargers) {
      for (const c of chargers) {
        if (c.energyKwh === undefined) continue;
        const before = last.get(c.chargerId);
        if (before && c.vehicleId !== null && before.vehicleId === c.vehicleId && counters.has(c.vehicleId)) {
          counters.set(c.vehicleId, counters.get(c.vehicleId)! + Math.max(0, c.energyKwh - before.energyKwh));
        }
        last.set(c.chargerId, { vehicleId: c.vehicleId, energyKwh: c.energyKwh });
      }
      for (const [id, kwh] of counters) deps.metering.feed(vehicleSubject(id), { atMs, energyKwh: kwh, energyAtMs: atMs });
    },
    totals: () => new Map([...counters].map(([id, kwh]) => [id, kwh - (started.get(id) ?? 0)])),
  };
}
