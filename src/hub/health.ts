/**
 * The hub instance's health, for `GET /healthz` on its HTTP server: PostgreSQL answers, the broker
 * connection is up, and how far the report outbox is behind (pending rows and the age of the
 * oldest, on the database's clock like the outbox's own times). Unhealthy (503) when the database
 * or the broker is not there: a load balancer then sends the API's webhook calls elsewhere. A
 * backlog alone is reported, not unhealthy: another instance would not upload any faster. The
 * nearest month-end deadline of a pending report is reported too, with `deadlineNear` when it is
 * less than two days away (or past): reports the programme may no longer pay for.
 */
import type pg from 'pg';
import { rateLimitedWarn } from '../log-limit.js';
import type { Logger } from '../log.js';

export interface HubHealth {
  ok: boolean;
  database: { ok: boolean; error?: string };
  broker: { ok: boolean };
  outbox: { pending: number; oldestPendingAgeS: number | null; nearestDeadline: string | null; deadlineNear: boolean } | null;
}

/** A pending report's deadline closer than this is near (the gateways' own outbox warns at the same distance). */
export const deadlineNearS = 2 * 86_400;

/** A database that does not answer within this is as good as down for a health check. */
const databaseTimeoutMs = 2_000;

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export function createHubHealth(deps: { pool: pg.Pool; brokerConnected: () => boolean; logger: Logger }): () => Promise<HubHealth> {
  const warn = rateLimitedWarn(deps.logger.child({ component: 'hub-health' }), { perWindow: 1 });
  return async () => {
    let database: HubHealth['database'] = { ok: true };
    let outbox: HubHealth['outbox'] = null;
    try {
      const { rows } = await withTimeout(
        deps.pool.query<{ pending: string; age_s: number | null; deadline: Date | null; deadline_in_s: number | null }>(
          `SELECT count(*) AS pending, EXTRACT(EPOCH FROM now() - min(created_at))::double precision AS age_s,
             min(deadline_at) AS deadline, EXTRACT(EPOCH FROM min(deadline_at) - now())::double precision AS deadline_in_s
           FROM report_outbox WHERE state = 'pending'`,
        ),
        databaseTimeoutMs,
      );
      const r = rows[0];
      outbox = {
        pending: Number(r?.pending ?? 0),
        oldestPendingAgeS: r?.age_s == null ? null : Math.round(r.age_s),
        nearestDeadline: r?.deadline ? r.deadline.toISOString() : null,
        deadlineNear: r?.deadline_in_s != null && r.deadline_in_s < deadlineNearS,
      };
    } catch (err) {
      database = { ok: false, error: err instanceof Error ? err.message : String(err) };
      warn('STORE_FAILED', { err: database.error }, 'health check: the hub database does not answer');
    }
    const broker = { ok: deps.brokerConnected() };
    if (!broker.ok) warn('MQTT_UNAVAILABLE', {}, 'health check: the hub is not connected to the broker');
    return { ok: database.ok && broker.ok, database, broker, outbox };
  };
}
