/**
 * The nightly store check before retention: `PRAGMA quick_check`, then the prune. A damaged file
 * is not pruned (deleting rows through damaged pages can spread the damage); the daemon reports it
 * and a restart moves the file aside (store/recover.ts). A check that cannot run at all (an I/O
 * error, a lock) skips tonight's prune too and is tried again the next night.
 */
import { isWattshiftError, WattshiftError } from '../errors.js';
import type { Logger } from '../log.js';
import { isCorruption } from '../store/recover.js';
import type { PruneOptions, PruneResult, Store } from '../store/types.js';

export type NightlyOutcome =
  { check: 'ok' | 'skipped'; pruned: PruneResult } | { check: 'corrupt'; messages: string[] } | { check: 'failed'; error: WattshiftError };

export function nightlyStoreCheck(deps: {
  store: Pick<Store, 'integrityCheck' | 'prune'>;
  nowMs: number;
  /** The open checked the file this long ago or less: no second full read at start. */
  checkedRecently: boolean;
  retention: PruneOptions;
  logger: Logger;
}): NightlyOutcome {
  const log = deps.logger.child({ component: 'store' });
  let check: 'ok' | 'skipped' = 'skipped';
  if (!deps.checkedRecently) {
    let result: { ok: boolean; messages: string[] };
    try {
      result = deps.store.integrityCheck('quick');
    } catch (err) {
      if (isCorruption(err)) {
        result = { ok: false, messages: [err instanceof Error ? err.message : String(err)] };
      } else {
        const error = isWattshiftError(err) ? err : new WattshiftError('STORE_FAILED', `quick_check failed: ${String(err)}`, { cause: err });
        log.warn(
          { code: error.code, err: error.message },
          'the nightly quick_check could not run; retention skipped tonight, both tried again the next night',
        );
        return { check: 'failed', error };
      }
    }
    if (!result.ok) {
      log.error(
        { code: 'STORE_CORRUPT', messages: result.messages.slice(0, 5) },
        'the database failed its quick_check; retention skipped; restart the service to move it aside',
      );
      return { check: 'corrupt', messages: result.messages };
    }
    check = 'ok';
  }
  return { check, pruned: deps.store.prune(deps.nowMs, deps.retention) };
}
