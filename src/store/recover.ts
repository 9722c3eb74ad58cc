/**
 * The daemon's open: a database that is damaged (unreadable, or failing `PRAGMA quick_check`) is
 * moved aside as `<file>.corrupt.<time>` with its -wal/-shm files and a new one is created, so a
 * damaged SD card costs the history, not hot water for good (an exit would restart into the same
 * file forever). The loss is logged as STORE_CORRUPT and returned for the status.
 */
import { existsSync, renameSync } from 'node:fs';
import { resolve } from 'node:path';
import { isWattshiftError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import { sqliteCodeOf } from './errors.js';
import { openStore, type OpenStoreOptions } from './open-store.js';
import type { Store } from './types.js';

export interface CorruptionRecovery {
  /** Where the damaged file now is. */
  movedTo: string;
  atMs: number;
  reason: string;
}

/** Whether an open or read failed because the file is damaged (not because of the disk or a lock). */
export function isCorruption(err: unknown): boolean {
  for (let e: unknown = err; e !== undefined && e !== null; e = (e as { cause?: unknown }).cause) {
    const code = sqliteCodeOf(e) ?? (isWattshiftError(e) ? e.details?.['sqliteCode'] : undefined);
    if (typeof code === 'string' && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB')) return true;
  }
  return false;
}

/** Opens the daemon's database, replacing a damaged one (see the file comment). */
export function openStoreRecovering(options: OpenStoreOptions & { clock: Clock; logger: Logger }): {
  store: Store;
  recovery: CorruptionRecovery | null;
} {
  const log = options.logger.child({ component: 'store' });
  let reason: string;
  try {
    const store = openStore(options);
    const check = checkQuick(store);
    if (check.ok) return { store, recovery: null };
    store.close();
    reason = `quick_check: ${check.messages.slice(0, 3).join('; ')}`;
  } catch (err) {
    if (!isCorruption(err)) throw err;
    reason = err instanceof Error ? err.message : String(err);
  }
  const path = resolve(options.path);
  const nowMs = options.clock.nowMs();
  const movedTo = `${path}.corrupt.${new Date(nowMs).toISOString().replace(/[:.]/g, '-')}`;
  for (const suffix of ['', '-wal', '-shm']) if (existsSync(path + suffix)) renameSync(path + suffix, movedTo + suffix);
  log.error(
    { code: 'STORE_CORRUPT', movedTo, reason },
    'the database was damaged: moved aside and a new one created; its history and registration are lost (run `wattshift register` again)',
  );
  return { store: openStore(options), recovery: { movedTo, atMs: nowMs, reason } };
}

function checkQuick(store: Store): { ok: boolean; messages: string[] } {
  try {
    return store.integrityCheck('quick');
  } catch (err) {
    if (isCorruption(err)) return { ok: false, messages: [err instanceof Error ? err.message : String(err)] };
    throw err;
  }
}
