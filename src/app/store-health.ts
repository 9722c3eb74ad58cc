/**
 * The store's health, apart from the store: best-effort writes of small state (a store failure,
 * such as a full disk, is logged once per kind and never stops control, planning or pricing), an
 * event the store could not take, and a damaged database replaced at start or found at night.
 */
import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { PartHealth } from '../lifecycle.js';
import { codeOf } from '../errors.js';

type Problem = { code: string; message: string; atMs: number };

export interface StoreHealth {
  /** Runs a write; a failure is logged once per `what` and gives undefined. */
  guard<T>(what: string, write: () => T): T | undefined;
  /** The last event the store could not take (null once one is stored again). */
  eventFailure(problem: Problem | null): void;
  /** A damaged database: replaced at start (shown, not failing) or found by the nightly check (failing). */
  corrupt(problem: Problem & { failing?: boolean }): void;
  /** Failing while writes fail or corruption was found, else showing a past recovery. */
  health(): PartHealth;
}

export function createStoreHealth(deps: { log: Logger; clock: Clock }): StoreHealth {
  const { log, clock } = deps;
  const storeFaults = new Set<string>();
  let storeFailure: Problem | null = null;
  let storeCorrupt: (Problem & { failing?: boolean }) | null = null;
  return {
    guard<T>(what: string, write: () => T): T | undefined {
      try {
        const result = write();
        if (storeFaults.delete(what)) log.info({ what }, 'state writes work again');
        return result;
      } catch (err) {
        if (!storeFaults.has(what)) log.warn({ code: codeOf(err, 'STORE_FAILED'), what, err }, 'state not stored; going on');
        storeFaults.add(what);
        return undefined;
      }
    },
    eventFailure: (problem) => void (storeFailure = problem),
    corrupt: (problem) => void (storeCorrupt = problem),
    health() {
      const faults =
        storeFaults.size > 0 ? { code: 'STORE_FAILED', message: `not stored: ${[...storeFaults].join(', ')}`, atMs: clock.nowMs() } : null;
      const corrupt = storeCorrupt ? { code: storeCorrupt.code, message: storeCorrupt.message, atMs: storeCorrupt.atMs } : null;
      const shown = storeFailure ?? faults ?? corrupt;
      return {
        name: 'store',
        ok: storeFailure === null && faults === null && storeCorrupt?.failing !== true,
        ...(shown ? { lastError: shown } : {}),
      };
    },
  };
}
