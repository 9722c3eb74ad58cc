/**
 * Prices for every slot (the upstream's forecast and advice, Nord Pool's day-ahead prices when
 * enabled) and the realised bill: closed hours priced a few minutes after metering writes them.
 */
import { moduleOf, type Module } from '../lifecycle.js';
import { startPriceRefresh, type PriceData } from '../jobs/price-refresh.js';
import { createNordPoolClient } from '../prices/nordpool-client.js';
import { createBilling } from '../jobs/billing.js';
import { homeEventOf } from '../jobs/event-actions.js';
import { startLoop } from '../timing/loop.js';
import { jobHealth, type AppContext } from './context.js';

export function pricesModule(ctx: AppContext): Module {
  const { config, deps, clock } = ctx;
  return moduleOf(
    'prices',
    () => {
      const tracker = ctx.part('tracker');
      // Callbacks reach the jobs of later modules through `late`, once those have started.
      const late = ctx.parts;
      const guardStore = ctx.storeHealth.guard;
      const savedPrices = tracker.loadPrices();
      const prices = startPriceRefresh({
        source: ctx.part('upstream').prices,
        area: config.site.priceArea,
        currency: config.site.currency,
        clock,
        logger: deps.logger,
        horizonMs: config.planner.horizonHours * 3_600_000,
        ...(savedPrices ? { initial: savedPrices } : {}),
        ...(config.prices.nordPool.enabled
          ? { nordPool: { client: createNordPoolClient(config.prices.nordPool), resolutionMinutes: config.site.slotMinutes } }
          : {}),
        onChange: (data: PriceData) => {
          late.planning?.request('prices');
          // Kept for a restart only: a full disk must not stop prices reaching the planner.
          guardStore('prices', () => tracker.savePrices(data));
        },
      });
      ctx.parts.prices = prices;
      return prices;
    },
    () => [jobHealth('prices', ctx.parts.prices?.health())],
  );
}

export function billingModule(ctx: AppContext): Module {
  const { config, deps, clock, log } = ctx;
  return moduleOf(
    'billing',
    () => {
      const s = ctx.part('store');
      const prices = ctx.part('prices');
      const me = ctx.me;
      const metering = ctx.part('metering');
      const billing = createBilling({
        config,
        store: s,
        subjects: ctx.part('subjects').map((m) => m.subject),
        prices: () => prices.data(),
        events: (fromMs, toMs) =>
          s.listEvents({ fromMs, toMs, states: ['received', 'active', 'reportQueued', 'done', 'failed'] }).flatMap((row) => {
            const e = homeEventOf(row, me);
            return e && e.relevant ? [e] : [];
          }),
        hourWrites: () => metering.hourWrites(),
        logger: deps.logger,
      });
      ctx.parts.billing = billing;
      return startLoop({
        name: 'billing',
        clock,
        logger: log,
        errorDelayMs: 5 * 60_000,
        tick: async () => {
          billing.tick(clock.nowMs());
          return 5 * 60_000;
        },
      });
    },
    () => [jobHealth('billing', ctx.parts.billing?.health())],
  );
}
