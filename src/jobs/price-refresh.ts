import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { ForecastInput, PricePointsInput, PriceUnits } from '../core/types.js';
import type { ActualPricesResponse, Currency, ForecastResponse } from '../spark/wire.js';
import type { ForecastClient } from '../spark/forecast-client.js';
import { isWattshiftError } from '../errors.js';
import { parseApiTimeMs } from './event-normalise.js';
import { startLoop, type LoopHandle } from './loop.js';

const hourMs = 3_600_000;

/** The forecast price service, as this job uses it. */
export type PriceSource = Pick<ForecastClient, 'forecast' | 'advice' | 'actualPrices'>;

/** The last good price data, each part with the time it was fetched. */
export interface PriceData {
  forecast: { input: ForecastInput; fetchedMs: number } | null;
  advice: { input: ForecastInput; fetchedMs: number } | null;
  actual: { input: PricePointsInput; fetchedMs: number } | null;
}

function units(u: ForecastResponse['priceUnits']): PriceUnits {
  const rate = u.vat?.hasVAT ? (u.vat.rate ?? 1) : 1;
  return { currency: u.currency, energyUnit: u.energyUnit === 'MWh' ? 'MWh' : 'kWh', vatIncluded: rate };
}

/** The service's `to` is the start of a segment's last hour; detected per response from the segment size. */
export function toForecastInput(
  priceUnits: ForecastResponse['priceUnits'],
  raw: readonly { from: string; to: string; averagePrice: number }[],
  segmentSize: number,
): ForecastInput {
  const segments = raw.map((s) => ({ fromMs: parseApiTimeMs(s.from), toMs: parseApiTimeMs(s.to), averagePrice: s.averagePrice }));
  const lastHourStart = segments.length > 0 && segments.every((s) => s.toMs - s.fromMs === (segmentSize - 1) * hourMs);
  return { units: units(priceUnits), segments, toIsLastHourStart: lastHourStart };
}

export function toActualInput(r: ActualPricesResponse): PricePointsInput {
  const points = Object.entries(r.prices)
    .map(([at, price]) => ({ startMs: parseApiTimeMs(at), price }))
    .sort((a, b) => a.startMs - b.startMs);
  const step = points.length > 1 ? (points[1]!.startMs - points[0]!.startMs) / 60_000 : 60;
  return { units: units(r.priceUnits), resolutionMinutes: step === 15 ? 15 : 60, points };
}

/**
 * Refreshes the forecast, the advice and the actual spot prices hourly (and at once when asked,
 * e.g. after a new price curve). Each part keeps its last good value when a fetch fails; the
 * planner decides what is too old. `onChange` runs after any part changed.
 */
export function startPriceRefresh(deps: {
  source: PriceSource;
  area: string;
  currency: string;
  clock: Clock;
  logger: Logger;
  intervalMs?: number;
  onChange: (data: PriceData) => void;
  initial?: PriceData;
}): LoopHandle & { data(): PriceData; health(): { ok: boolean; lastError: { code: string; message: string; atMs: number } | null } } {
  const log = deps.logger.child({ component: 'prices' });
  const data: PriceData = deps.initial ?? { forecast: null, advice: null, actual: null };
  let lastError: { code: string; message: string; atMs: number } | null = null;
  const segmentSize = 1;
  const q = { area: deps.area, currency: deps.currency as Currency, energyUnit: 'kWh' as const };

  async function part<T>(name: keyof PriceData, fetch: () => Promise<T>, apply: (r: T, now: number) => void): Promise<boolean> {
    try {
      apply(await fetch(), deps.clock.nowMs());
      return true;
    } catch (err) {
      const code = isWattshiftError(err) ? err.code : 'INTERNAL';
      lastError = { code, message: err instanceof Error ? err.message : String(err), atMs: deps.clock.nowMs() };
      log.warn({ code, part: name, ageMs: data[name] ? deps.clock.nowMs() - data[name].fetchedMs : null }, `${name} prices not refreshed; keeping the last good data`);
      return false;
    }
  }

  const loop = startLoop({
    name: 'prices',
    clock: deps.clock,
    logger: log,
    errorDelayMs: 5 * 60_000,
    tick: async (signal) => {
      const results = await Promise.all([
        part('forecast', () => deps.source.forecast({ ...q, segmentSize, signal }), (r, now) => {
          data.forecast = { input: toForecastInput(r.priceUnits, r.forecastSegments, segmentSize), fetchedMs: now };
        }),
        part('advice', () => deps.source.advice({ ...q, segmentSize: 6, signal }), (r, now) => {
          data.advice = { input: toForecastInput(r.priceUnits, r.forecastAdvice, 6), fetchedMs: now };
        }),
        part('actual', () => deps.source.actualPrices({ ...q, timeZone: 'UTC', signal }), (r, now) => {
          data.actual = { input: toActualInput(r), fetchedMs: now };
        }),
      ]);
      if (results.every(Boolean)) lastError = null;
      if (results.some(Boolean)) deps.onChange(data);
      // A failed part is retried sooner than the hourly refresh.
      return results.every(Boolean) ? (deps.intervalMs ?? hourMs) : 5 * 60_000;
    },
  });
  return { ...loop, data: () => data, health: () => ({ ok: lastError === null, lastError }) };
}
