import { z } from 'zod';
import type { StoreContext } from './context.js';
import type { Store } from './types.js';
import { msInput, msRow, roundMs } from './time.js';
import { checkInput, guard, jsonText, misuse, parseRow, toJson } from './errors.js';
import { reportKinds, reportStates, type OutboxSummary, type ReportRow, type ReportState } from './types.js';

/**
 * The report outbox: a durable queue of POST /reports bodies with a small state machine.
 *
 *   pending ──markSending──▶ sending ──markAccepted──▶ accepted   (terminal)
 *      ▲                        │    ──markRejected──▶ rejected   (terminal)
 *      └──markRetry / crash─────┘
 *
 * Delivery is at least once: a report is marked `sending` (durably) before the request goes
 * out, and `accepted` after the API answered. If the process dies in between, the report is
 * found in `sending` at the next start, put back to `pending` by `recoverInterrupted`, and sent
 * again; the API may then see it twice. It is never sent again once `accepted` is committed.
 * All state changes are committed with synchronous=FULL, so a power cut cannot undo a
 * committed `accepted` (that would re-send an accepted report) or lose an enqueued report.
 */

const reportInputSchema = z.strictObject({
  idempotencyKey: z.string().min(1),
  eventId: z.string().min(1),
  kind: z.enum(reportKinds),
  body: z.unknown(),
  nowMs: msInput,
  nextAttemptMs: msInput.optional(),
  deadlineMs: msInput.nullish(),
});

const reportRowSchema = z.strictObject({
  id: z.number().int(),
  idempotencyKey: z.string(),
  eventId: z.string(),
  kind: z.enum(reportKinds),
  body: jsonText,
  state: z.enum(reportStates),
  attempts: z.number().int().nonnegative(),
  lastError: z.string().nullable(),
  nextAttemptMs: msRow,
  deadlineMs: msRow.nullable(),
  remoteId: z.string().nullable(),
  createdAtMs: msRow,
  updatedAtMs: msRow,
});

const stateCountSchema = z.object({ state: z.enum(reportStates), n: z.number() });
const pendingStatsSchema = z.object({ deadline: msRow.nullable(), nextAttempt: msRow.nullable() });

const columns = `id, idempotency_key AS idempotencyKey, event_id AS eventId, kind, body_json AS body, state,
  attempts, last_error AS lastError, next_attempt_ms AS nextAttemptMs, deadline_ms AS deadlineMs,
  remote_id AS remoteId, created_at_ms AS createdAtMs, updated_at_ms AS updatedAtMs`;

/** This table's part of the {@link Store} (its documentation is there). */
export type OutboxTable = Pick<
  Store,
  | 'enqueueReport'
  | 'getReport'
  | 'dueReports'
  | 'markSending'
  | 'markAccepted'
  | 'markRejected'
  | 'markRetry'
  | 'listReports'
  | 'outboxSummary'
  | 'recoverInterrupted'
>;

