/**
 * The hub instance's health, for `GET /healthz` on its HTTP server: PostgreSQL answers, the broker
 * connection is up, the event poll completes, and how far the report outbox is behind (pending
 * rows and the age of the oldest, on the database's clock like the outbox's own times). Unhealthy
 * (503) when the database or the broker is not there, or the event poll is stuck (an event the
 * API delivers only to a poll would never reach its homes): a load balancer then sends the API's
 * webhook calls elsewhere, and the operator's monitoring sees it. A
 * backlog alone is reported, not unhealthy: another instance would not upload any faster. The
 * nearest month-end deadline of a pending report is reported too, with `deadlineNear` when it is
 * as close as a gateway's outbox warns at (or past): reports the programme may no longer pay for.
 */
import pg from 'pg';
import { rateLimitedWarn } from '../log-limit.js';
import type { Logger } from '../log.js';
import type { EventPollStatus } from './event-poll.js';
import { pendingReports, type PendingReports } from './outbox-store.js';

export interface HubHealth {
  ok: boolean;
  database: { ok: boolean; error?: string };
  broker: { ok: boolean };
  events: { ok: boolean; lastPollAt: string | null; error?: string };
  outbox: PendingReports | null;
}

export interface HubHealthCheck {
  check(): Promise<HubHealth>;
  /** Ends the check's own database connection. */
  stop(): Promise<void>;
}

/** A database that does not connect and answer within this is as good as down for a health check. */
const databaseTimeoutMs = 2_000;

export function createHubHealth(deps: {
  databaseUrl: string;
  brokerConnected: () => boolean;
  eventPoll: () => EventPollStatus;
  logger: Logger;
}): HubHealthCheck {
  const warn = rateLimitedWarn(deps.logger.child({ component: 'hub-health' }), { perWindow: 1 });
  // Its own connection, bounded by node-postgres's timeouts: a check neither waits behind the
  // hub's busy pool nor hangs on a database that does not answer.
  const pool = new pg.Pool({
    connectionString: deps.databaseUrl,
    max: 1,
    connectionTimeoutMillis: databaseTimeoutMs,
    query_timeout: databaseTimeoutMs,
  });
  // A lost idle connection must not crash the process; the next check reports the database.
  pool.on('error', () => undefined);
  return {
    async check() {
      let database: HubHealth['database'] = { ok: true };
      let outbox: HubHealth['outbox'] = null;
      try {
        outbox = await pendingReports(pool);
      } catch (err) {
        database = { ok: false, error: err instanceof Error ? err.message : String(err) };
        warn('STORE_FAILED', { err: database.error }, 'health check: the hub database does not answer');
      }
      const broker = { ok: deps.brokerConnected() };
      if (!broker.ok) warn('MQTT_UNAVAILABLE', {}, 'health check: the hub is not connected to the broker');
      const poll = deps.eventPoll();
      const events: HubHealth['events'] = {
        ok: poll.ok,
        lastPollAt: poll.lastPollAtMs === null ? null : new Date(poll.lastPollAtMs).toISOString(),
        ...(poll.error !== undefined ? { error: poll.error } : {}),
      };
      if (!events.ok)
        warn(
          'HUB_EVENT_POLL_STUCK',
          { lastPollAt: events.lastPollAt, err: poll.error },
          'health check: the event poll has not completed for too long',
        );
      return { ok: database.ok && broker.ok && events.ok, database, broker, events, outbox };
    },
    stop: () => pool.end(),
  };
}
