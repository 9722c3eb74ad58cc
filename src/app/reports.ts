/**
 * The durable report outbox: retries across restarts and watches the month-end deadline. Also the
 * location's plan report (docs/flexibility.md), queued when the plan changes and sent by the outbox.
 */
import { providing, type Part } from '../lifecycle.js';
import type { Store } from '../store/types.js';
import type { Upstream } from '../upstream/index.js';
import type { HomeTracker } from '../jobs/home-tracker.js';
import type { Identity } from '../spark/event-normalise.js';
import { startReportOutbox } from '../jobs/report-outbox.js';
import { planReportQueue, startPlanReports, type PlanReportQueue, type PlanReportTarget } from '../jobs/plan-reports.js';
import { eligibilityStateKey, eligibilityStateSchema } from '../registration.js';
import { jobHealth, type AppContext } from './context.js';
import type { Planning } from './planning.js';

export interface ReportParts {
  outbox: ReturnType<typeof startReportOutbox>;
  /** The plan report's record (direct upstream only): its one writer in the process, which keeps it in memory. */
  planReports: PlanReportQueue | null;
}

export interface ReportNeeds {
  store: Store;
  upstream: Upstream;
  planning: Planning;
  tracker: HomeTracker;
  me: Identity;
}

export function reportsModule(ctx: AppContext, needs: ReportNeeds): Part<ReportParts> {
  const { config, deps, clock, counters, bus } = ctx;
  return providing<ReportParts>(
    'reports',
    () => {
      const { store, planning, tracker, me } = needs;
      // The partner's hub forwards reports that answer an event of the home's; a plan report
      // answers none, so in fleet mode there is none to send.
      const planReports = config.upstream.mode === 'fleet' ? undefined : planReportQueue(store);
      const outbox = startReportOutbox({
        outbox: store,
        sender: needs.upstream.reports,
        clock,
        logger: deps.logger,
        backoff: { baseMs: config.reports.retryMinS * 1000, maxMs: config.reports.retryMaxS * 1000 },
        deadlineWarningMs: config.reports.deadlineWarnDays * 86_400_000,
        onOutcome: (outcome, code) => counters.report(outcome, code),
        ...(planReports ? { planReports } : {}),
      });
      // The event intake (started earlier) queues reports: it tells the outbox over the bus.
      const off = bus.on('reportQueued', () => outbox.flush());
      if (!planReports) {
        const made = {
          stop: async () => {
            off();
            await outbox.stop();
          },
        };
        return { made, provides: { outbox, planReports: null } };
      }
      const target = (): PlanReportTarget | null => {
        const meterPointId = me.meterPointIds[0];
        // Only a location that is registered, has a meter point (the payload requires one) and
        // whose user `register` did not find unenrolled.
        if (me.locationId === null || meterPointId === undefined) return null;
        if (store.getState(eligibilityStateKey, eligibilityStateSchema)?.enrolled === false) return null;
        return { locationId: me.locationId, meterPointId };
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
      const made = {
        stop: async () => {
          off();
          await Promise.all([checker.stop(), outbox.stop()]);
        },
      };
      return { made, provides: { outbox, planReports } };
    },
    (made) => [jobHealth('reports', made?.outbox.health())],
  );
}
