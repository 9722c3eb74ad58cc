import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import { isWattshiftError } from '../errors.js';
import { parseIncoming, type HomeEvent, type Identity } from './event-normalise.js';

export type IntakeOutcome = 'new' | 'duplicate' | 'ignored' | 'invalid';

export interface EventIntake {
  /**
   * Parses, stores and (when new and relevant) hands an event on. Every event is stored before it
   * is acted on; an event that targets someone else, or of an unknown type, is stored as ignored.
   */
  accept(raw: unknown, kind: 'event' | 'notification', rawJson?: string): { outcome: IntakeOutcome; event?: HomeEvent };
}

export function createEventIntake(deps: {
  store: Pick<Store, 'saveEvent' | 'hasEvent'>;
  identity: () => Identity;
  clock: Clock;
  logger: Logger;
  onEvent: (event: HomeEvent) => void;
}): EventIntake {
  const log = deps.logger.child({ component: 'events' });
  return {
    accept(raw, kind, rawJson) {
      let event: HomeEvent;
      try {
        event = parseIncoming(raw, kind, deps.identity());
        // The store requires an id; an event without one cannot be deduped or acted on.
        if (event.id.trim() === '') throw new Error('event without an id');
      } catch (err) {
        log.warn({ code: 'API_BAD_RESPONSE', err: err instanceof Error ? err.message : String(err) }, 'malformed event dropped');
        return { outcome: 'invalid' };
      }
      const isNew = deps.store.saveEvent({
        eventId: event.id,
        notificationType: event.notificationType,
        payloadType: event.payloadType,
        createdAtMs: event.createdAtMs,
        receivedAtMs: deps.clock.nowMs(),
        startMs: event.startMs,
        endMs: event.endMs,
        locationIds: event.locationIds,
        resourceIds: event.resourceIds,
        rawJson: rawJson ?? JSON.stringify(raw),
        state: event.relevant ? 'received' : 'ignored',
      });
      if (!isNew) return { outcome: 'duplicate', event };
      if (!event.relevant) {
        const known = ['PriceCurve', 'LocationLPC', 'ResourceLPC', 'UserEligibility', 'LPCReservation'].includes(event.payloadType);
        log.info({ eventId: event.id, payloadType: event.payloadType }, known ? 'event for other targets ignored' : 'event of unknown type kept');
        return { outcome: 'ignored', event };
      }
      log.info({ eventId: event.id, payloadType: event.payloadType, startMs: event.startMs, endMs: event.endMs }, 'event received');
      try {
        deps.onEvent(event);
      } catch (err) {
        // The event is stored (state `received`): the actions' scan picks it up again later.
        log.error({ err, code: isWattshiftError(err) ? err.code : 'INTERNAL', eventId: event.id }, 'acting on a new event failed; it stays stored as received');
      }
      return { outcome: 'new', event };
    },
  };
}
