import type { Logger } from '../log.js';
import type { HaMqttPort } from './port.js';
import { stateMessages } from './state.js';
import { haTopics } from './topics.js';
import type { HomeView } from '../view/model.js';

export const onlinePayload = 'online';
export const offlinePayload = 'offline';

/**
 * The last will to set on the MQTT connection (by whoever creates it): retained `offline` on
 * the availability topic, so a crash or a cut connection shows up in Home Assistant.
 */
export function haWill(baseTopic: string): { topic: string; payload: string; retain: true; qos: 1 } {
  return { topic: haTopics(baseTopic).availability, payload: offlinePayload, retain: true, qos: 1 };
}

export interface HaPublisherOptions {
  port: HaMqttPort;
  baseTopic: string;
  logger: Logger;
}

export interface HaPublisher {
  /** Publishes retained `online`. */
  start(): Promise<void>;
  /** Publishes the retained messages of the view that differ from what was last published. */
  publishView(view: HomeView): Promise<number>;
  /** Forgets what was published, so the next `publishView` sends everything again. */
  invalidate(): void;
  /** Clears the retained state topics of devices that are gone. */
  clearDevice(deviceId: string, fieldTopics: readonly string[]): Promise<void>;
  /**
   * Publishes retained `offline` (a clean stop: the will is not sent then) right after the message
   * in flight: the rest of a view being published is dropped, not sent first.
   */
  stop(): Promise<void>;
}

export function createHaPublisher(options: HaPublisherOptions): HaPublisher {
  const { port } = options;
  const t = haTopics(options.baseTopic);
  const log = options.logger.child({ component: 'ha-publisher' });
  const last = new Map<string, string>();
  // Publishes are serialised so a slow broker cannot reorder two views' messages.
  let queue: Promise<unknown> = Promise.resolve();
  // Set by stop: a view being published ends at its next message. Under load each QoS 1 message
  // waits for its acknowledgement, and a whole view of them made the stop miss its deadline.
  let stopping = false;

  function enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const next = queue.then(fn, fn);
    queue = next.catch(() => undefined);
    return next;
  }

  return {
    start: () => {
      stopping = false;
      return enqueue(() => port.publish(t.availability, onlinePayload, { retain: true, qos: 1 }));
    },
    publishView: (view) =>
      enqueue(async () => {
        const messages = stateMessages(t, view);
        let sent = 0;
        for (const [topic, payload] of messages) {
          if (stopping) break;
          if (last.get(topic) === payload) continue;
          await port.publish(topic, payload, { retain: true, qos: 1 });
          last.set(topic, payload);
          sent++;
        }
        if (sent > 0) log.debug({ sent }, 'published state');
        return sent;
      }),
    invalidate: () => last.clear(),
    clearDevice: (deviceId, fieldTopics) =>
      enqueue(async () => {
        for (const topic of [t.device(deviceId), t.deviceAvailability(deviceId), ...fieldTopics]) {
          await port.publish(topic, '', { retain: true, qos: 1 });
          last.delete(topic);
        }
      }),
    stop: () => {
      stopping = true;
      return enqueue(() => port.publish(t.availability, offlinePayload, { retain: true, qos: 1 }));
    },
  };
}
