import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import { codeOf } from '../errors.js';
import type { ReportRow, Store } from '../store/types.js';
import { deadlineCheckCron, isDuplicateRejection, reportDeadlineWarningMs } from '../spark/report-rules.js';
import { backoffMs } from '../timing/backoff.js';
import { startLoop, type LoopHandle } from '../timing/loop.js';
import { startCronJob } from '../timing/cron.js';
import { planReportBody, type PendingPlanReport, type PlanReportQueue } from './plan-reports.js';
import { planReportFrom } from '../core/plan-report.js';
import type { ReportSender } from '../upstream/port.js';

/** The outbox operations this job needs. */
export type OutboxPort = Pick<Store, 'dueReports' | 'markSending' | 'markAccepted' | 'markRejected' | 'markRetry' | 'outboxSummary'>;

export interface OutboxHealth {
  ok: boolean;
  lastError: { code: string; message: string; atMs: number } | null;
  deadlineWarning: boolean;
}

type SendFailure = { kind: 'alreadyAccepted' | 'rejected' | 'retry'; code: string; message: string };

/**
 * What a failed send means. Only a report the API already holds conflicts (409): an earlier send
 * got through. A duplicate rejection after an earlier attempt (cut off by a crash or a timeout)
 * means that attempt got through; on a first attempt the same answer means another report of ours
 * holds the target, a real rejection. A 4xx rejection is final; anything else is retried.
 */
function failureOf(err: unknown, attemptsBefore: number): SendFailure {
  const message = err instanceof Error ? err.message : String(err);
  const code = codeOf(err);
  if (code === 'API_CONFLICT' || (attemptsBefore > 0 && isDuplicateRejection(err))) return { kind: 'alreadyAccepted', code, message };
  if (code === 'API_REJECTED' || code === 'API_NOT_FOUND' || code === 'API_BAD_RESPONSE' || code === 'FLEET_REPORT_REJECTED')
    return { kind: 'rejected', code, message };
  return { kind: 'retry', code, message };
}

/**
 * Sends queued reports, oldest first, one at a time. A report is marked `sending` before the POST
 * so a crash mid-request resends it after restart (the API refuses a duplicate with 409, which
 * counts as accepted). Retryable failures back off; a 4xx rejection is final and keeps its reason.
 */
