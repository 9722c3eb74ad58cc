/**
 * Planning: the plan from prices, events, the devices' state and the user's wishes, re-made when
 * an input changes. Plans run on a worker thread when asked.
 */
import { providing, type Part } from '../lifecycle.js';
import type { OutdoorForecast, Plan } from '../core/types.js';
import type { Store } from '../store/types.js';
import type { HomeTracker } from '../jobs/home-tracker.js';
import { forecastTempsC, type LoadForecaster } from '../jobs/load-forecast.js';
import type { Weather } from './weather.js';
import type { LoadModel } from '../core/load-forecast.js';
import type { Identity } from '../spark/event-normalise.js';
import type { ControlSnapshot } from '../jobs/control-loop.js';
import { startPlanWorker, type PlanWorker } from '../jobs/plan-worker.js';
import { buildPlanInput, type PlanningSnapshot } from '../jobs/plan-inputs.js';
import { startPlanning } from '../jobs/planning.js';
import { capacityContextOf } from '../jobs/bill-planner.js';
import { planRequest } from '../jobs/plan-request.js';
import { plannedCars, withPlannedCars, type PlannedCar } from '../jobs/vehicles.js';
import { jobHealth, type AppContext } from './context.js';
import type { EventState } from './event-intake.js';
import type { PriceRefresh } from './pricing.js';

export type Planning = ReturnType<typeof startPlanning>;

export interface PlanningParts {
  planning: Planning;
  /** The plan loaded from the store at start. */
  previousPlan: Plan | null;
}

export interface PlanningNeeds {
  store: Store;
  tracker: HomeTracker;
  loadForecast: LoadForecaster;
  /** The outdoor forecast: the load forecast's outdoor term, when it has learned one. */
  weather: Weather;
  prices: PriceRefresh;
  events: Pick<EventState, 'activeEvents'>;
  me: Identity;
}

/** The snapshot with what the load forecast has learned: the base load per slot and the tanks' draws. */
export function withLoadForecast(snap: PlanningSnapshot, forecast: LoadForecaster, outdoor?: OutdoorForecast): PlanningSnapshot {
  const learned = forecast.model(snap.nowMs).source === 'learned';
  const draws = forecast.drawProfiles(snap.nowMs);
  return {
    ...snap,
    ...(learned
      ? {
          baseLoadForecast: (startsMs: readonly number[]) =>
            forecast.forSlots(snap.nowMs, startsMs, outdoor && forecastTempsC(outdoor, startsMs, snap.nowMs)).map((f) => f.meanKw),
        }
      : {}),
    tanks: snap.tanks.map((t) => {
      const d = draws.get(t.config.id);
      return d?.source === 'learned' ? { ...t, learnedDrawsKwh: d.profileKwh } : t;
    }),
  };
}

/** The plan marked with a learned base load's note (a smoothed one leaves the plan as it was). */
function withBaseLoadSource(plan: Plan, model: LoadModel): Plan {
  return model.source === 'learned' ? { ...plan, baseLoad: { source: 'learned', note: model.note } } : plan;
}

export function planningModule(ctx: AppContext, needs: PlanningNeeds): Part<PlanningParts> {
  const { config, deps, clock, counters, bus } = ctx;
  return providing(
    'planning',
    () => {
      const { store: s, tracker, prices, me } = needs;
      const { activeEvents } = needs.events;
      // The control loop starts later: its last tick comes over the bus.
      let lastTick: ControlSnapshot | null = null;
      const controlLast = (): ControlSnapshot | null => lastTick;
      /** The cars at the chargers when the input was built: the plan names them. */
      let cars = new Map<string, PlannedCar>();

      let planWorker: PlanWorker | undefined;
      const previous = tracker.loadPlan();
      const billDeps = { config, readLocationHours: (from: number, to: number) => s.readHourly('location', from, to), logger: deps.logger };
      // With a capacity fee the month's metered hours are read here and the whole bill is planned, on the
      // thread when there is one, else here.
      const capacityAt = capacityContextOf(billDeps);
      // The thread ends after two minutes without a plan: an idle thread's memory is not worth keeping.
      if (deps.planInWorker) planWorker = startPlanWorker({ logger: deps.logger, idle: { clock, ms: 2 * 60_000 } });
      const planning = startPlanning({
        buildInput: (now) => {
          // What the devices took in this slot so far, so that a mid-slot plan keeps the slot's target.
          const last = controlLast();
          const slotMs = config.site.slotMinutes * 60_000;
          const delivered = last && last.slotStartMs === Math.floor(now / slotMs) * slotMs ? last.slotEnergyKwh : undefined;
          const outdoor = needs.weather.outdoorForecast();
          // The zones' outdoor temperatures come from the same forecast.
          const snap = { ...withLoadForecast(tracker.snapshot(now, prices.data(), activeEvents()), needs.loadForecast, outdoor), outdoor };
          cars = plannedCars(snap.evs);
          return buildPlanInput(config, delivered ? { ...snap, slotDeliveredKwh: delivered } : snap, me.resources);
        },
        plan: async (input, nowMs, previous) => {
          // Real time, not the clock: this is CPU spent (or waited for, with the worker), for /metrics.
          // `previous` carries the slot already under way: without it a re-plan would restart its target.
          const started = performance.now();
          const planned = cars;
          const capacity = capacityAt?.(nowMs);
          const made = await (planWorker
            ? planWorker.plan(input, nowMs, previous, capacity)
            : planRequest({ input, nowMs, ...(previous ? { previous } : {}), ...(capacity ? { capacity } : {}) }));
          counters.planSolved((performance.now() - started) / 1000);
          return withBaseLoadSource(withPlannedCars(made, planned), needs.loadForecast.model(nowMs));
        },
        store: s,
        clock,
        logger: deps.logger,
        slotMinutes: config.site.slotMinutes,
        initial: previous,
        onPlan: () => bus.emit('viewChanged'),
      });
      const offs = [bus.on('controlTicked', (snap) => void (lastTick = snap)), bus.on('replanWanted', ({ reason }) => planning.request(reason))];
      const made = {
        stop: async () => {
          for (const off of offs) off();
          try {
            await planning.stop();
          } finally {
            await planWorker?.close().catch(() => undefined);
          }
        },
      };
      return { made, provides: { planning, previousPlan: previous } };
    },
    (made) => [jobHealth('planner', made?.planning.health())],
  );
}
