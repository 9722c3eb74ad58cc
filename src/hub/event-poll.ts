/**
 * `GET /events` polled for the whole fleet: every event not seen yet goes to the fan-out. The ids
 * seen are remembered in memory and reloaded from the database when the set grows too large. An
 * event that fails does not hold back the ones after it (it is tried again at the next poll, and
 * that poll counts as failed); a poll that has not completed for three intervals (at least 15
 * minutes) makes the instance unhealthy (`status`, read by /healthz).
 */
import { startLoop, type LoopHandle } from '../timing/loop.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import type { SparkClient } from '../spark/client.js';
import type { EventFanout } from './event-fanout.js';
import type { RegistryStore } from './registry-store.js';

/** Events remembered as seen by the poll before the set is reloaded from the database. */
const knownEventsKept = 2000;
/** Events per page: an event lists every home it targets, so a page of them is large. */
const pollPageSize = 10;
/** Wait after a failed poll, ms. */
const errorDelayMs = 60_000;
/** The shortest time without a completed poll that counts as stuck, ms. */
const minStuckAfterMs = 15 * 60_000;

export interface EventPollStatus {
  /** False when polling runs and has not completed for too long. */
  ok: boolean;
  /** When the last poll completed (ms), null before the first. */
  lastPollAtMs: number | null;
  /** Why the last poll failed, while polls fail. */
  error?: string;
}

export interface EventPoll {
  /** Runs one poll now; returns the events it stored. */
  pollEvents(signal?: AbortSignal): Promise<number>;
  /** Starts polling every `intervalMs`. */
  start(intervalMs: number): Promise<LoopHandle>;
  status(): EventPollStatus;
}

export function createEventPoll(deps: { registry: RegistryStore; spark: SparkClient; fanout: EventFanout; clock: Clock; logger: Logger }): EventPoll {
  const known = new Set<string>();
  let running: { sinceMs: number; stuckAfterMs: number } | undefined;
  let lastPollAtMs: number | null = null;
  let lastError: string | undefined;
  const reload = async (): Promise<void> => {
    known.clear();
    for (const id of await deps.registry.recentEventIds(knownEventsKept)) known.add(id);
  };
  const poll = async (signal?: AbortSignal): Promise<number> => {
    if (known.size > knownEventsKept * 2) await reload();
    let stored = 0;
    let failed: unknown;
    for await (const event of deps.spark.iterateEvents({ isKnown: (id) => known.has(id), pageSize: pollPageSize, ...(signal ? { signal } : {}) })) {
      try {
        if ((await deps.fanout.accept(event)).outcome === 'new') stored++;
        known.add(event.id);
      } catch (err) {
        if (signal?.aborted) throw err;
        failed ??= err;
        deps.logger.debug({ err, eventId: event.id }, 'event not taken in; tried again at the next poll');
      }
    }
    if (failed !== undefined) throw failed;
    return stored;
  };
  const pollEvents = async (signal?: AbortSignal): Promise<number> => {
    try {
      const stored = await poll(signal);
      lastPollAtMs = deps.clock.nowMs();
      lastError = undefined;
      return stored;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
      throw err;
    }
  };
  return {
    pollEvents,
    async start(intervalMs) {
      await reload();
      running = { sinceMs: deps.clock.nowMs(), stuckAfterMs: Math.max(3 * intervalMs, minStuckAfterMs) };
      return startLoop({
        name: 'hub-events-poll',
        clock: deps.clock,
        logger: deps.logger,
        errorDelayMs: Math.min(errorDelayMs, intervalMs),
        tick: async (signal) => {
          await pollEvents(signal);
          return intervalMs;
        },
      });
    },
    status() {
      const since = Math.max(lastPollAtMs ?? 0, running?.sinceMs ?? 0);
      const ok = !running || deps.clock.nowMs() - since <= running.stuckAfterMs;
      return { ok, lastPollAtMs, ...(lastError !== undefined ? { error: lastError } : {}) };
    },
  };
}
