import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { SparkEvent } from '../spark/wire.js';
import { startLoop, type LoopHandle } from './loop.js';
import type { EventIntake } from './event-intake.js';
import { isWattshiftError } from '../errors.js';

export interface EventSource {
  /** Pages newest first and stops at the first page made only of known events. */
  iterateEvents(options: { isKnown: (eventId: string) => boolean; signal?: AbortSignal }): AsyncIterable<SparkEvent>;
}

export interface PollerHealth {
  ok: boolean;
  lastSuccessMs: number | null;
  lastError: { code: string; message: string; atMs: number } | null;
}

/** Wall-clock fields of `ms` in `timeZone`. */
function zonedParts(ms: number, timeZone: string): { y: number; mo: number; d: number; h: number; mi: number; s: number } {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
  }).formatToParts(new Date(ms));
  const get = (t: string): number => Number(parts.find((p) => p.type === t)?.value ?? 0);
  return { y: get('year'), mo: get('month'), d: get('day'), h: get('hour'), mi: get('minute'), s: get('second') };
}

/** The zone's offset from UTC at `ms`, in ms (whole seconds). */
function offsetMs(ms: number, timeZone: string): number {
  const p = zonedParts(ms, timeZone);
  return Date.UTC(p.y, p.mo - 1, p.d, p.h, p.mi, p.s) - Math.floor(ms / 1000) * 1000;
}

/** The instant of a wall-clock time in `timeZone` (the later one when it does not exist). */
function zonedToUtcMs(y: number, mo: number, d: number, h: number, mi: number, timeZone: string): number {
  const guess = Date.UTC(y, mo - 1, d, h, mi);
  const first = guess - offsetMs(guess, timeZone);
  const second = guess - offsetMs(first, timeZone);
  return Math.max(first, second);
}

/**
 * Milliseconds until the next daily-curve check: a few minutes after 13:00 in `timeZone`. Real
 * elapsed time, so a day with a DST change is 23 or 25 hours long.
 */
export function msUntilDailyCurve(nowMs: number, timeZone: string, afterMinutes = 5): number {
  const today = zonedParts(nowMs, timeZone);
  for (let dayOffset = 0; dayOffset < 3; dayOffset++) {
    const date = new Date(Date.UTC(today.y, today.mo - 1, today.d + dayOffset));
    const target = zonedToUtcMs(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), 13, afterMinutes, timeZone);
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
