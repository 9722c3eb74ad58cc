/**
 * The daemon's few late callbacks: a module that must tell one started after it (a queued report
 * to the outbox, new prices to the planner, a new plan to Home Assistant) emits an event here,
 * and the later module listens from its start to its stop. Emitting is synchronous, in the order
 * the listeners were added; a listener that throws is logged with a code and the others still run.
 */
import type { Logger } from '../log.js';
import type { ControlSnapshot } from '../jobs/control-loop.js';
import { codeOf } from '../errors.js';

/** Each event's name and payload. */
export interface AppEvents {
  /** A report was queued: the outbox sends it now. */
  reportQueued: undefined;
  /** An event brought new prices: the price refresh runs now. */
  pricesChanged: undefined;
  /** An input of the plan changed (an event, new prices): the planner re-plans. */
  replanWanted: { reason: string };
  /** What the view shows changed (a plan was made, a control tick ended): Home Assistant republishes. */
  viewChanged: undefined;
  /** A control tick read the devices (emitted as its end begins, so the planner builds on this tick). */
  controlTicked: ControlSnapshot;
  /** The MQTT connection dropped an oversized message on this topic. */
  mqttOversized: { topic: string };
}

export type AppEventName = keyof AppEvents;
type Payload<E extends AppEventName> = AppEvents[E] extends undefined ? [] : [AppEvents[E]];

export interface EventBus {
  /** Adds a listener; the function returned removes it (a module calls it at its stop). */
  on<E extends AppEventName>(event: E, listener: (...payload: Payload<E>) => void): () => void;
  emit<E extends AppEventName>(event: E, ...payload: Payload<E>): void;
  /** How many listeners an event has (for tests). */
  listenerCount(event: AppEventName): number;
}

export function createEventBus(deps: { logger: Logger }): EventBus {
  const listeners = new Map<AppEventName, Set<(...payload: never[]) => void>>();
  return {
    on(event, listener) {
      const set = listeners.get(event) ?? new Set();
      listeners.set(event, set);
      // A wrapper per call, so adding the same function twice gives two listeners, each removed once.
      const entry = (...payload: never[]): void => (listener as (...p: never[]) => void)(...payload);
      set.add(entry);
      return () => void set.delete(entry);
    },
    emit(event, ...payload) {
      for (const listener of [...(listeners.get(event) ?? [])]) {
        try {
          (listener as (...p: unknown[]) => void)(...payload);
        } catch (err) {
          deps.logger.warn({ err, code: codeOf(err, 'APP_LISTENER_FAILED'), event }, `a listener of ${event} failed`);
        }
      }
    },
    listenerCount: (event) => listeners.get(event)?.size ?? 0,
  };
}
