/**
 * Forecast advice per price area: fetched once per area the registry's locations use, on a
 * node-cron schedule (and once at start), and published retained to `advice(area)`, so a gateway
 * that connects gets the latest at once. An area that fails keeps its last retained message.
 */
import { fleetWireVersion, type FleetAdvice, type fleetTopics } from '../fleet/wire.js';
import { startCronJob, type CronJob, type CronSpec } from '../jobs/cron.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import type { ForecastClient } from '../spark/forecast-client.js';
import { isWattshiftError } from '../errors.js';
import type { Publish } from './event-fanout.js';
import type { RegistryStore } from './registry-store.js';

export interface AdvicePublisher {
  /** Fetches and publishes every area in use; returns the areas published. */
  publishAll(): Promise<string[]>;
  stop(): Promise<void>;
}

export function startAdvicePublisher(deps: {
  registry: RegistryStore;
  forecast: ForecastClient;
  topics: ReturnType<typeof fleetTopics>;
  publish: Publish;
  spec: CronSpec;
  query: { currency?: 'EUR' | 'NOK' | 'SEK' | 'DKK'; segmentSize?: number };
  clock: Clock;
  logger: Logger;
}): AdvicePublisher {
  const log = deps.logger.child({ component: 'hub-advice' });
  const publishAll = async (): Promise<string[]> => {
    const done: string[] = [];
    for (const area of await deps.registry.priceAreas()) {
      try {
        const advice = await deps.forecast.advice({ area, ...deps.query });
        const message: FleetAdvice = { v: fleetWireVersion, fetchedAtMs: deps.clock.nowMs(), advice };
        await deps.publish(deps.topics.advice(area), JSON.stringify(message), { retain: true });
        done.push(area);
      } catch (err) {
        log.warn({ err, code: isWattshiftError(err) ? err.code : 'INTERNAL', area }, 'forecast advice not refreshed; the last one stays retained');
      }
    }
    log.info({ areas: done }, 'forecast advice published');
    return done;
  };
  const job: CronJob = startCronJob({ name: 'hub-advice', spec: deps.spec, clock: deps.clock, logger: deps.logger, run: async () => void (await publishAll()) });
  void publishAll().catch((err: unknown) => log.error({ err, code: 'STORE_FAILED' }, 'price areas could not be read'));
  return { publishAll, stop: () => job.stop() };
}
