/**
 * Every six hours (UTC) and at start, as a gateway's own outbox does: a report stuck near its
 * month-end deadline is said in the log, not only on /healthz. It reads only the pending reports:
 * a run while the database is down logs that this check failed, nothing about the health check.
 */
import type pg from 'pg';
import { startCronJob, type CronJob } from '../timing/cron.js';
import { deadlineCheckCron } from '../spark/report-rules.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import { pendingReports } from './outbox-store.js';

export function startDeadlineCheck(deps: { pool: Pick<pg.Pool, 'query'>; clock: Clock; logger: Logger }): CronJob {
  const log = deps.logger;
  const check = startCronJob({
    name: 'report-deadline',
    spec: deadlineCheckCron,
    clock: deps.clock,
    logger: log,
    run: async () => {
      try {
        const o = await pendingReports(deps.pool);
        if (o.deadlineNear) {
          log.warn(
            { code: 'REPORT_DEADLINE_NEAR', pending: o.pending, nearestDeadline: o.nearestDeadline },
            'a report the hub has not uploaded yet is close to (or past) its month-end deadline',
          );
        }
      } catch (err) {
        log.warn({ err, code: 'STORE_FAILED' }, 'report deadline check failed; tried again at the next run');
      }
    },
  });
  check.wake();
  return check;
}
