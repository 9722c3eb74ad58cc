/** The SQLite store, opened (and replaced when damaged) first and closed last. */
import type { Part } from '../lifecycle.js';
import type { Store } from '../store/types.js';
import type { Identity } from '../spark/event-normalise.js';
import { openStoreRecovering } from '../store/recover.js';
import { identityOf, loadRegistration } from '../identity.js';
import type { AppContext } from './context.js';

export interface StoreParts {
  store: Store;
  /** When the store was opened (and quick-checked), clock ms. */
  openedMs: number;
  /** The ids this home has at the API: read once when the store opens (a restart picks up a new registration). */
  me: Identity;
}

export function storeModule(ctx: AppContext): Part<StoreParts> {
  const { config, deps, clock, log } = ctx;
  let opened: Store | undefined;
  return {
    name: 'store',
    async start() {
      const result = openStoreRecovering({ path: config.storage.path, logger: deps.logger, clock });
      const openedMs = clock.nowMs();
      const s = result.store;
      opened = s;
      if (result.recovery) {
        const r = result.recovery;
        ctx.storeHealth.corrupt({
          code: 'STORE_CORRUPT',
          message: `a damaged database was moved to ${r.movedTo} and a new one created; run \`wattshift register\` again`,
          atMs: r.atMs,
        });
      }
      if (s.interruptedAtOpen.length > 0) log.warn({ reports: s.interruptedAtOpen.length }, 'reports interrupted by the last stop will be resent');
      // `wattshift register` runs before the service starts; a restart picks up a new registration.
      return { store: s, openedMs, me: identityOf(config, loadRegistration(s)) };
    },
    stop: async () => opened?.close(),
    health: () => [ctx.storeHealth.health()],
  };
}
