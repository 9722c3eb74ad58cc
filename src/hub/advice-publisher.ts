/**
 * Prices per price area: the forecast advice, the hourly forecast and the actual spot prices,
 * fetched once per area the registry's locations use, on a node-cron schedule (and once at start),
 * and published retained to `advice(area)`, so a gateway that connects gets the latest at once.
 * An area whose advice fails keeps its last retained message; a failed forecast or actual part is
 * sent as last fetched (if ever), so one bad answer does not take hourly prices from the fleet.
 */
import { fleetWireVersion, type FleetAdvice, type fleetTopics } from '../fleet/wire.js';
import { startCronJob, type CronJob, type CronSpec } from '../timing/cron.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import type { ForecastClient } from '../spark/forecast-client.js';
import { codeOf } from '../errors.js';
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
  const lastHourly = new Map<string, Pick<FleetAdvice, 'forecast' | 'actual'>>();
  const units = { currency: deps.query.currency, energyUnit: 'kWh' as const };

  /** The hourly forecast and the actual prices of `area`: fresh where the API answered, else the last ones. */
  async function hourlyParts(area: string): Promise<Pick<FleetAdvice, 'forecast' | 'actual'>> {
    const last = lastHourly.get(area) ?? {};
    const fetchPart = async <T>(part: 'forecast' | 'actual', fetch: () => Promise<T>, kept: T | undefined): Promise<T | undefined> => {
      try {
        return await fetch();
      } catch (err) {
        log.warn({ err, code: codeOf(err), area, part }, `${part} prices not refreshed; the last ones are sent`);
        return kept;
      }
    };
    const forecast = await fetchPart('forecast', () => deps.forecast.forecast({ area, ...units, segmentSize: 1 }), last.forecast);
    const actual = await fetchPart('actual', () => deps.forecast.actualPrices({ area, ...units, timeZone: 'UTC' }), last.actual);
    const parts = { ...(forecast ? { forecast } : {}), ...(actual ? { actual } : {}) };
    lastHourly.set(area, parts);
    return parts;
  }
  const publishAll = async (): Promise<string[]> => {
    const done: string[] = [];
    let areas: string[];
    try {
      areas = await deps.registry.priceAreas();
    } catch (err) {
      log.warn({ err, code: 'STORE_FAILED' }, 'price areas could not be read; the advice is fetched again at the next run');
      return done;
    }
    for (const area of areas) {
      try {
        const advice = await deps.forecast.advice({ area, ...deps.query });
        const hourly = await hourlyParts(area);
        const message: FleetAdvice = { v: fleetWireVersion, fetchedAtMs: deps.clock.nowMs(), advice, ...hourly };
        await deps.publish(deps.topics.advice(area), JSON.stringify(message), { retain: true });
        done.push(area);
      } catch (err) {
        log.warn({ err, code: codeOf(err), area }, 'forecast advice not refreshed; the last one stays retained');
      }
    }
    log.info({ areas: done }, 'forecast advice published');
    return done;
  };
  const job: CronJob = startCronJob({
    name: 'hub-advice',
    spec: deps.spec,
    clock: deps.clock,
    logger: deps.logger,
    run: async () => void (await publishAll()),
  });
  void publishAll().catch((err: unknown) => log.error({ err, code: 'INTERNAL' }, 'advice publishing failed'));
  return { publishAll, stop: () => job.stop() };
}
