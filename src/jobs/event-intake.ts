import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import { codeOf } from '../errors.js';
import { parseIncoming, type HomeEvent, type Identity } from '../spark/event-normalise.js';
import type { EventIntake } from '../upstream/port.js';

export function createEventIntake(deps: {
  store: Pick<Store, 'saveEvent' | 'hasEvent'>;
  identity: () => Identity;
  clock: Clock;
  logger: Logger;
  /** A new, relevant event; `stored` is false when only memory holds it (the store failed). */
  onEvent: (event: HomeEvent, stored: boolean) => void;
  /** An event stored but refused for values out of bounds. */
  onRefused?: (event: HomeEvent) => void;
}): EventIntake {
  const log = deps.logger.child({ component: 'events' });
  const act = (event: HomeEvent, stored: boolean): void => {
    try {
      deps.onEvent(event, stored);
    } catch (err) {
      // A stored event stays `received`: the actions' scan picks it up again later.
      log.error({ err, code: codeOf(err), eventId: event.id }, 'acting on a new event failed');
    }
  };
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
      let isNew: boolean;
      try {
        isNew = deps.store.saveEvent({
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
      } catch (err) {
        // Not stored: its caps and prices still count in memory, and the sender is told to resend.
        log.error({ err, code: codeOf(err, 'STORE_FAILED'), eventId: event.id }, 'event could not be stored; acting on it in memory');
        if (event.relevant) act(event, false);
        return { outcome: 'unstored', event };
      }
      if (!isNew) return { outcome: 'duplicate', event };
      if (event.refusal !== null) {
        log.warn(
          { code: 'EVENT_OUT_OF_RANGE', eventId: event.id, payloadType: event.payloadType, reason: event.refusal },
          'event refused: values out of bounds; stored, not planned',
        );
        deps.onRefused?.(event);
        return { outcome: 'refused', event };
      }
      if (!event.relevant) {
        const known = ['PriceCurve', 'LocationLPC', 'ResourceLPC', 'UserEligibility', 'LPCReservation'].includes(event.payloadType);
        log.info({ eventId: event.id, payloadType: event.payloadType }, known ? 'event for other targets ignored' : 'event of unknown type kept');
        return { outcome: 'ignored', event };
      }
      log.info({ eventId: event.id, payloadType: event.payloadType, startMs: event.startMs, endMs: event.endMs }, 'event received');
      act(event, true);
      return { outcome: 'new', event };
    },
  };
}
