import { accessSync, chmodSync, closeSync, constants, existsSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Database } from './sqlite.js';
import { z } from 'zod';
import { systemClock } from '../clock.js';
import { WattshiftError } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import type { Clock } from '../ports.js';
import type { StoreContext } from './context.js';
import { sqliteCodeOf, storeError } from './errors.js';
import { energyTables } from './energy.js';
import { costTables } from './costs.js';
import { eventsTable } from './events.js';
import { maintenanceOps } from './maintenance.js';
import { latestSchemaVersion, migrations } from './migrations.js';
import { outboxTable } from './outbox.js';
import { plansAndStateTables } from './plans-state.js';
import type { ReportRow, Store } from './types.js';

export interface OpenStoreOptions {
  /** The database file, or `:memory:` (for unit tests; no WAL, no file). */
  path: string;
  logger?: Logger;
  clock?: Clock;
  /** How long a write waits for a lock held by another connection; default 5000 ms. */
  busyTimeoutMs?: number;
  /**
   * Opens an existing, up-to-date database for reading only (e.g. `wattshift status` while the
   * daemon runs): nothing is created, migrated or recovered, and every write fails with
   * STORE_FAILED (SQLITE_READONLY). A read-write open would put the daemon's in-flight reports
   * back to pending.
   */
  readOnly?: boolean;
  /**
   * A ceiling on the database size (`PRAGMA max_page_count`); writes beyond it fail with
   * STORE_FAILED (SQLITE_FULL) like on a full disk. Default: no ceiling.
   */
  maxSizeBytes?: number;
}

/** Database files (and their -wal/-shm companions) hold the API ids and report bodies: owner only. */
const FILE_MODE = 0o600;
/** The WAL file is truncated back to this size after a checkpoint, to bound disk use. */
const JOURNAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;

function openFailed(path: string, why: string, cause?: unknown): WattshiftError {
  return new WattshiftError('STORE_OPEN_FAILED', `cannot open database ${path}: ${why}`, {
    cause,
    details: { path },
  });
}

/** Checks the directory and creates the file owner-only before SQLite touches it. */
function prepareFile(path: string): void {
  const dir = dirname(path);
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (err) {
    throw openFailed(path, `directory ${dir} does not exist`, err);
  }
  if (!isDir) throw openFailed(path, `${dir} is not a directory`);
  try {
    accessSync(dir, constants.W_OK);
  } catch (err) {
    throw openFailed(path, `directory ${dir} is not writable`, err);
  }
  try {
    // O_CREAT with mode 0600: a new file is never readable by others, whatever the umask.
    closeSync(openSync(path, constants.O_RDWR | constants.O_CREAT, FILE_MODE));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw openFailed(path, `cannot create or write the file (${code}; read-only directory or file?)`, err);
  }
  restrictModes(path);
}

/** Forces 0600 on the database and its -wal/-shm files (SQLite copies the database's mode). */
function restrictModes(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      if ((statSync(file).mode & 0o777) !== FILE_MODE) chmodSync(file, FILE_MODE);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw openFailed(path, `cannot chmod ${file}`, err);
    }
  }
}

function userVersion(db: Database): number {
  return z
    .number()
    .int()
    .parse(db.pragma('user_version', { simple: true }));
}

/** Refuses a database written by a newer wattshift, before changing anything in it. */
function checkNotNewer(db: Database, path: string): void {
  const current = userVersion(db);
  if (current <= latestSchemaVersion) return;
  throw new WattshiftError(
    'STORE_SCHEMA_NEWER',
    `database ${path} has schema version ${current}, but this wattshift only knows up to version ` +
      `${latestSchemaVersion}: it was written by a newer wattshift. Upgrade wattshift, or restore a backup.`,
    { details: { path, schemaVersion: current, supportedVersion: latestSchemaVersion } },
  );
}

/** Applies the migrations newer than the database's user_version, each in one transaction. */
function migrate(db: Database, log: Logger): void {
  const current = userVersion(db);
  for (const m of migrations) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    })();
    log.info({ schemaVersion: m.version, migration: m.name }, 'database migrated');
  }
}

/**
 * Opens (creating if needed) the daemon's SQLite database.
 *
 * Durability: WAL with synchronous=NORMAL, so a committed transaction survives the process being
 * killed (SIGKILL, OOM, crash) and the file stays consistent on a power cut; a power cut may only
 * undo the last few commits. That is fine for hourly energy, checkpoints, plans and state, which
 * are written again or rebuilt. Event and outbox writes (and `store.transaction`) commit with
 * synchronous=FULL instead: losing a stored event after the webhook was acked, an enqueued
 * report, or an `accepted` mark (which would re-send an accepted report) is not acceptable, and
 * they are rare enough that one fsync each costs nothing.
 */
