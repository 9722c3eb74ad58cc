/**
 * The home's own state: metering (energy per device and for the location), the user's wishes and
 * the home tracker (what the devices and the plan did, kept across restarts) and the learned load
 * forecast (the house's own load, the tanks' draws; in memory). Metering's last
 * samples are flushed on stop, after every loop that feeds it has ended.
 */
import type { Part } from '../lifecycle.js';
import type { Store } from '../store/types.js';
import { createMetering, meteringOptionsFor, type MeteredSubject, type Metering } from '../jobs/metering.js';
import { Wishes } from '../jobs/home-state.js';
import { createHomeTracker, type HomeTracker } from '../jobs/home-tracker.js';
import { createVehicleMetering, vehicleSubject, type VehicleMetering } from '../jobs/vehicle-metering.js';
import { createLoadForecaster, type LoadForecaster } from '../jobs/load-forecast.js';
import { createZoneLearning, type ZoneLearning } from '../jobs/zone-learning.js';
import { zoneLearnerStore } from '../store/zone-learners.js';
import { jobHealth, type AppContext } from './context.js';
import type { DeviceParts } from './devices.js';

export interface HomeParts {
  subjects: MeteredSubject[];
  metering: Metering;
  vehicleMetering: VehicleMetering;
  wishes: Wishes;
  tracker: HomeTracker;
  /** The house's own load and the tanks' draws, learned (the planner's base load, the hourly guard). */
  loadForecast: LoadForecaster;
  /** Each heated zone's room model, learnt hour by hour (fed by the control loop). */
  zoneLearning: ZoneLearning;
}

export function homeModule(ctx: AppContext, needs: { store: Store } & Pick<DeviceParts, 'built' | 'vehicleSoc'>): Part<HomeParts> {
  const { config, deps, clock, log, subjectOfDevice } = ctx;
  let metering: Metering | undefined;
  return {
    name: 'home',
    async start() {
      const { store: s, built, vehicleSoc } = needs;
      const subjects: MeteredSubject[] = config.devices.flatMap((d): MeteredSubject[] => {
        const caps = built.get(d.id)!.capabilities;
        if (caps.energyMeter) return [{ subject: subjectOfDevice(d.id), method: 'counter', options: meteringOptionsFor(d, config.site) }];
        if (caps.powerMeter) return [{ subject: subjectOfDevice(d.id), method: 'power' }];
        return [];
      });
      // A car's counter rises by what one charger meters: no faster than the strongest charger draws.
      const chargerKw = config.devices.flatMap((d) => (d.kind === 'evCharger' ? [meteringOptionsFor(d, config.site).maxPowerKw ?? Infinity] : []));
      const carOptions = chargerKw.length > 0 && Number.isFinite(Math.max(...chargerKw)) ? { maxPowerKw: Math.max(...chargerKw) } : {};
      for (const v of config.vehicles) subjects.push({ subject: vehicleSubject(v.id), method: 'counter', options: carOptions });
      const m = createMetering({ store: s, subjects, clock, logger: deps.logger });
      metering = m;
      const vehicleMetering = createVehicleMetering({ vehicleIds: config.vehicles.map((v) => v.id), metering: m });
      const w = new Wishes(
        s,
        config.devices.map((d) => d.id),
      );
      const zoneLearning = createZoneLearning({
        zones: config.devices.flatMap((d) => (d.kind === 'zone' ? [d] : [])),
        store: zoneLearnerStore(s),
        hourKwh: (id, hourStartMs) => s.readHourly(subjectOfDevice(id), hourStartMs, hourStartMs + 3_600_000).find((r) => r.quality !== 'gap')?.kwh,
        logger: deps.logger,
      });
      const tracker = createHomeTracker({
        config,
        store: s,
        clock,
        wishes: w,
        logger: deps.logger,
        vehicleSocPct: (id) => vehicleSoc.get(id)?.socPct(),
        zoneLearner: (id) => zoneLearning.learner(id),
      });
      const metered = new Set(subjects.map((x) => x.subject));
      const loadForecast = createLoadForecaster({
        config,
        store: s,
        deviceSubjects: config.devices
          .filter((d) => d.kind !== 'meter')
          .flatMap((d) => (metered.has(subjectOfDevice(d.id)) ? [subjectOfDevice(d.id)] : [])),
        hasMainMeter: ctx.mainMeterId !== null && metered.has('location'),
        smoothedKw: () => tracker.baseLoadKw(),
      });
      return { subjects, metering: m, vehicleMetering, wishes: w, tracker, loadForecast, zoneLearning };
    },
    async stop() {
      try {
        metering?.flush();
      } catch (err) {
        log.warn({ err }, 'final metering flush failed');
      }
    },
    health: () => (metering ? [jobHealth('metering', metering.health())] : []),
  };
}
