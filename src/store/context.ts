import type Database from 'better-sqlite3';
import type { Clock } from '../ports.js';

/** What each table module gets from `openStore`. */
export interface StoreContext {
  db: Database.Database;
  clock: Clock;
  /**
   * Runs `fn` in a transaction committed with synchronous=FULL (the WAL is fsynced at commit), or
   * inside the caller's transaction when there is one. Used for event and outbox writes.
   */
  durable<T>(fn: () => T): T;
  /** Runs `fn` in an ordinary transaction (synchronous=NORMAL), or inside the caller's one. */
  tx<T>(fn: () => T): T;
}
