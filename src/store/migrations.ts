/**
 * The schema, as ordered migrations. Migration N brings the database to `PRAGMA user_version` N;
 * each runs in one transaction together with the version bump. Never edit a released migration:
 * append a new one. The SQL lives in TypeScript strings so it is found the same way from `src`
 * (tsx, vitest) and from `dist` (after tsc).
 *
 * `auto_vacuum = INCREMENTAL` must be set before the first table exists, so `openStore` sets it
 * on an empty database before running migration 1 (it cannot run inside a transaction).
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
CREATE TABLE events (
  event_id          TEXT PRIMARY KEY NOT NULL,
  notification_type TEXT,
  payload_type      TEXT,
  created_at_ms     INTEGER NOT NULL,
  received_at_ms    INTEGER NOT NULL,
  start_ms          INTEGER,
  end_ms            INTEGER,
  location_ids      TEXT NOT NULL DEFAULT '[]',
  resource_ids      TEXT NOT NULL DEFAULT '[]',
  raw_json          TEXT NOT NULL,
  state             TEXT NOT NULL DEFAULT 'received'
                    CHECK (state IN ('received', 'ignored', 'active', 'reportQueued', 'done', 'failed')),
  state_detail      TEXT,
  updated_at_ms     INTEGER NOT NULL
) STRICT;
CREATE INDEX events_span ON events (coalesce(start_ms, created_at_ms));

CREATE TABLE hourly_energy (
  subject       TEXT NOT NULL,
  hour_start_ms INTEGER NOT NULL,
  kwh           REAL NOT NULL,
  quality       TEXT NOT NULL CHECK (quality IN ('measured', 'estimated', 'partial', 'gap')),
  samples       INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  PRIMARY KEY (subject, hour_start_ms)
) WITHOUT ROWID, STRICT;
-- No index on hour_start_ms alone: only the daily prune would use it, and it cost ~50 bytes
-- per row (40 % of the table); a scan of one year of rows takes milliseconds.

CREATE TABLE meter_checkpoints (
  device_id TEXT PRIMARY KEY NOT NULL,
  value_kwh REAL NOT NULL,
  at_ms     INTEGER NOT NULL
) WITHOUT ROWID, STRICT;

CREATE TABLE plans (
  id               INTEGER PRIMARY KEY,
  created_at_ms    INTEGER NOT NULL,
  horizon_start_ms INTEGER NOT NULL,
  horizon_end_ms   INTEGER NOT NULL,
  json             TEXT NOT NULL
) STRICT;

CREATE TABLE report_outbox (
  id              INTEGER PRIMARY KEY,
  idempotency_key TEXT NOT NULL UNIQUE,
  event_id        TEXT NOT NULL REFERENCES events (event_id),
  kind            TEXT NOT NULL CHECK (kind IN ('usage', 'lpcAck')),
  body_json       TEXT NOT NULL,
  state           TEXT NOT NULL DEFAULT 'pending'
                  CHECK (state IN ('pending', 'sending', 'accepted', 'rejected')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT,
  next_attempt_ms INTEGER NOT NULL,
  deadline_ms     INTEGER,
  remote_id       TEXT,
  created_at_ms   INTEGER NOT NULL,
  updated_at_ms   INTEGER NOT NULL
) STRICT;
CREATE INDEX report_outbox_due ON report_outbox (state, next_attempt_ms);
CREATE INDEX report_outbox_event ON report_outbox (event_id);

CREATE TABLE kv_state (
  key           TEXT PRIMARY KEY NOT NULL,
  value_json    TEXT NOT NULL,
  updated_at_ms INTEGER NOT NULL
) WITHOUT ROWID, STRICT;
`,
  },
  {
    version: 2,
    name: 'hourly cost',
    // What each metered hour cost, priced when it was metered with the prices and tariff then in
    // force (money for the hour's energy, excluding VAT except vat and total).
    sql: `
CREATE TABLE hourly_cost (
  subject       TEXT NOT NULL,
  hour_start_ms INTEGER NOT NULL,
  kwh           REAL NOT NULL,
  currency      TEXT NOT NULL,
  spot_per_kwh  REAL NOT NULL,
  source        TEXT NOT NULL,
  grid_period   TEXT NOT NULL,
  energy        REAL NOT NULL,
  grid_fee      REAL NOT NULL,
  tax           REAL NOT NULL,
  subsidy       REAL NOT NULL,
  vat           REAL NOT NULL,
  delta         REAL NOT NULL,
  total         REAL NOT NULL,
  priced_at_ms  INTEGER NOT NULL,
  PRIMARY KEY (subject, hour_start_ms)
) WITHOUT ROWID, STRICT;
`,
  },
  {
    version: 3,
    name: 'hourly cost baseline and capacity share',
    // What the hour would have cost without wattshift (null: no stored plan covered it, or not the
    // main meter) and the hour's share of the month's capacity fee (excluding VAT; 0 until known).
    sql: `
ALTER TABLE hourly_cost ADD COLUMN baseline_kwh REAL;
ALTER TABLE hourly_cost ADD COLUMN baseline_total REAL;
ALTER TABLE hourly_cost ADD COLUMN capacity_share REAL NOT NULL DEFAULT 0;
`,
  },
  {
    version: 4,
    name: 'plans stored deflated',
    // A stored plan's JSON (some 22 kB, most of it repeated keys and reasons) is written deflated as
    // a BLOB, a few kB, to spare the SD card; rows stored before stay JSON text until they expire.
    sql: `
CREATE TABLE plans_v4 (
  id               INTEGER PRIMARY KEY,
  created_at_ms    INTEGER NOT NULL,
  horizon_start_ms INTEGER NOT NULL,
  horizon_end_ms   INTEGER NOT NULL,
  json             ANY NOT NULL
) STRICT;
INSERT INTO plans_v4 SELECT id, created_at_ms, horizon_start_ms, horizon_end_ms, json FROM plans;
DROP TABLE plans;
ALTER TABLE plans_v4 RENAME TO plans;
`,
  },
];

export const latestSchemaVersion: number = migrations.reduce((v, m) => Math.max(v, m.version), 0);
