/**
 * Planning: the plan from prices, events, the devices' state and the user's wishes, re-made when
 * an input changes. Plans run on a worker thread when asked (and the tariff allows it).
 */
import { moduleOf, type Module } from '../lifecycle.js';
import type { ControlSnapshot } from '../jobs/control-loop.js';
import { startPlanWorker, type PlanWorker } from '../jobs/plan-worker.js';
import { buildPlanInput } from '../jobs/plan-inputs.js';
import { startPlanning } from '../jobs/planning.js';
import { billPlanner } from '../jobs/bill-planner.js';
import { siteTariff } from '../config/tariff-file.js';
import { plannedCars, withPlannedCars, type PlannedCar } from '../jobs/vehicles.js';
import { jobHealth, type AppContext } from './context.js';

export function planningModule(ctx: AppContext): Module {
  const { config, deps, clock, counters } = ctx;
  return moduleOf(
    'planning',
    () => {
      const s = ctx.part('store');
      const tracker = ctx.part('tracker');
      const prices = ctx.part('prices');
      const { activeEvents } = ctx.part('events');
      const me = ctx.me;
      const controlLast = (): ControlSnapshot | null => ctx.parts.control?.last() ?? null;
      /** The cars at the chargers when the input was built: the plan names them. */
      let cars = new Map<string, PlannedCar>();

      let planWorker: PlanWorker | undefined;
      const previous = tracker.loadPlan();
      ctx.parts.previousPlan = previous;
      const planBill = billPlanner({ config, readLocationHours: (from, to) => s.readHourly('location', from, to), logger: deps.logger });
      // The planner thread plans energy only, so a tariff with a capacity fee keeps the planner on this
      // thread. It ends after two minutes without a plan: an idle thread's memory is not worth keeping.
      if (deps.planInWorker && !siteTariff(config)?.capacity) planWorker = startPlanWorker({ logger: deps.logger, idle: { clock, ms: 2 * 60_000 } });
      const planning = startPlanning({
        buildInput: (now) => {
          // What the devices took in this slot so far, so that a mid-slot plan keeps the slot's target.
          const last = controlLast();
          const slotMs = config.site.slotMinutes * 60_000;
          const delivered = last && last.slotStartMs === Math.floor(now / slotMs) * slotMs ? last.slotEnergyKwh : undefined;
          const snap = tracker.snapshot(now, prices.data(), activeEvents());
          cars = plannedCars(snap.evs);
          return buildPlanInput(config, delivered ? { ...snap, slotDeliveredKwh: delivered } : snap, me.resources);
        },
        plan: async (input, nowMs, previous) => {
          // Real time, not the clock: this is CPU spent (or waited for, with the worker), for /metrics.
          // `previous` carries the slot already under way: without it a re-plan would restart its target.
          const started = performance.now();
          const planned = cars;
          const made = await (planWorker ? planWorker.plan(input, nowMs, previous) : planBill(input, nowMs, previous));
          counters.planSolved((performance.now() - started) / 1000);
          return withPlannedCars(made, planned);
        },
        store: s,
        clock,
        logger: deps.logger,
        slotMinutes: config.site.slotMinutes,
        initial: previous,
        onPlan: () => void ctx.parts.ha?.update().catch(() => undefined),
      });
      ctx.parts.planning = planning;
      return {
        stop: async () => {
          try {
            await planning.stop();
          } finally {
            await planWorker?.close().catch(() => undefined);
          }
        },
      };
    },
    () => [jobHealth('planner', ctx.parts.planning?.health())],
  );
}
