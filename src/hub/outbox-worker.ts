/**
 * Uploads the outbox: claims due rows (shared with every other instance through row locks and
 * a lease), posts each through the API client and answers the gateway with a receipt. A transient
 * failure (retryable code) is tried again after an exponential backoff; the API refusing a report
 * for good settles it `rejected` with the API's reason (REPORT_REJECTED), unless it refuses a
 * re-upload as a duplicate of one it already accepted (an instance died between the upload and
 * recording it): that is settled `accepted`, as a gateway's own outbox does.
 */
import { fleetWireVersion, type FleetReceipt } from '../fleet/wire.js';
import { backoffMs } from '../timing/backoff.js';
import { isDuplicateRejection } from '../spark/report-rules.js';
import { startLoop, type LoopHandle } from '../timing/loop.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import type { SparkClient } from '../spark/client.js';
import { codeOf, isRetryable, isWattshiftError, WattshiftError } from '../errors.js';
import type { OutboxRow, OutboxStore } from './outbox-store.js';

export interface OutboxWorkerOptions {
  instanceId: string;
  /** How long a claim holds before another instance may take the row over, ms. */
  leaseMs: number;
  /** Rows claimed per round. */
  batch: number;
  /** Idle time between rounds when nothing is due, ms. */
  idleMs: number;
  retry: { baseMs: number; maxMs: number };
}

/** A database failure as the hub's own error: retryable, logged as a warning, never a bug or an API refusal. */
function storeFailed(what: string, err: unknown): WattshiftError {
  return isWattshiftError(err)
    ? err
    : new WattshiftError('STORE_FAILED', `${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}

/** Receipts of uploads the database did not record, kept so the next claim settles them without a second upload. */
const unrecordedKept = 1000;

export function startOutboxWorker(
  options: OutboxWorkerOptions,
  deps: {
    outbox: OutboxStore;
    spark: Pick<SparkClient, 'postReport'>;
    sendReceipt: (gatewayId: string, receipt: FleetReceipt) => Promise<void>;
    clock: Clock;
    logger: Logger;
  },
): LoopHandle {
  const log = deps.logger.child({ component: 'hub-outbox' });
  const unrecorded = new Map<string, FleetReceipt>();
  const rowKey = (row: OutboxRow): string => `${row.gatewayId}\u0000${row.idempotencyKey}`;
  const settle = async (row: OutboxRow, receipt: FleetReceipt, error: string | null): Promise<void> => {
    let settled: boolean;
    try {
      settled = await deps.outbox.settle(row.gatewayId, row.idempotencyKey, options.instanceId, receipt, error);
    } catch (err) {
      // The API has it (or refused it for good) but the database did not record that: the row stays
      // claimed until its lease ends; when this instance claims it again it settles it from here.
      unrecorded.set(rowKey(row), receipt);
      if (unrecorded.size > unrecordedKept) unrecorded.delete(unrecorded.keys().next().value!);
      throw storeFailed(`recording the upload of ${row.idempotencyKey} failed`, err);
    }
    unrecorded.delete(rowKey(row));
    if (!settled) {
      log.warn(
        { code: 'STORE_FAILED', gatewayId: row.gatewayId, idempotencyKey: row.idempotencyKey },
        'outbox claim lost before the upload was recorded (lease too short?)',
      );
      return;
    }
    await deps
      .sendReceipt(row.gatewayId, receipt)
      .catch((err: unknown) =>
        log.warn({ err, code: 'MQTT_UNAVAILABLE', gatewayId: row.gatewayId }, 'receipt not sent; the gateway gets it when it sends the report again'),
      );
  };
  const upload = async (row: OutboxRow, signal: AbortSignal): Promise<void> => {
    const kept = unrecorded.get(rowKey(row));
    if (kept) {
      log.info(
        { gatewayId: row.gatewayId, idempotencyKey: row.idempotencyKey, status: kept.status },
        'upload recorded late (the database failed after it); not uploaded again',
      );
      return settle(row, kept, kept.status === 'rejected' ? (kept.reason ?? 'rejected') : null);
    }
    const base = { v: fleetWireVersion, idempotencyKey: row.idempotencyKey } as const;
    let res: { id: string };
    try {
      res = await deps.spark.postReport(row.body, { signal });
    } catch (err) {
      const code = codeOf(err);
      const message = err instanceof Error ? err.message : String(err);
      if (code === 'API_CONFLICT' || (row.attempts > 1 && isDuplicateRejection(err))) {
        // An earlier upload of this row got through (its instance died, or its answer was lost,
        // before it was recorded): the API holds the report. On a first upload the same answer
        // means another report holds the target, a real refusal.
        log.info(
          { gatewayId: row.gatewayId, idempotencyKey: row.idempotencyKey, attempts: row.attempts, reason: message },
          'report was already accepted by the API (an earlier upload); settled accepted',
        );
        await settle(row, { ...base, status: 'accepted', atMs: deps.clock.nowMs() }, null);
        return;
      }
      if (isRetryable(err) || code === 'AUTH_REJECTED') {
        const delayMs = backoffMs(row.attempts, options.retry);
        log.warn(
          { code, gatewayId: row.gatewayId, idempotencyKey: row.idempotencyKey, attempts: row.attempts, delayMs },
          'report upload failed; retried later',
        );
        await deps.outbox.retryLater(row.gatewayId, row.idempotencyKey, options.instanceId, delayMs, `${code}: ${message}`).catch((e: unknown) => {
          throw storeFailed(`recording the retry of ${row.idempotencyKey} failed`, e);
        });
        return;
      }
      log.error(
        { code: 'REPORT_REJECTED', cause: code, gatewayId: row.gatewayId, idempotencyKey: row.idempotencyKey, err: message },
        'report rejected by the API',
      );
      await settle(
        row,
        { ...base, status: 'rejected', reason: `${code}: ${message}`.slice(0, 500), atMs: deps.clock.nowMs() },
        `${code}: ${message}`,
      );
      return;
    }
    // Only the API's answer decides accepted or rejected: a database failure after it is not a refusal.
    log.info({ gatewayId: row.gatewayId, idempotencyKey: row.idempotencyKey, reportId: res.id, attempts: row.attempts }, 'report uploaded');
    await settle(row, { ...base, status: 'accepted', reportId: res.id, atMs: deps.clock.nowMs() }, null);
  };
  return startLoop({
    name: 'hub-outbox',
    clock: deps.clock,
    logger: log,
    errorDelayMs: options.idleMs,
    tick: async (signal) => {
      const rows = await deps.outbox.claim(options.instanceId, options.batch, options.leaseMs).catch((err: unknown) => {
        throw storeFailed('claiming outbox rows failed', err);
      });
      for (const row of rows) await upload(row, signal);
      return rows.length === options.batch ? 0 : options.idleMs;
    },
  });
}
