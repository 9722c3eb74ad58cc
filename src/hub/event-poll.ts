/**
 * `GET /events` polled for the whole fleet: every event not seen yet goes to the fan-out. The ids
 * seen are remembered in memory and reloaded from the database when the set grows too large.
 */
import { startLoop, type LoopHandle } from '../jobs/loop.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import type { SparkClient } from '../spark/client.js';
import type { EventFanout } from './event-fanout.js';
import type { RegistryStore } from './registry-store.js';

/** Events remembered as seen by the poll before the set is reloaded from the database. */
const knownEventsKept = 2000;
/** Events per page: an event lists every home it targets, so a page of them is large. */
const pollPageSize = 10;

export interface EventPoll {
  /** Runs one poll now; returns the events it stored. */
  pollEvents(signal?: AbortSignal): Promise<number>;
  /** Starts polling every `intervalMs`. */
  start(intervalMs: number): Promise<LoopHandle>;
}

export function createEventPoll(deps: { registry: RegistryStore; spark: SparkClient; fanout: EventFanout; clock: Clock; logger: Logger }): EventPoll {
  const known = new Set<string>();
  const reload = async (): Promise<void> => {
    known.clear();
    for (const id of await deps.registry.recentEventIds(knownEventsKept)) known.add(id);
  };
  const pollEvents = async (signal?: AbortSignal): Promise<number> => {
    if (known.size > knownEventsKept * 2) await reload();
    let stored = 0;
    for await (const event of deps.spark.iterateEvents({ isKnown: (id) => known.has(id), pageSize: pollPageSize, ...(signal ? { signal } : {}) })) {
      if ((await deps.fanout.accept(event)).outcome === 'new') stored++;
      known.add(event.id);
    }
    return stored;
  };
  return {
    pollEvents,
    async start(intervalMs) {
      await reload();
      return startLoop({
        name: 'hub-events-poll',
        clock: deps.clock,
        logger: deps.logger,
        errorDelayMs: 60_000,
        tick: async (signal) => {
          await pollEvents(signal);
          return intervalMs;
        },
      });
    },
  };
}
