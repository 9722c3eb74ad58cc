import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { SparkEvent } from '../spark/wire.js';
import { startLoop, type LoopHandle } from '../timing/loop.js';
import type { EventIntake } from './port.js';
import { codeOf } from '../errors.js';
import { startCronJob } from '../timing/cron.js';

export interface EventSource {
  /** Pages newest first and stops at the first page made only of known events. */
  iterateEvents(options: { isKnown: (eventId: string) => boolean; signal?: AbortSignal }): AsyncIterable<SparkEvent>;
}

export interface PollerHealth {
  ok: boolean;
  lastSuccessMs: number | null;
  lastError: { code: string; message: string; atMs: number } | null;
}

/** The daily-curve check: a few minutes after the curve appears at 13:00 local. */
export const dailyCurveCron = '5 13 * * *';

/**
 * Polls `GET /events` at the configured interval, and at {@link dailyCurveCron} in `timeZone` (a
 * node-cron job) when the daily price curve appears, handing each event to the intake. Known
 * events end the paging.
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
          code: codeOf(err),
          message: err instanceof Error ? err.message : String(err),
          atMs: deps.clock.nowMs(),
        };
        throw err;
      }
      return deps.intervalMs;
    },
  });
  const dailyCurve = startCronJob({
    name: 'daily-curve-poll',
    spec: { cron: dailyCurveCron, timezone: deps.timeZone },
    clock: deps.clock,
    logger: deps.logger,
    run: () => loop.wake(),
  });
  return {
    wake: () => loop.wake(),
    stop: async () => {
      await dailyCurve.stop();
      await loop.stop();
    },
    health: () => ({ ...health }),
  };
}
