/**
 * Prices for every slot (the upstream's forecast and advice, Nord Pool's day-ahead prices when
 * enabled) and the realised bill: closed hours priced a few minutes after metering writes them.
 */
import { providing, type Part } from '../lifecycle.js';
import { startPriceRefresh, type PriceData } from '../jobs/price-refresh.js';
import { createNordPoolClient } from '../prices/nordpool-client.js';
import { createBilling, type Billing } from '../jobs/billing.js';
import type { Store } from '../store/types.js';
import type { Upstream } from '../upstream/index.js';
import type { HomeTracker } from '../jobs/home-tracker.js';
import type { Identity } from '../spark/event-normalise.js';
import { homeEventOf } from '../jobs/event-actions.js';
import { startLoop } from '../timing/loop.js';
import { jobHealth, type AppContext } from './context.js';
import type { HomeParts } from './home.js';

export type PriceRefresh = ReturnType<typeof startPriceRefresh>;

export function pricesModule(ctx: AppContext, needs: { upstream: Upstream; tracker: HomeTracker }): Part<PriceRefresh> {
  const { config, deps, clock, bus } = ctx;
  return providing(
    'prices',
    () => {
      const { tracker } = needs;
      const guardStore = ctx.storeHealth.guard;
      const savedPrices = tracker.loadPrices();
      const prices = startPriceRefresh({
        source: needs.upstream.prices,
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
          // The planner starts later: it listens on the bus.
          bus.emit('replanWanted', { reason: 'prices' });
          // Kept for a restart only: a full disk must not stop prices reaching the planner.
          guardStore('prices', () => tracker.savePrices(data));
        },
      });
      // An event with new prices (the intake starts earlier) wakes the refresh.
      const off = bus.on('pricesChanged', () => prices.wake());
      const made = {
        stop: async () => {
          off();
          await prices.stop();
        },
      };
      return { made, provides: prices };
    },
    (prices) => [jobHealth('prices', prices?.health())],
  );
}

export interface BillingNeeds extends Pick<HomeParts, 'metering' | 'subjects'> {
  store: Store;
  me: Identity;
  prices: PriceRefresh;
}

export function billingModule(ctx: AppContext, needs: BillingNeeds): Part<Billing> {
  const { config, deps, clock, log } = ctx;
  return providing(
    'billing',
    () => {
      const { store: s, prices, me, metering } = needs;
      const billing = createBilling({
        config,
        store: s,
        subjects: needs.subjects.map((m) => m.subject),
        prices: () => prices.data(),
        events: (fromMs, toMs) =>
          s.listEvents({ fromMs, toMs, states: ['received', 'active', 'reportQueued', 'done', 'failed'] }).flatMap((row) => {
            const e = homeEventOf(row, me);
            return e && e.relevant ? [e] : [];
          }),
        hourWrites: () => metering.hourWrites(),
        logger: deps.logger,
      });
      const loop = startLoop({
        name: 'billing',
        clock,
        logger: log,
        errorDelayMs: 5 * 60_000,
        tick: async () => {
          billing.tick(clock.nowMs());
          return 5 * 60_000;
        },
      });
      return { made: loop, provides: billing };
    },
    (billing) => [jobHealth('billing', billing?.health())],
  );
}