export function startReportOutbox(deps: {
  outbox: OutboxPort;
  sender: ReportSender;
  clock: Clock;
  logger: Logger;
  pollMs?: number;
  backoff?: { baseMs: number; maxMs: number };
  random?: () => number;
  /** Told about every send's outcome (metrics). */
  onOutcome?: (outcome: 'sent' | 'rejected' | 'retried', code?: string) => void;
  /** Warn when an unsent report's deadline is this close. */
  deadlineWarningMs?: number;
  /** The plan report's record, sent after the event reports (absent: no plan reports). */
  planReports?: PlanReportQueue;
}): LoopHandle & { health(): OutboxHealth; flush(): void } {
  const log = deps.logger.child({ component: 'report-outbox' });
  const backoff = deps.backoff ?? { baseMs: 30_000, maxMs: 3_600_000 };
  const warnWithinMs = deps.deadlineWarningMs ?? reportDeadlineWarningMs;
  const health: OutboxHealth = { ok: true, lastError: null, deadlineWarning: false };

  async function sendOne(report: ReportRow, signal: AbortSignal): Promise<void> {
    const now = deps.clock.nowMs();
    deps.outbox.markSending(report.id, now);
    try {
      const { id } = await deps.sender.postReport(report.body, signal, { idempotencyKey: report.idempotencyKey, createdAtMs: report.createdAtMs });
      deps.outbox.markAccepted(report.id, deps.clock.nowMs(), id);
      log.info({ key: report.idempotencyKey, eventId: report.eventId, attempts: report.attempts + 1 }, 'report accepted');
      health.ok = true;
      deps.onOutcome?.('sent');
    } catch (err) {
      const at = deps.clock.nowMs();
      const failure = failureOf(err, report.attempts);
      if (failure.kind === 'alreadyAccepted') {
        deps.outbox.markAccepted(report.id, at);
        log.info({ key: report.idempotencyKey, reason: failure.message }, 'report was already accepted earlier; marked accepted');
        return;
      }
      health.ok = false;
      health.lastError = { code: failure.code, message: failure.message, atMs: at };
      if (failure.kind === 'rejected') {
        deps.outbox.markRejected(report.id, failure.message, at);
        log.error({ code: 'REPORT_REJECTED', key: report.idempotencyKey, reason: failure.message }, 'report rejected by the API');
        deps.onOutcome?.('rejected', failure.code);
        return;
      }
      const next = at + backoffMs(report.attempts + 1, backoff, deps.random);
      deps.outbox.markRetry(report.id, `${failure.code}: ${failure.message}`, next);
      log.warn(
        { code: failure.code, key: report.idempotencyKey, attempts: report.attempts + 1, nextAttemptMs: next },
        'report send failed; will retry',
      );
      deps.onOutcome?.('retried', failure.code);
    }
  }

  /** The plan report waiting in its own record (it answers no event, so it has no outbox row). */
  async function sendPlanReport(queue: PlanReportQueue, waiting: PendingPlanReport, signal: AbortSignal): Promise<void> {
    const payload = planReportFrom(waiting.payload, deps.clock.nowMs());
    if (payload === null) {
      queue.expired(waiting);
      log.info({ key: waiting.key }, 'plan report dropped unsent: every hour of it has ended');
      return;
    }
    const report = { ...waiting, payload };
    try {
      const { id } = await deps.sender.postReport(planReportBody(report), signal, { idempotencyKey: report.key, createdAtMs: report.createdAtMs });
      queue.accepted(report, deps.clock.nowMs(), id ?? null);
      log.info({ key: report.key, reason: report.reason, attempts: report.attempts + 1 }, 'plan report accepted');
      deps.onOutcome?.('sent');
    } catch (err) {
      const at = deps.clock.nowMs();
      const failure = failureOf(err, report.attempts);
      if (failure.kind === 'alreadyAccepted') {
        queue.accepted(report, at, null);
        return;
      }
      if (failure.kind === 'rejected') {
        queue.rejected(report, at, failure.message);
        // A warning, not an error: a plan report tells the partner what may come and earns or
        // promises nothing; the next change of the plan (or the next day) sends another.
        log.warn({ code: 'REPORT_REJECTED', key: report.key, reason: failure.message }, 'plan report rejected by the API');
        deps.onOutcome?.('rejected', failure.code);
        return;
      }
      const next = at + backoffMs(report.attempts + 1, backoff, deps.random);
      queue.retry(report, `${failure.code}: ${failure.message}`, next);
      log.warn({ code: failure.code, key: report.key, attempts: report.attempts + 1, nextAttemptMs: next }, 'plan report send failed; will retry');
      deps.onOutcome?.('retried', failure.code);
    }
  }

  /** The oldest unsent report's deadline when it is close, else null. */
  function nearDeadlineMs(now: number): number | null {
    const { oldestPendingDeadlineMs } = deps.outbox.outboxSummary();
    return oldestPendingDeadlineMs !== null && oldestPendingDeadlineMs - now < warnWithinMs ? oldestPendingDeadlineMs : null;
  }

  const loop = startLoop({
    name: 'report-outbox',
    clock: deps.clock,
    logger: log,
    errorDelayMs: 60_000,
    tick: async (signal) => {
      for (const report of deps.outbox.dueReports(deps.clock.nowMs())) {
        if (signal.aborted) break;
        await sendOne(report, signal);
      }
      const plan = deps.planReports?.due(deps.clock.nowMs());
      if (deps.planReports && plan && !signal.aborted) await sendPlanReport(deps.planReports, plan, signal);
      health.deadlineWarning = nearDeadlineMs(deps.clock.nowMs()) !== null;
      return deps.pollMs ?? 60_000;
    },
  });
  // The month-end deadline check: a node-cron job, at start and every six hours (so a report
  // stuck for days warns four times a day, not every minute).
  const deadlineCheck = startCronJob({
    name: 'report-deadline',
    spec: deadlineCheckCron,
    clock: deps.clock,
    logger: deps.logger,
    run: () => {
      const deadlineMs = nearDeadlineMs(deps.clock.nowMs());
      if (deadlineMs !== null) log.warn({ code: 'REPORT_DEADLINE_NEAR', deadlineMs }, 'an unsent report is close to its month-end deadline');
    },
  });
  deadlineCheck.wake();
  return {
    ...loop,
    flush: () => loop.wake(),
    health: () => ({ ...health }),
    stop: async () => {
      await Promise.all([loop.stop(), deadlineCheck.stop()]);
    },
  };
}
