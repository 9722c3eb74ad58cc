/**
 * The hub's PostgreSQL schema as numbered migrations. Each runs once, in its own transaction,
 * recorded in `schema_migrations`; an advisory lock keeps instances that start together from
 * running one twice. Never edit a released migration: add the next one.
 */
import type pg from 'pg';
import { WattshiftError } from '../errors.js';
import type { Migration } from '../store/migrations.js';

/** Numbered like the gateway's SQLite migrations (src/store/migrations.ts), applied the PostgreSQL way. */
export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'fleet registry, events and report outbox',
    sql: `
      CREATE TABLE gateways (
        gateway_id text PRIMARY KEY,
        broker_username text NOT NULL UNIQUE,
        broker_password_hash text,
        price_area text,
        revoked boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE locations (
        location_id text PRIMARY KEY,
        user_id text NOT NULL,
        price_area text NOT NULL,
        meter_point_id text,
        gateway_id text NOT NULL REFERENCES gateways (gateway_id)
      );
      CREATE INDEX locations_gateway ON locations (gateway_id);
      CREATE INDEX locations_user ON locations (user_id);
      CREATE TABLE resources (
        resource_id text PRIMARY KEY,
        location_id text NOT NULL REFERENCES locations (location_id) ON DELETE CASCADE
      );
      CREATE TABLE events (
        event_id text PRIMARY KEY,
        raw jsonb NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now(),
        ends_at timestamptz,
        target_location_ids text[] NOT NULL,
        published_at timestamptz
      );
      CREATE INDEX events_targets ON events USING gin (target_location_ids);
      CREATE TABLE report_outbox (
        gateway_id text NOT NULL,
        idempotency_key text NOT NULL,
        body jsonb NOT NULL,
        state text NOT NULL CHECK (state IN ('pending', 'accepted', 'rejected')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        claimed_by text,
        claimed_until timestamptz,
        api_report_id text,
        last_error text,
        receipt jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (gateway_id, idempotency_key)
      );
      CREATE INDEX report_outbox_due ON report_outbox (next_attempt_at) WHERE state = 'pending';
    `,
  },
  {
    version: 2,
    name: 'report deadlines',
    sql: `
      ALTER TABLE report_outbox ADD COLUMN deadline_at timestamptz;
      CREATE INDEX report_outbox_deadline ON report_outbox (deadline_at) WHERE state = 'pending';
    `,
  },
];

/** Any number that is the same in every instance: the key of the migration advisory lock. */
const migrationLockKey = 0x77617474;

/** Brings the database to the newest schema; refuses one written by a newer hub. */
export async function migrate(pool: pg.Pool): Promise<number[]> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [migrationLockKey]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    const newest = migrations.at(-1)?.version ?? 0;
    const unknown = [...done].filter((v) => v > newest);
    if (unknown.length > 0) {
      throw new WattshiftError('STORE_SCHEMA_NEWER', `the hub database has migrations ${unknown.join(', ')} this hub does not know`);
    }
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new WattshiftError('STORE_FAILED', `hub migration ${m.version} (${m.name}) failed`, { cause: err });
      }
      applied.push(m.version);
    }
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [migrationLockKey]).catch(() => undefined);
    client.release();
  }
}
