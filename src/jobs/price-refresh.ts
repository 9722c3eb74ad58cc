import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { ForecastInput, PricePointsInput, PriceUnits } from '../core/types.js';
import type { ActualPricesResponse, Currency, ForecastResponse } from '../spark/wire.js';
import type { PriceSource } from '../upstream/port.js';
import { codeOf, WattshiftError } from '../errors.js';
import { localParts } from '../core/zoned-time.js';
import type { DayAheadQuery, NordPoolClient } from '../prices/nordpool-client.js';
import { parseApiTimeMs } from '../spark/event-normalise.js';
import { startLoop, type LoopHandle } from '../timing/loop.js';
import { priceDisagreement } from '../core/price-check.js';

const hourMs = 3_600_000;

/** The last good price data, each part with the time it was fetched. */
export interface PriceData {
  forecast: { input: ForecastInput; fetchedMs: number } | null;
  advice: { input: ForecastInput; fetchedMs: number } | null;
  actual: { input: PricePointsInput; fetchedMs: number } | null;
  /** Nord Pool's day-ahead prices of today and (once published) tomorrow, when configured. */
  nordPool?: { input: PricePointsInput; fetchedMs: number } | null;
}

/** The CET delivery days Nord Pool prices cover from `nowMs`: today and tomorrow. */
export function deliveryDays(nowMs: number): string[] {
  return [nowMs, nowMs + 86_400_000].map((ms) => {
    const p = localParts(ms, 'Europe/Berlin');
    return `${p.year}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
  });
}

/** Today's and tomorrow's Nord Pool prices as one series (tomorrow's may not be published yet). */
async function nordPoolDays(client: NordPoolClient, q: Omit<DayAheadQuery, 'date'>, nowMs: number): Promise<PricePointsInput> {
  const days = await Promise.all(deliveryDays(nowMs).map((date) => client.dayAhead({ ...q, date })));
  const [today, tomorrow] = days;
  if (!today) throw new WattshiftError('API_UNAVAILABLE', 'Nord Pool has no prices for today', { details: { source: 'nordPool' } });
  if (tomorrow && (tomorrow.resolutionMinutes !== today.resolutionMinutes || tomorrow.units.currency !== today.units.currency)) return today;
  return tomorrow ? { ...today, points: [...today.points, ...tomorrow.points] } : today;
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
 * The prices of a part a plan made now can use, those of the hours from `fromMs` to `toMs`, as a
 * key: a forecast that only slid on by an hour beyond the horizon has not changed for the planner.
 */
export function pricesWithinKey(input: ForecastInput | PricePointsInput, fromMs: number, toMs: number): string {
  const within =
    'segments' in input
      ? input.segments.filter((s) => s.fromMs < toMs && s.toMs + (input.toIsLastHourStart ? hourMs : 0) > fromMs)
      : input.points.filter((p) => p.startMs < toMs && p.startMs + input.resolutionMinutes * 60_000 > fromMs);
  return JSON.stringify([input.units, within]);
}

/**
 * Refreshes the forecast, the advice and the actual spot prices hourly (and at once when asked,
 * e.g. after a new price curve). Each part keeps its last good value when a fetch fails; the
 * planner decides what is too old. `onChange` runs when the prices of any part changed within
 * the planning horizon (`horizonMs` from now); a fetch that only confirms them is not a change.
 */
export function startPriceRefresh(deps: {
  source: PriceSource;
  area: string;
  currency: string;
  clock: Clock;
  logger: Logger;
  intervalMs?: number;
  horizonMs: number;
  onChange: (data: PriceData) => void;
  initial?: PriceData;
  /** The second source, fetched with the others when configured. */
  nordPool?: { client: NordPoolClient; resolutionMinutes: 15 | 60 };
}): LoopHandle & { data(): PriceData; health(): { ok: boolean; lastError: { code: string; message: string; atMs: number } | null } } {
  const log = deps.logger.child({ component: 'prices' });
  const data: PriceData = deps.initial ?? { forecast: null, advice: null, actual: null };
  let lastError: { code: string; message: string; atMs: number } | null = null;
  const segmentSize = 1;
  const q = { area: deps.area, currency: deps.currency as Currency, energyUnit: 'kWh' as const };
  const np = deps.nordPool;

  /** Fetches one part; `changed` only when its prices differ from the last good ones. */
  async function part<K extends keyof PriceData, T>(
    name: K,
    fetch: () => Promise<T>,
    toInput: (r: T) => NonNullable<PriceData[K]>['input'],
  ): Promise<'changed' | 'same' | 'failed'> {
    try {
      const input = toInput(await fetch());
      const now = deps.clock.nowMs();
      const old = data[name]?.input;
      const same = old !== undefined && pricesWithinKey(old, now, now + deps.horizonMs) === pricesWithinKey(input, now, now + deps.horizonMs);
      data[name] = { input, fetchedMs: now } as PriceData[K];
      return same ? 'same' : 'changed';
    } catch (err) {
      const code = codeOf(err);
      lastError = { code, message: err instanceof Error ? err.message : String(err), atMs: deps.clock.nowMs() };
      log.warn(
        { code, part: name, ageMs: data[name] ? deps.clock.nowMs() - data[name].fetchedMs : null },
        `${name} prices not refreshed; keeping the last good data`,
      );
      return 'failed';
    }
  }

  /** The last disagreement said in the log (said again only when it changes). */
  let saidDisagreement = '';
  /** The forecast service's actual prices against Nord Pool's, where both have the hour. */
  function crossCheck(): void {
    if (!data.actual || !data.nordPool) return;
    const d = priceDisagreement(data.actual.input, data.nordPool.input);
    const key = d.worst ? `${d.worst.startMs}:${d.differing}` : '';
    if (key !== '' && key !== saidDisagreement && d.worst) {
      log.warn(
        {
          code: 'PRICE_SOURCES_DISAGREE',
          hours: d.differing,
          compared: d.compared,
          worstHour: new Date(d.worst.startMs).toISOString(),
          forecastServicePerKwh: d.worst.a,
          nordPoolPerKwh: d.worst.b,
        },
        `the two day-ahead price sources differ in ${d.differing} of ${d.compared} hours`,
      );
    }
    saidDisagreement = key;
  }

  const loop = startLoop({
    name: 'prices',
    clock: deps.clock,
    logger: log,
    errorDelayMs: 5 * 60_000,
    tick: async (signal) => {
      const { forecast, actualPrices } = deps.source;
      const results = await Promise.all([
        ...(forecast
          ? [
              part(
                'forecast',
                () => forecast({ ...q, segmentSize, signal }),
                (r) => toForecastInput(r.priceUnits, r.forecastSegments, segmentSize),
              ),
            ]
          : []),
        part(
          'advice',
          () => deps.source.advice({ ...q, segmentSize: 6, signal }),
          (r) => toForecastInput(r.priceUnits, r.forecastAdvice, 6),
        ),
        ...(actualPrices ? [part('actual', () => actualPrices({ ...q, timeZone: 'UTC', signal }), toActualInput)] : []),
        ...(np
          ? [
              part(
                'nordPool',
                () =>
                  nordPoolDays(
                    np.client,
                    { area: deps.area, currency: deps.currency, resolutionMinutes: np.resolutionMinutes, signal },
                    deps.clock.nowMs(),
                  ),
                (r) => r,
              ),
            ]
          : []),
      ]);
      const ok = !results.includes('failed');
      if (ok) lastError = null;
      crossCheck();
      // Unchanged prices neither re-plan nor rewrite the saved copy (SD card writes).
      if (results.includes('changed')) deps.onChange(data);
      // A failed part is retried sooner than the hourly refresh.
      return ok ? (deps.intervalMs ?? hourMs) : 5 * 60_000;
    },
  });
  return { ...loop, data: () => data, health: () => ({ ok: lastError === null, lastError }) };
}
