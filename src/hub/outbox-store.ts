/**
 * The hub's report outbox in PostgreSQL. A report is stored once per gateway and idempotency key; workers of
 * any instance claim due rows with `FOR UPDATE SKIP LOCKED` and a lease (`claimed_until`): a row
 * whose claimer died becomes claimable again when its lease ends. Lease and due times use the
 * database's clock, the one clock every instance shares.
 */
import type pg from 'pg';
import { fleetReceiptSchema, type FleetReceipt } from '../fleet/wire.js';
import { reportRequestSchema, type ReportRequest } from '../spark/wire.js';
import { reportDeadlineMs, reportDeadlineWarningMs } from '../spark/report-rules.js';

export interface OutboxRow {
  idempotencyKey: string;
  gatewayId: string;
  body: ReportRequest;
  state: 'pending' | 'accepted' | 'rejected';
  attempts: number;
  receipt: FleetReceipt | null;
}

interface Raw {
  idempotency_key: string;
  gateway_id: string;
  body: unknown;
  state: OutboxRow['state'];
  attempts: number;
  receipt: unknown;
}

const columns = 'idempotency_key, gateway_id, body, state, attempts, receipt';
const toRow = (r: Raw): OutboxRow => ({
  idempotencyKey: r.idempotency_key,
  gatewayId: r.gateway_id,
  body: reportRequestSchema.parse(r.body),
  state: r.state,
  attempts: r.attempts,
  receipt: r.receipt === null ? null : fleetReceiptSchema.parse(r.receipt),
});

export function createOutboxStore(pool: pg.Pool) {
  return {
    /**
     * Stores a report for upload, or a refusal (`rejected` with its receipt). Returns the row
     * under the key and whether this call created it: a key seen before keeps its first row.
     */
    async insert(key: string, gatewayId: string, body: ReportRequest, refusal?: FleetReceipt): Promise<{ created: boolean; row: OutboxRow }> {
      const deadlineMs = reportDeadlineMs(body);
      const created = await pool.query<Raw>(
        `INSERT INTO report_outbox (idempotency_key, gateway_id, body, state, receipt, last_error, deadline_at)
         VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($7::double precision / 1000))
         ON CONFLICT (gateway_id, idempotency_key) DO NOTHING RETURNING ${columns}`,
        [
          key,
          gatewayId,
          JSON.stringify(body),
          refusal ? 'rejected' : 'pending',
          refusal ? JSON.stringify(refusal) : null,
          refusal?.reason ?? null,
          deadlineMs,
        ],
      );
      if (created.rows[0]) return { created: true, row: toRow(created.rows[0]) };
      const existing = await pool.query<Raw>(`SELECT ${columns} FROM report_outbox WHERE gateway_id = $1 AND idempotency_key = $2`, [gatewayId, key]);
      if (!existing.rows[0]) throw new Error(`outbox row ${key} vanished`);
      return { created: false, row: toRow(existing.rows[0]) };
    },
    /** Claims up to `limit` due rows for `leaseMs` (also rows whose earlier claim has lapsed). */
    async claim(instanceId: string, limit: number, leaseMs: number): Promise<OutboxRow[]> {
      const { rows } = await pool.query<Raw>(
        `UPDATE report_outbox SET claimed_by = $1, claimed_until = now() + make_interval(secs => $3::double precision / 1000), attempts = attempts + 1
         WHERE (gateway_id, idempotency_key) IN (
           SELECT gateway_id, idempotency_key FROM report_outbox
           WHERE state = 'pending' AND next_attempt_at <= now() AND (claimed_until IS NULL OR claimed_until < now())
           ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING ${columns}`,
        [instanceId, limit, leaseMs],
      );
      return rows.map(toRow);
    },
    /** Settles a claimed row; false when the claim was lost (lease over and taken by another). */
    async settle(gatewayId: string, key: string, instanceId: string, receipt: FleetReceipt, error: string | null): Promise<boolean> {
      const { rowCount } = await pool.query(
        `UPDATE report_outbox SET state = $3, receipt = $4, api_report_id = $5, last_error = $6, claimed_by = NULL, claimed_until = NULL
         WHERE idempotency_key = $1 AND claimed_by = $2 AND state = 'pending' AND gateway_id = $7`,
        [key, instanceId, receipt.status, JSON.stringify(receipt), receipt.reportId ?? null, error, gatewayId],
      );
      return rowCount === 1;
    },
    /** Gives a claimed row back for another attempt after `delayMs`. */
    async retryLater(gatewayId: string, key: string, instanceId: string, delayMs: number, error: string): Promise<void> {
      await pool.query(
        `UPDATE report_outbox SET next_attempt_at = now() + make_interval(secs => $3::double precision / 1000), last_error = $4, claimed_by = NULL, claimed_until = NULL
         WHERE idempotency_key = $1 AND claimed_by = $2 AND state = 'pending' AND gateway_id = $5`,
        [key, instanceId, delayMs, error, gatewayId],
      );
    },
    async get(
      gatewayId: string,
      key: string,
    ): Promise<(OutboxRow & { apiReportId: string | null; lastError: string | null; claimedBy: string | null }) | undefined> {
      const { rows } = await pool.query<Raw & { api_report_id: string | null; last_error: string | null; claimed_by: string | null }>(
        `SELECT ${columns}, api_report_id, last_error, claimed_by FROM report_outbox WHERE gateway_id = $1 AND idempotency_key = $2`,
        [gatewayId, key],
      );
      const r = rows[0];
      return r ? { ...toRow(r), apiReportId: r.api_report_id, lastError: r.last_error, claimedBy: r.claimed_by } : undefined;
    },
  };
}

export type OutboxStore = ReturnType<typeof createOutboxStore>;

/** The reports not uploaded yet, on the database's clock like the outbox's own times. */
export interface PendingReports {
  pending: number;
  oldestPendingAgeS: number | null;
  nearestDeadline: string | null;
  /** The nearest month-end deadline is as close as a gateway's own outbox warns at, or past. */
  deadlineNear: boolean;
}

export async function pendingReports(db: Pick<pg.Pool, 'query'>): Promise<PendingReports> {
  const { rows } = await db.query<{ pending: string; age_s: number | null; deadline: Date | null; deadline_in_s: number | null }>(
    `SELECT count(*) AS pending, EXTRACT(EPOCH FROM now() - min(created_at))::double precision AS age_s,
       min(deadline_at) AS deadline, EXTRACT(EPOCH FROM min(deadline_at) - now())::double precision AS deadline_in_s
     FROM report_outbox WHERE state = 'pending'`,
  );
  const r = rows[0];
  return {
    pending: Number(r?.pending ?? 0),
    oldestPendingAgeS: r?.age_s == null ? null : Math.round(r.age_s),
    nearestDeadline: r?.deadline ? r.deadline.toISOString() : null,
    deadlineNear: r?.deadline_in_s != null && r.deadline_in_s * 1000 < reportDeadlineWarningMs,
  };
}