export function openStore(options: OpenStoreOptions): Store {
  const memory = options.path === ':memory:';
  const path = memory ? options.path : resolve(options.path);
  const clock = options.clock ?? systemClock;
  const log = (options.logger ?? silentLogger()).child({ component: 'store' });
  const readOnly = options.readOnly === true && !memory;
  if (readOnly && !existsSync(path)) throw openFailed(path, 'the file does not exist');
  if (!memory && !readOnly) prepareFile(path);

  let db: Database;
  try {
    db = new Database(path, { timeout: options.busyTimeoutMs ?? 5000, readonly: readOnly, fileMustExist: readOnly });
  } catch (err) {
    throw openFailed(path, err instanceof Error ? err.message : String(err), err);
  }
  try {
    if (readOnly) checkReadable(db, path, options);
    else migrateAndConfigure(db, path, memory, options, log);
  } catch (err) {
    db.close();
    if (err instanceof WattshiftError) throw err;
    throw openFailed(path, `${err instanceof Error ? err.message : String(err)} (${sqliteCodeOf(err) ?? 'error'})`, err);
  }
  if (!memory && !readOnly) restrictModes(path);

  const inTx = <T>(fn: () => T): T => (db.inTransaction ? fn() : db.transaction(fn)());
  const ctx: StoreContext = {
    db,
    clock,
    tx: inTx,
    durable<T>(fn: () => T): T {
      if (db.inTransaction) return fn();
      db.pragma('synchronous = FULL');
      try {
        return db.transaction(fn)();
      } finally {
        db.pragma('synchronous = NORMAL');
      }
    },
  };

  const outbox = outboxTable(ctx);
  let interruptedAtOpen: readonly ReportRow[] = [];
  try {
    if (!readOnly) interruptedAtOpen = outbox.recoverInterrupted();
  } catch (err) {
    db.close();
    throw err;
  }
  if (interruptedAtOpen.length > 0) {
    log.warn(
      { reports: interruptedAtOpen.map((r) => r.idempotencyKey) },
      'reports were being sent when the process stopped; they will be sent again (at least once)',
    );
  }

  return {
    path,
    interruptedAtOpen,
    transaction<T>(fn: () => T, txOptions: { durable?: boolean } = {}): T {
      try {
        return txOptions.durable === false ? ctx.tx(fn) : ctx.durable(fn);
      } catch (err) {
        // The caller's own errors pass through unchanged; SQLite's (commit on a full disk) are wrapped.
        throw sqliteCodeOf(err) === undefined ? err : storeError('transaction', err);
      }
    },
    ...eventsTable(ctx),
    ...energyTables(ctx),
    ...costTables(ctx),
    ...plansAndStateTables(ctx),
    ...outbox,
    ...maintenanceOps(ctx, path),
    close() {
      if (db.open) db.close();
    },
  };
}

function checkReadable(db: Database, path: string, options: OpenStoreOptions): void {
  checkNotNewer(db, path);
  const version = userVersion(db);
  if (version < latestSchemaVersion) {
    throw openFailed(path, `schema version ${version} is older than ${latestSchemaVersion}; start the daemon once to migrate it`);
  }
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
}

function migrateAndConfigure(db: Database, path: string, memory: boolean, options: OpenStoreOptions, log: Logger): void {
  // Reading user_version first also fails early (SQLITE_NOTADB) on a file that is not a database.
  checkNotNewer(db, path);
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
  // auto_vacuum can only be chosen before the first table exists; with it, prune() can shrink the
  // file (incremental_vacuum) instead of only reusing free pages.
  const tables = z.number().parse(db.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table'").pluck().get());
  if (tables === 0) db.pragma('auto_vacuum = INCREMENTAL');
  if (!memory) {
    const mode = z.string().parse(db.pragma('journal_mode = WAL', { simple: true }));
    if (mode.toLowerCase() !== 'wal') throw new Error(`journal_mode is ${mode}, not wal`);
  }
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  // The page cache is capped at 512 KiB (SQLite's default is 2 MiB): the daemon reads recent rows
  // only, and on a gateway every MiB of RSS counts.
  db.pragma('cache_size = -512');
  db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
  migrate(db, log);
  if (options.maxSizeBytes !== undefined) {
    const pageSize = z.number().parse(db.pragma('page_size', { simple: true }));
    db.pragma(`max_page_count = ${Math.max(1, Math.floor(options.maxSizeBytes / pageSize))}`);
  }
}
