/**
 * The control loop: reads every device, follows the plan, enforces the caps (and the main fuse)
 * from measured power, and asks for a re-plan when the devices' state or the clock changes.
 */
import { providing, type Part } from '../lifecycle.js';
import type { Identity } from '../spark/event-normalise.js';
import { clockStepOf } from '../jobs/planning.js';
import { startControlLoop, type ControlSnapshot, type ControlledDevice } from '../jobs/control-loop.js';
import { createFuseGuard } from '../jobs/fuse-guard.js';
import { capRunEndMs, type CapPoint } from '../core/cap-hold.js';
import { ratedKwOf } from '../devices/cap-hold.js';
import type { AppContext } from './context.js';
import type { DeviceParts } from './devices.js';
import type { HomeParts } from './home.js';
import type { EventState } from './event-intake.js';
import type { PriceRefresh } from './pricing.js';
import type { PlanningParts } from './planning.js';
import type { Weather } from './weather.js';
import { forecastTempC } from '../jobs/load-forecast.js';

export type ControlLoop = ReturnType<typeof startControlLoop>;

export interface ControlNeeds
  extends
    PlanningParts,
    Pick<DeviceParts, 'supervised'>,
    Pick<HomeParts, 'tracker' | 'metering' | 'wishes' | 'vehicleMetering' | 'loadForecast' | 'zoneLearning'> {
  prices: PriceRefresh;
  /** The outdoor forecast: each hour's temperature for the load forecast, and its outdoor term in the guard. */
  weather: Weather;
  events: Pick<EventState, 'activeEvents' | 'changed'>;
  me: Identity;
}

export function controlModule(ctx: AppContext, needs: ControlNeeds): Part<ControlLoop> {
  const { config, deps, clock, log, slotMs, mainMeterId, subjectOfDevice, bus } = ctx;
  return providing('control', () => {
    const { tracker, prices, planning, previousPlan: previous, supervised, metering: meter, wishes: w, me, vehicleMetering } = needs;
    const { activeEvents, changed: eventsChanged } = needs.events;
    const guardStore = ctx.storeHealth.guard;

    // One warning per step: until the re-plan lands, later ticks see the same step.
    let stepSeen = false;
    const controlled: ControlledDevice[] = config.devices
      .filter((d) => d.kind !== 'meter')
      .map((d) => ({ config: d, subject: subjectOfDevice(d.id), device: supervised.get(d.id)! }));
    const mainMeter = mainMeterId
      ? { config: config.devices.find((d) => d.id === mainMeterId)!, subject: 'location', device: supervised.get(mainMeterId)! }
      : null;
    /** Each charger's metered energy to the car identified there (after the tracker has seen this tick). */
    const feedVehicles = (snap: ControlSnapshot): void =>
      vehicleMetering.feed(
        snap.atMs,
        controlled.flatMap((c) =>
          c.config.kind === 'evCharger'
            ? [{ chargerId: c.config.id, vehicleId: tracker.vehicleAt(c.config.id), energyKwh: snap.readings.get(c.config.id)?.energyKwh }]
            : [],
        ),
      );
    const fuseConfig = config.site.fuse;
    const control = startControlLoop({
      devices: controlled,
      mainMeter,
      ...(fuseConfig
        ? { fuse: { guard: createFuseGuard(fuseConfig, deps.logger), meter: supervised.get(fuseConfig.meter)!, meterId: fuseConfig.meter } }
        : {}),
      metering: meter,
      clock,
      logger: deps.logger,
      tickMs: deps.controlTickMs ?? 10_000,
      slotMinutes: config.site.slotMinutes,
      timezone: config.site.timezone,
      inputs: {
        plan: () => planning.current(),
        locationCapKw: (now) => tracker.locationCapKw(now, activeEvents()),
        deviceCapKw: (id, now) => tracker.deviceCapKw(id, now, activeEvents(), me),
        capEndMs: (id, now) => {
          const applies = (p: CapPoint): boolean => p.resourceId === null || me.resources.get(p.resourceId) === id;
          const device = config.devices.find((d) => d.id === id);
          return capRunEndMs(
            activeEvents().flatMap((e) => e.lpcCaps),
            now,
            applies,
            device ? ratedKwOf(device) : undefined,
          );
        },
        intent: (id) => w.intent(id, clock.nowMs()),
        zonePreset: (id) => w.get(id).preset ?? 'comfort',
        baseLoadKw: () => tracker.baseLoadKw(),
        guardBaseLoadKw: (now) => needs.loadForecast.guardBaseLoadKw(now, forecastTempC(needs.weather.outdoorForecast(), now, now)),
        estimatedTankC: (id, now) => tracker.estimatedTankC(id, now, planning.current()),
      },
      onTick: (snap) => {
        // The planner (started earlier) keeps it for a mid-slot plan.
        bus.emit('controlTicked', snap);
        // The plan loaded from the store at start is old by design, not because the clock stepped.
        const current = planning.current();
        const step = current === previous ? null : clockStepOf(current, clock.nowMs(), slotMs);
        if (step !== null && !stepSeen) {
          log.warn(
            { code: 'CLOCK_JUMP', direction: step, planStartMs: planning.current()?.startMs },
            'the clock stepped under the plan: re-planning and refreshing prices now',
          );
          eventsChanged();
          prices.wake();
          planning.request(`clock step ${step}`);
        }
        stepSeen = step !== null;
        if (guardStore('home state', () => tracker.observe(snap, planning.current()))) planning.request('device state changed');
        const outdoorC = forecastTempC(needs.weather.outdoorForecast(), snap.atMs, snap.atMs);
        needs.loadForecast.observe(snap, outdoorC);
        needs.zoneLearning.observe(snap.atMs, (id) => snap.readings.get(id)?.temperatureC, outdoorC);
        if (config.vehicles.length > 0) feedVehicles(snap);
        bus.emit('viewChanged');
        deps.onControlTick?.(snap);
      },
    });
    return { made: control, provides: control };
  });
}
