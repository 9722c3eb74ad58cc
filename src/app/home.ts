/**
 * The home's own state: metering (energy per device and for the location), the user's wishes and
 * the home tracker (what the devices and the plan did, kept across restarts). Metering's last
 * samples are flushed on stop, after every loop that feeds it has ended.
 */
import type { Module } from '../lifecycle.js';
import { createMetering, meteringOptionsFor, type MeteredSubject } from '../jobs/metering.js';
import { Wishes } from '../jobs/home-state.js';
import { createHomeTracker } from '../jobs/home-tracker.js';
import { createVehicleMetering, vehicleSubject } from '../jobs/vehicle-metering.js';
import { jobHealth, type AppContext } from './context.js';

export function homeModule(ctx: AppContext): Module {
  const { config, deps, clock, log, subjectOfDevice } = ctx;
  return {
    name: 'home',
    async start() {
      const s = ctx.part('store');
      const built = ctx.part('built');
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
      ctx.parts.subjects = subjects;
      ctx.parts.metering = createMetering({ store: s, subjects, clock, logger: deps.logger });
      ctx.parts.vehicleMetering = createVehicleMetering({ vehicleIds: config.vehicles.map((v) => v.id), metering: ctx.parts.metering });
      const w = new Wishes(
        s,
        config.devices.map((d) => d.id),
      );
      ctx.parts.wishes = w;
      const vehicleSoc = ctx.part('vehicleSoc');
      ctx.parts.tracker = createHomeTracker({
        config,
        store: s,
        clock,
        wishes: w,
        logger: deps.logger,
        vehicleSocPct: (id) => vehicleSoc.get(id)?.socPct(),
      });
    },
    async stop() {
      try {
        ctx.parts.metering?.flush();
      } catch (err) {
        log.warn({ err }, 'final metering flush failed');
      }
    },
    health: () => (ctx.parts.metering ? [jobHealth('metering', ctx.parts.metering.health())] : []),
  };
}