export function outboxTable(ctx: StoreContext): OutboxTable {
  const { db } = ctx;
  const insert = db.prepare(`INSERT INTO report_outbox (idempotency_key, event_id, kind, body_json, state,
      next_attempt_ms, deadline_ms, created_at_ms, updated_at_ms)
    VALUES (@idempotencyKey, @eventId, @kind, @body, 'pending', @nextAttemptMs, @deadlineMs, @nowMs, @nowMs)
    ON CONFLICT (idempotency_key) DO NOTHING`);
  const byId = db.prepare(`SELECT ${columns} FROM report_outbox WHERE id = ?`);
  const byKey = db.prepare(`SELECT ${columns} FROM report_outbox WHERE idempotency_key = ?`);
  const eventExists = db.prepare('SELECT 1 FROM events WHERE event_id = ?').pluck();
  const due = db.prepare(`SELECT ${columns} FROM report_outbox WHERE state = 'pending' AND next_attempt_ms <= ?
    ORDER BY next_attempt_ms, coalesce(deadline_ms, 9e15), id LIMIT ?`);
  const list = db.prepare(`SELECT ${columns} FROM report_outbox
    WHERE (@states IS NULL OR state IN (SELECT value FROM json_each(@states)))
      AND (@eventId IS NULL OR event_id = @eventId)
    ORDER BY id`);
  const toSending = db.prepare(`UPDATE report_outbox SET state = 'sending', attempts = attempts + 1,
    updated_at_ms = @nowMs WHERE id = @id AND state = 'pending'`);
  const toAccepted = db.prepare(`UPDATE report_outbox SET state = 'accepted', remote_id = @remoteId,
    updated_at_ms = @nowMs WHERE id = @id AND state = 'sending'`);
  // An event whose reports are all accepted has nothing left to do (status shows the outbox's truth).
  const eventDone = db.prepare(`UPDATE events SET state = 'done', updated_at_ms = @nowMs
    WHERE event_id = (SELECT event_id FROM report_outbox WHERE id = @id) AND state = 'reportQueued'
      AND NOT EXISTS (SELECT 1 FROM report_outbox o WHERE o.event_id = events.event_id AND o.state <> 'accepted')`);
  const toRejected = db.prepare(`UPDATE report_outbox SET state = 'rejected', last_error = @reason,
    updated_at_ms = @nowMs WHERE id = @id AND state = 'sending'`);
  const toRetry = db.prepare(`UPDATE report_outbox SET state = 'pending', last_error = @error,
    next_attempt_ms = @nextAttemptMs, updated_at_ms = @nowMs WHERE id = @id AND state = 'sending'`);
  const selectSending = db.prepare(`SELECT ${columns} FROM report_outbox WHERE state = 'sending' ORDER BY id`);
  const sendingToPending = db.prepare(`UPDATE report_outbox SET state = 'pending', next_attempt_ms = @nowMs,
    last_error = coalesce(last_error, 'interrupted while sending'), updated_at_ms = @nowMs WHERE state = 'sending'`);
  const counts = db.prepare('SELECT state, count(*) AS n FROM report_outbox GROUP BY state');
  const pendingStats = db.prepare(`SELECT
      (SELECT min(deadline_ms) FROM report_outbox WHERE state IN ('pending', 'sending')) AS deadline,
      (SELECT min(next_attempt_ms) FROM report_outbox WHERE state = 'pending') AS nextAttempt`);

  const read = (row: unknown): ReportRow => parseRow(reportRowSchema, row, 'report_outbox');

  /** Runs an UPDATE guarded by the source state; explains a refusal. */
  function transition(op: string, id: number, to: ReportState, run: () => number): ReportRow {
    return guard(op, () =>
      ctx.durable(() => {
        const changed = run();
        const row = byId.get(id);
        if (row === undefined) throw misuse(`${op}: no report with id ${id}`, { reportId: id });
        const report = read(row);
        if (changed === 1) return report;
        // Repeating a terminal transition is harmless (e.g. an answer processed twice).
        if (report.state === to && (to === 'accepted' || to === 'rejected')) return report;
        throw misuse(`${op}: report ${id} is ${report.state}, cannot go to ${to}`, {
          reportId: id,
          from: report.state,
          to,
        });
      }),
    );
  }

  return {
    enqueueReport(report) {
      const r = checkInput(reportInputSchema, report, 'report');
      const body = toJson(r.body, 'report body');
      return guard('enqueueReport', () =>
        ctx.durable(() => {
          const existing = byKey.get(r.idempotencyKey);
          if (existing !== undefined) return { report: read(existing), created: false };
          if (eventExists.get(r.eventId) === undefined) {
            throw misuse(`enqueueReport: event ${r.eventId} is not stored`, { eventId: r.eventId });
          }
          insert.run({
            idempotencyKey: r.idempotencyKey,
            eventId: r.eventId,
            kind: r.kind,
            body,
            nextAttemptMs: r.nextAttemptMs ?? r.nowMs,
            deadlineMs: r.deadlineMs ?? null,
            nowMs: r.nowMs,
          });
          return { report: read(byKey.get(r.idempotencyKey)), created: true };
        }),
      );
    },

    getReport(id) {
      const row = guard('getReport', () => byId.get(id));
      return row === undefined ? undefined : read(row);
    },

    dueReports(nowMs, limit = 100) {
      return guard('dueReports', () => due.all(nowMs, limit)).map(read);
    },

    markSending(id, nowMs) {
      return transition('markSending', id, 'sending', () => toSending.run({ id, nowMs: roundMs(nowMs) }).changes);
    },

    markAccepted(id, nowMs, remoteId = null) {
      return transition('markAccepted', id, 'accepted', () => {
        const changed = toAccepted.run({ id, nowMs: roundMs(nowMs), remoteId }).changes;
        if (changed === 1) eventDone.run({ id, nowMs: roundMs(nowMs) });
        return changed;
      });
    },

    markRejected(id, reason, nowMs) {
      return transition('markRejected', id, 'rejected', () => toRejected.run({ id, nowMs: roundMs(nowMs), reason }).changes);
    },

    markRetry(id, error, nextAttemptMs) {
      const nowMs = roundMs(ctx.clock.nowMs());
      const next = roundMs(nextAttemptMs);
      return transition('markRetry', id, 'pending', () => toRetry.run({ id, nowMs, error, nextAttemptMs: next }).changes);
    },

    listReports(query = {}) {
      const rows = guard('listReports', () =>
        list.all({
          states: query.states === undefined ? null : JSON.stringify(query.states),
          eventId: query.eventId ?? null,
        }),
      );
      return rows.map(read);
    },

    outboxSummary() {
      return guard('outboxSummary', () => {
        const summary: OutboxSummary = {
          pending: 0,
          sending: 0,
          accepted: 0,
          rejected: 0,
          oldestPendingDeadlineMs: null,
          nextAttemptMs: null,
        };
        for (const row of counts.all()) {
          const { state, n } = parseRow(stateCountSchema, row, 'report_outbox');
          summary[state] = n;
        }
        const stats = parseRow(pendingStatsSchema, pendingStats.get(), 'report_outbox');
        summary.oldestPendingDeadlineMs = stats.deadline;
        summary.nextAttemptMs = stats.nextAttempt;
        return summary;
      });
    },

    recoverInterrupted() {
      return guard('recoverInterrupted', () =>
        ctx.durable(() => {
          const interrupted = selectSending.all().map(read);
          if (interrupted.length === 0) return [];
          const nowMs = roundMs(ctx.clock.nowMs());
          sendingToPending.run({ nowMs });
          return interrupted.map((r) => ({
            ...r,
            state: 'pending' as const,
            nextAttemptMs: nowMs,
            lastError: r.lastError ?? 'interrupted while sending',
            updatedAtMs: nowMs,
          }));
        }),
      );
    },
  };
}
