/** The SQLite store, opened (and replaced when damaged) first and closed last. */
import type { Module } from '../lifecycle.js';
import { openStoreRecovering } from '../store/recover.js';
import { identityOf, loadRegistration } from '../identity.js';
import type { AppContext } from './context.js';

export function storeModule(ctx: AppContext): Module {
  const { config, deps, clock, log } = ctx;
  return {
    name: 'store',
    async start() {
      const opened = openStoreRecovering({ path: config.storage.path, logger: deps.logger, clock });
      ctx.parts.storeOpenedMs = clock.nowMs();
      const s = opened.store;
      ctx.parts.store = s;
      if (opened.recovery) {
        const r = opened.recovery;
        ctx.storeHealth.corrupt({
          code: 'STORE_CORRUPT',
          message: `a damaged database was moved to ${r.movedTo} and a new one created; run \`wattshift register\` again`,
          atMs: r.atMs,
        });
      }
      if (s.interruptedAtOpen.length > 0) log.warn({ reports: s.interruptedAtOpen.length }, 'reports interrupted by the last stop will be resent');
      // `wattshift register` runs before the service starts; a restart picks up a new registration.
      ctx.me = identityOf(config, loadRegistration(s));
    },
    stop: async () => ctx.parts.store?.close(),
    health: () => [ctx.storeHealth.health()],
  };
}
