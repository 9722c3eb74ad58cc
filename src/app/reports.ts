/** The durable report outbox: retries across restarts and watches the month-end deadline. */
import { moduleOf, type Module } from '../lifecycle.js';
import { startReportOutbox } from '../jobs/report-outbox.js';
import { jobHealth, type AppContext } from './context.js';

export function reportsModule(ctx: AppContext): Module {
  const { config, deps, clock, counters } = ctx;
  return moduleOf(
    'reports',
    () => {
      const outbox = startReportOutbox({
        outbox: ctx.part('store'),
        sender: ctx.part('upstream').reports,
        clock,
        logger: deps.logger,
        backoff: { baseMs: config.reports.retryMinS * 1000, maxMs: config.reports.retryMaxS * 1000 },
        deadlineWarningMs: config.reports.deadlineWarnDays * 86_400_000,
        onOutcome: (outcome, code) => counters.report(outcome, code),
      });
      ctx.parts.outbox = outbox;
      return outbox;
    },
    () => [jobHealth('reports', ctx.parts.outbox?.health())],
  );
}
