/**
 * Maintenance: the report scan every few minutes; quick_check and retention at start and nightly
 * at 03:30 local (a node-cron job).
 */
import { moduleOf, type Module } from '../lifecycle.js';
import { startLoop } from '../timing/loop.js';
import { startCronJob } from '../timing/cron.js';
import { nightlyStoreCheck } from '../jobs/nightly-check.js';
import type { AppContext } from './context.js';
import type { EventState } from './event-intake.js';
import type { StoreParts } from './store.js';

/** Retention runs at night, local time, when the home is quiet (clear of the DST change hour in Europe). */
const nightlyPruneCron = '30 3 * * *';

export function eventScanModule(ctx: AppContext, needs: { events: Pick<EventState, 'scan'> }): Module {
  const { clock, log } = ctx;
  return moduleOf('maintenance', () => {
    const { scan } = needs.events;
    return startLoop({
      name: 'maintenance',
      clock,
      logger: log,
      errorDelayMs: 5 * 60_000,
      tick: async () => {
        scan();
        return 5 * 60_000;
      },
    });
  });
}

export function nightlyCheckModule(ctx: AppContext, needs: Pick<StoreParts, 'store' | 'openedMs'>): Module {
  const { config, deps, clock } = ctx;
  return moduleOf('nightly-prune', () => {
    const { store: s, openedMs: openCheckedMs } = needs;
    const days = config.storage.retentionDays;
    const prune = startCronJob({
      name: 'nightly-prune',
      spec: { cron: nightlyPruneCron, timezone: config.site.timezone },
      clock,
      logger: deps.logger,
      run: () => {
        const now = clock.nowMs();
        const outcome = ctx.storeHealth.guard('nightly prune', () =>
          nightlyStoreCheck({
            store: s,
            nowMs: now,
            checkedRecently: now - openCheckedMs < 3_600_000,
            logger: deps.logger,
            retention: { hourlyDays: days, eventsDays: days, plansDays: 7 },
          }),
        );
        if (outcome?.check === 'corrupt') {
          ctx.storeHealth.corrupt({
            code: 'STORE_CORRUPT',
            message: `quick_check failed (${outcome.messages.slice(0, 2).join('; ')}); restart the service to replace the database`,
            atMs: now,
            failing: true,
          });
        }
      },
    });
    // Also once at start, so a daemon that is never up at night still keeps its retention.
    prune.wake();
    return prune;
  });
}
