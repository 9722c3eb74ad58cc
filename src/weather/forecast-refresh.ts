/**
 * Keeps MET Norway's outdoor temperature forecast current on the `Expires` schedule: never asks
 * before the last answer's `Expires` (a random minute after it, so gateways do not ask together),
 * asks with `If-Modified-Since`, keeps the last good forecast through failures (429, 5xx, a network
 * error, a bad body: backoff from 1 minute doubling to an hour, and never before `Expires`), says a
 * deprecated product (203) once, and stops asking after a 403 until a restart or a config change.
 * The forecast, its `Last-Modified` and its `Expires` are kept in the store's state table, so a
 * restart neither asks again before `Expires` nor starts without a forecast.
 */
import { z } from 'zod';
import type { OutdoorForecast } from '../core/types.js';
import { codeOf, isWattshiftError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import type { Store } from '../store/types.js';
import { backoffMs } from '../timing/backoff.js';
import { startLoop, type LoopHandle } from '../timing/loop.js';
import { placeQuery, type MetnoClient, type MetnoPlace } from './metno-client.js';

/** The store's state key of the kept forecast. */
export const weatherStateKey = 'weather:metno';

const minuteMs = 60_000;
/** Without an `Expires` header: MET's own forecasts carry about half an hour. */
const defaultFreshMs = 30 * minuteMs;
const failureBackoff = { baseMs: minuteMs, maxMs: 60 * minuteMs };

const keptSchema = z.object({
  /** The query it was asked with: a forecast for another place (a config change) is not used. */
  place: z.string(),
  points: z.array(z.object({ startMs: z.number(), tempC: z.number() })),
  updatedMs: z.number(),
  lastModified: z.string().nullable(),
  expiresMs: z.number().nullable(),
});
type Kept = z.infer<typeof keptSchema>;

export interface WeatherHealth {
  ok: boolean;
  lastError: { code: string; message: string; atMs: number } | null;
}

export interface WeatherRefresh extends LoopHandle {
  /** The last good forecast (`metno`), or `none` when there has never been one for this place. */
  forecast(): OutdoorForecast;
  health(): WeatherHealth;
  /** When the next request may go, clock ms (the last answer's `Expires` and a random minute, or the backoff). */
  nextRequestMs(): number;
}

export function startWeatherRefresh(deps: {
  client: MetnoClient;
  place: MetnoPlace;
  clock: Clock;
  logger: Logger;
  store: Pick<Store, 'getState' | 'setState'>;
  /** Writes to the store through this (the daemon's store guard); default: directly. */
  guardStore?: (write: () => void) => void;
  /** Random source in [0, 1) for the minute after `Expires` and the backoff jitter. */
  random?: () => number;
  /** Runs when a new forecast arrived (not on a 304). */
  onChange?: (forecast: OutdoorForecast) => void;
}): WeatherRefresh {
  const log = deps.logger.child({ component: 'weather' });
  const random = deps.random ?? Math.random;
  const place = placeQuery(deps.place);
  const saved = deps.store.getState(weatherStateKey, keptSchema);
  let kept: Kept | undefined = saved?.place === place ? saved : undefined;
  let lastError: WeatherHealth['lastError'] = null;
  let failures = 0;
  let blocked = false;
  let saidDeprecated = false;
  let saidCode: string | null = null;
  /** When the next request may go, fixed once per schedule so a wake does not move it. */
  let dueMs = kept?.expiresMs ?? 0;

  const save = (k: Kept): void => {
    const write = (): void => deps.store.setState(weatherStateKey, k);
    if (deps.guardStore) deps.guardStore(write);
    else write();
  };
  const forecast = (): OutdoorForecast =>
    kept ? { source: 'metno', points: kept.points, updatedMs: kept.updatedMs } : { source: 'none', points: [], updatedMs: null };

  /** The earliest next request: `Expires` (or half an hour) and a random minute after it. */
  const scheduleAfterAnswer = (now: number, expiresMs: number | null): void => {
    dueMs = Math.max(expiresMs ?? now + defaultFreshMs, now + minuteMs) + Math.floor(random() * minuteMs);
  };

  async function ask(signal: AbortSignal): Promise<void> {
    const now = deps.clock.nowMs();
    try {
      const answer = await deps.client.compact({ ...deps.place, ifModifiedSince: kept?.lastModified ?? null, signal });
      const at = deps.clock.nowMs();
      if (answer.deprecated && !saidDeprecated) {
        saidDeprecated = true;
        log.warn(
          { code: 'WEATHER_DEPRECATED', status: 203 },
          'MET Norway says this Locationforecast version is deprecated; the forecast is still used',
        );
      }
      if (answer.forecast) {
        kept = { place, ...answer.forecast, lastModified: answer.lastModified, expiresMs: answer.expiresMs };
        deps.onChange?.(forecast());
      } else if (kept) {
        // 304: the forecast held is confirmed as current.
        kept = {
          ...kept,
          updatedMs: Math.max(kept.updatedMs, at),
          lastModified: answer.lastModified ?? kept.lastModified,
          expiresMs: answer.expiresMs,
        };
      }
      if (kept) save(kept);
      if (saidCode !== null) log.info({ part: 'weather', downSinceCode: saidCode }, 'outdoor forecast refreshed again');
      failures = 0;
      lastError = null;
      saidCode = null;
      scheduleAfterAnswer(at, answer.expiresMs);
    } catch (err) {
      if (signal.aborted) throw err;
      const code = codeOf(err);
      const at = deps.clock.nowMs();
      lastError = { code, message: err instanceof Error ? err.message : String(err), atMs: at };
      if (code === 'WEATHER_BLOCKED' || code === 'WEATHER_NO_CONTACT') {
        blocked = true;
        log.error({ code, part: 'weather' }, 'MET Norway is not asked again until a restart or a config change; the last good forecast is kept');
        return;
      }
      failures++;
      const level = code === saidCode ? 'debug' : 'warn';
      saidCode = code;
      log[level](
        { code, part: 'weather', failures, ageMs: kept ? at - kept.updatedMs : null },
        'outdoor forecast not refreshed; keeping the last good one',
      );
      const retryAfterMs = isWattshiftError(err) && typeof err.details?.retryAfterMs === 'number' ? err.details.retryAfterMs : 0;
      const expiresMs = kept?.expiresMs ?? 0;
      dueMs = Math.max(now + backoffMs(failures, failureBackoff, random), at + retryAfterMs, expiresMs);
    }
  }

  const loop = startLoop({
    name: 'weather',
    clock: deps.clock,
    logger: log,
    errorDelayMs: failureBackoff.baseMs,
    tick: async (signal) => {
      if (blocked) {
        if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        return 0;
      }
      const now = deps.clock.nowMs();
      if (now < dueMs) return dueMs - now;
      await ask(signal);
      return Math.max(0, dueMs - deps.clock.nowMs());
    },
  });
  return { ...loop, forecast, health: () => ({ ok: lastError === null, lastError }), nextRequestMs: () => dueMs };
}
