/**
 * Event fan-out: each API event (webhook or poll, on any instance) is stored once, and the
 * instance that stored it publishes it, QoS 1, to the events topic of every registered location
 * it targets, cut to that location's own targets. Publishing that fails gives the duty back, so
 * the API's redelivery or the next poll publishes it again. A gateway's `sync` republishes the
 * events still running for its locations.
 */
import { fleetWireVersion, type FleetEvent, type fleetTopics } from '../fleet/wire.js';
import { rateLimitedWarn } from '../log-limit.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import { eventSchema, type SparkEvent } from '../spark/wire.js';
import { eventPerLocation, eventTargets } from './event-targets.js';
import { storable, warnReplaced } from './pg-text.js';
import type { RegistryStore } from './registry-store.js';

/** Publishes started before the hub yields to the event loop (and so to the socket). */
const publishBatch = 500;

export type Publish = (topic: string, payload: string, options: { retain: boolean }) => Promise<void>;

export interface EventFanout {
  /** `new`: stored and published by this call; `duplicate`: another copy did (or does) it. */
  accept(event: SparkEvent): Promise<{ outcome: 'new' | 'duplicate'; locationIds: string[] }>;
  /** Republishes the running events of the gateway's locations; returns how many were sent. */
  sync(gatewayId: string): Promise<number>;
}

export function createEventFanout(deps: {
  registry: RegistryStore;
  topics: ReturnType<typeof fleetTopics>;
  publish: Publish;
  clock: Clock;
  logger: Logger;
}): EventFanout {
  const log = deps.logger.child({ component: 'hub-events' });
  const warn = rateLimitedWarn(log, { now: () => deps.clock.nowMs() });
  /** One publish per location, each with the event cut to that location's targets. */
  const send = async (
    raw: unknown,
    receivedAtMs: number,
    locationIds: readonly string[],
    resourceLocations: ReadonlyMap<string, string>,
  ): Promise<void> => {
    const eventFor = eventPerLocation(eventSchema.parse(raw), locationIds, resourceLocations);
    const sent: Promise<void>[] = [];
    for (let i = 0; i < locationIds.length; i++) {
      const id = locationIds[i]!;
      const message: FleetEvent = { v: fleetWireVersion, receivedAtMs, event: eventFor(id) };
      sent.push(deps.publish(deps.topics.events(id), JSON.stringify(message), { retain: false }));
      // Let the socket write each batch: the broker delivers the first homes' messages while the
      // hub still builds the rest, instead of after all of them.
      if ((i + 1) % publishBatch === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await Promise.all(sent);
  };
  const resolveTargets = (event: SparkEvent) => {
    const targets = eventTargets(event);
    return deps.registry.resolveLocations(targets.locationIds, targets.resourceIds, targets.userIds).then((resolved) => ({ targets, ...resolved }));
  };
  return {
    async accept(received) {
      // Stored and sent as PostgreSQL can store it (src/hub/pg-text.ts), so every copy reads the same.
      const { value: event, ...replaced } = storable(received);
      const { targets, locationIds, resourceLocations } = await resolveTargets(event);
      if (!(await deps.registry.saveEvent(event, targets.endsAtMs, locationIds))) return { outcome: 'duplicate', locationIds };
      warnReplaced(warn, replaced, 'API event', { eventId: event.id });
      try {
        await send(event, deps.clock.nowMs(), locationIds, resourceLocations);
      } catch (err) {
        await deps.registry.unpublish(event.id);
        throw err;
      }
      log.info({ eventId: event.id, payloadType: event.payload?.payloadType, locations: locationIds.length }, 'event published');
      return { outcome: 'new', locationIds };
    },
    async sync(gatewayId) {
      const open = await deps.registry.openEventsOfGateway(gatewayId, deps.clock.nowMs());
      for (const e of open) await send(e.event, e.receivedAtMs, e.locationIds, (await resolveTargets(eventSchema.parse(e.event))).resourceLocations);
      log.info({ gatewayId, events: open.length }, 'gateway sync answered');
      return open.length;
    },
  };
}
