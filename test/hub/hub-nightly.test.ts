/**
 * The hub's scheduled jobs with PostgreSQL refusing the hub: the nightly retention logs
 * STORE_FAILED and deletes at the next night, the six-hourly deadline check logs STORE_FAILED
 * and warns at its next run once the database answers; the outbox and the price areas' advice
 * meanwhile log STORE_FAILED warnings, not bugs. The hub instance runs on a manual clock
 * (its schedules); the database's own clock stays real.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { startHub, type Hub } from '../../src/hub/hub.js';
import { mosquittoAvailable } from '../helpers/mosquitto.js';
import { postgresAvailable } from '../helpers/postgres.js';
import { eventually, startFleetWorld, type FleetWorld, type LogLine } from './fleet-world.js';

const minuteMs = 60_000;

describe.skipIf(!postgresAvailable() || !mosquittoAvailable())('hub schedules with the database down', () => {
  let world: FleetWorld;
  let hub: Hub;
  let admin: pg.Client;
  // 02:00 UTC: the retention runs at 03:23 UTC, the deadline check every six hours (UTC).
  const clock = new ManualClock(Date.UTC(2026, 0, 14, 2, 0));
  const lines = (from: number, predicate: (l: LogLine) => boolean): LogLine[] =>
    world.logs.slice(from).filter((l) => l['hub'] === 'hub-nightly' && predicate(l));
  const databaseDown = async (): Promise<void> => {
    await admin.query('ALTER DATABASE hub ALLOW_CONNECTIONS false');
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'hub'");
  };
  const databaseUp = () => admin.query('ALTER DATABASE hub ALLOW_CONNECTIONS true');
  /** Advances the clock to `ms` in steps, letting the hub's jobs run between them. */
  const advanceTo = async (ms: number): Promise<void> => {
    while (clock.nowMs() < ms) {
      await clock.advance(Math.min(10 * minuteMs, ms - clock.nowMs()));
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  beforeAll(async () => {
    world = await startFleetWorld();
    // The test's own pool loses its connections too when the hub's are ended; it reconnects.
    world.pool.on('error', () => undefined);
    admin = new pg.Client({ connectionString: world.pg.url() });
    await admin.connect();
    hub = await startHub(world.hubConfig({ instanceId: 'hub-nightly' }), { clock, logger: world.logger.child({ hub: 'hub-nightly' }) });
  }, 60_000);
  afterAll(async () => {
    await databaseUp().catch(() => undefined);
    await hub?.stop();
    await admin?.end();
    await world?.stop();
  });

  it('the nightly retention with the database refusing: STORE_FAILED logged, the rows deleted at the next night', async () => {
    await world.pool.query(
      `INSERT INTO events (event_id, raw, received_at, ends_at, target_location_ids) VALUES ('ev-old', '{}', now() - interval '121 days', now() - interval '120 days', '{}')`,
    );
    await world.pool.query(
      `INSERT INTO report_outbox (gateway_id, idempotency_key, body, state, created_at) VALUES ('gw-a', 'k-old', '{"eventId":"ev-old","payloads":[]}', 'accepted', now() - interval '120 days')`,
    );
    const from = world.logs.length;
    await databaseDown();
    try {
      await advanceTo(Date.UTC(2026, 0, 14, 3, 30));
      const failed = await eventually(async () => lines(from, (l) => l.msg === 'deleting old rows failed; tried again at the next run')[0]);
      expect(failed).toMatchObject({ level: 'warn', code: 'STORE_FAILED', component: 'hub' });
      expect(lines(from, (l) => l.msg === 'old settled reports and ended events deleted')).toEqual([]);
      // The other jobs that met the refusing database meanwhile say so with its code, as
      // warnings (they go on): none is logged as a bug (INTERNAL).
      expect(lines(from, (l) => l.code === 'STORE_FAILED' && l.component === 'hub-outbox')[0]).toMatchObject({ level: 'warn' });
      expect(lines(from, (l) => l.code === 'STORE_FAILED' && l.component === 'hub-advice')[0]).toMatchObject({ level: 'warn' });
      expect(lines(from, (l) => l.code === 'INTERNAL' || l.level === 'error')).toEqual([]);
    } finally {
      await databaseUp();
    }
    expect((await world.pool.query("SELECT 1 FROM report_outbox WHERE idempotency_key = 'k-old'")).rowCount).toBe(1);

    await advanceTo(Date.UTC(2026, 0, 15, 3, 30));
    const done = await eventually(async () => lines(from, (l) => l.msg === 'old settled reports and ended events deleted')[0]);
    expect(done).toMatchObject({ reports: 1, events: 1, keepDays: 90 });
    expect((await world.pool.query("SELECT 1 FROM report_outbox WHERE idempotency_key = 'k-old'")).rowCount).toBe(0);
    expect((await world.pool.query("SELECT 1 FROM events WHERE event_id = 'ev-old'")).rowCount).toBe(0);
  });

  it('the deadline check with the database refusing: STORE_FAILED logged, no crash, the warning at the next run once it answers', async () => {
    // A pending report whose month ended three days ago, not due for a retry (no worker takes it).
    await world.pool.query(
      `INSERT INTO report_outbox (gateway_id, idempotency_key, body, state, next_attempt_at, deadline_at)
       VALUES ('gw-a', 'k-late', '{"eventId":"e","payloads":[]}', 'pending', now() + interval '1 day', now() - interval '3 days')`,
    );
    const warned = (from: number) => lines(from, (l) => l.code === 'REPORT_DEADLINE_NEAR');
    // Past 06:00 UTC with the database refusing: the check cannot read the outbox.
    await advanceTo(Date.UTC(2026, 0, 15, 5, 50));
    const from = world.logs.length;
    await databaseDown();
    try {
      await advanceTo(Date.UTC(2026, 0, 15, 6, 10));
      const failed = await eventually(
        async () => lines(from, (l) => l.code === 'STORE_FAILED' && l.msg === 'report deadline check failed; tried again at the next run')[0],
      );
      expect(failed.level).toBe('warn');
      await new Promise((r) => setTimeout(r, 300));
      expect(warned(from)).toEqual([]);
      expect(lines(from, (l) => l.msg === 'report-deadline failed')).toEqual([]);
    } finally {
      await databaseUp();
    }
    // The next run (12:00 UTC) reads it and says so.
    await advanceTo(Date.UTC(2026, 0, 15, 12, 10));
    const warning = await eventually(async () => warned(from)[0]);
    expect(warning).toMatchObject({ level: 'warn', pending: 1 });
    expect(Date.parse(String(warning['nearestDeadline']))).toBeLessThan(Date.now() - 2 * 86_400_000);
  });
});
