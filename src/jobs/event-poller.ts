import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { SparkEvent } from '../spark/wire.js';
import { startLoop, type LoopHandle } from './loop.js';
import type { EventIntake } from './event-intake.js';
import { isWattshiftError } from '../errors.js';
import { localParts, localTimeToUtcMs } from '../core/zoned-time.js';

export interface EventSource {
  /** Pages newest first and stops at the first page made only of known events. */
  iterateEvents(options: { isKnown: (eventId: string) => boolean; signal?: AbortSignal }): AsyncIterable<SparkEvent>;
}

export interface PollerHealth {
  ok: boolean;
  lastSuccessMs: number | null;
  lastError: { code: string; message: string; atMs: number } | null;
}

/**
 * Milliseconds until the next daily-curve check: a few minutes after 13:00 in `timeZone`. Real
 * elapsed time, so a day with a DST change is 23 or 25 hours long.
 */
export function msUntilDailyCurve(nowMs: number, timeZone: string, afterMinutes = 5): number {
  const today = localParts(nowMs, timeZone);
  for (let dayOffset = 0; dayOffset < 3; dayOffset++) {
    const target = localTimeToUtcMs(today.year, today.month, today.day + dayOffset, 13, timeZone, afterMinutes);
    if (target > nowMs) return target - nowMs;
  }
  return 86_400_000;
}

/**
 * Polls `GET /events` at the configured interval, and shortly after 13:00 local when the daily
 * price curve appears, handing each event to the intake. Known events end the paging.
 */
export function startEventPoller(deps: {
  source: EventSource;
  intake: EventIntake;
  isKnown: (eventId: string) => boolean;
  clock: Clock;
  logger: Logger;
  intervalMs: number;
  timeZone: string;
}): LoopHandle & { health(): PollerHealth } {
  const log = deps.logger.child({ component: 'event-poller' });
  const health: PollerHealth = { ok: true, lastSuccessMs: null, lastError: null };
  const loop = startLoop({
    name: 'event-poller',
    clock: deps.clock,
    logger: log,
    errorDelayMs: Math.min(deps.intervalMs, 60_000),
    tick: async (signal) => {
      try {
        let fresh = 0;
        for await (const event of deps.source.iterateEvents({ isKnown: deps.isKnown, signal })) {
          if (deps.intake.accept(event, 'event').outcome === 'new') fresh++;
        }
        health.ok = true;
        health.lastSuccessMs = deps.clock.nowMs();
        if (fresh > 0) log.info({ fresh }, 'new events polled');
      } catch (err) {
        health.ok = false;
        health.lastError = {
          code: isWattshiftError(err) ? err.code : 'INTERNAL',
          message: err instanceof Error ? err.message : String(err),
          atMs: deps.clock.nowMs(),
        };
        throw err;
      }
      return Math.min(deps.intervalMs, msUntilDailyCurve(deps.clock.nowMs(), deps.timeZone));
    },
  });
  return { ...loop, health: () => ({ ...health }) };
}
