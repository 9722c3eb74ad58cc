/**
 * The durable report outbox: retries across restarts and watches the month-end deadline. Also the
 * location's plan report (docs/flexibility.md), queued when the plan changes and sent by the outbox.
 */
import { moduleOf, type Module } from '../lifecycle.js';
import { startReportOutbox } from '../jobs/report-outbox.js';
import { planReportQueue, startPlanReports, type PlanReportTarget } from '../jobs/plan-reports.js';
import { eligibilityStateKey, eligibilityStateSchema } from '../registration.js';
import { jobHealth, type AppContext } from './context.js';

export function reportsModule(ctx: AppContext): Module {
  const { config, deps, clock, counters } = ctx;
  return moduleOf(
    'reports',
    () => {
      const store = ctx.part('store');
      // The partner's hub forwards reports that answer an event of the home's; a plan report
      // answers none, so in fleet mode there is none to send.
      const planReports = config.upstream.mode === 'fleet' ? undefined : planReportQueue(store);
      const outbox = startReportOutbox({
        outbox: store,
        sender: ctx.part('upstream').reports,
        clock,
        logger: deps.logger,
        backoff: { baseMs: config.reports.retryMinS * 1000, maxMs: config.reports.retryMaxS * 1000 },
        deadlineWarningMs: config.reports.deadlineWarnDays * 86_400_000,
        onOutcome: (outcome, code) => counters.report(outcome, code),
        ...(planReports ? { planReports } : {}),
      });
      ctx.parts.outbox = outbox;
      if (!planReports) return outbox;
      ctx.parts.planReports = planReports;
      const planning = ctx.part('planning');
      const tracker = ctx.part('tracker');
      const target = (): PlanReportTarget | null => {
        const meterPointId = ctx.me.meterPointIds[0];
        // Only a location that is registered, has a meter point (the payload requires one) and
        // whose user `register` did not find unenrolled.
        if (ctx.me.locationId === null || meterPointId === undefined) return null;
        if (store.getState(eligibilityStateKey, eligibilityStateSchema)?.enrolled === false) return null;
        return { locationId: ctx.me.locationId, meterPointId };
      };
      const checker = startPlanReports({
        queue: planReports,
        plan: () => planning.current(),
        baseLoadKw: () => tracker.baseLoadKw(),
        target,
        clock,
        logger: deps.logger,
        onQueued: () => outbox.flush(),
      });
      return {
        stop: async () => {
          await Promise.all([checker.stop(), outbox.stop()]);
        },
      };
    },
    () => [jobHealth('reports', ctx.parts.outbox?.health())],
  );
}
