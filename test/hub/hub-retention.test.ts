/** The hub's retention on a real PostgreSQL: old settled rows go, pending ones and their events stay. */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/hub/migrations.js';
import { pruneHub } from '../../src/hub/retention.js';
import { postgresAvailable, startPostgres, type PostgresCluster } from '../helpers/postgres.js';

describe.skipIf(!postgresAvailable())('hub retention', () => {
  let cluster: PostgresCluster;
  let pool: pg.Pool;

  beforeAll(async () => {
    cluster = await startPostgres();
    pool = new pg.Pool({ connectionString: await cluster.createDatabase('retention'), max: 2 });
    await migrate(pool);
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await cluster?.stop();
  });

  it('deletes settled reports and ended events older than keepDays, never a pending report or its event', async () => {
    const event = (id: string, endedDaysAgo: number) =>
      pool.query(
        `INSERT INTO events (event_id, raw, received_at, ends_at, target_location_ids)
       VALUES ($1, '{}', now() - make_interval(days => $2 + 1), now() - make_interval(days => $2), '{}')`,
        [id, endedDaysAgo],
      );
    const report = (key: string, eventId: string, state: string, daysAgo: number) =>
      pool.query(
        `INSERT INTO report_outbox (gateway_id, idempotency_key, body, state, created_at)
       VALUES ('gw', $1, $2, $3, now() - make_interval(days => $4))`,
        [key, JSON.stringify({ eventId, payloads: [] }), state, daysAgo],
      );
    await event('old', 120);
    await event('old-with-pending', 120);
    await event('recent', 10);
    await report('old-accepted', 'old', 'accepted', 119);
    await report('old-rejected', 'old', 'rejected', 119);
    await report('old-pending', 'old-with-pending', 'pending', 119);
    await report('recent-accepted', 'recent', 'accepted', 9);

    expect(await pruneHub(pool, 90)).toEqual({ reports: 2, events: 1 });
    const left = async (table: string, column: string) =>
      (await pool.query<{ id: string }>(`SELECT ${column} AS id FROM ${table} ORDER BY 1`)).rows.map((r) => r.id);
    expect(await left('report_outbox', 'idempotency_key')).toEqual(['old-pending', 'recent-accepted']);
    expect(await left('events', 'event_id')).toEqual(['old-with-pending', 'recent']);
    expect(await pruneHub(pool, 90)).toEqual({ reports: 0, events: 0 });
  });
});
