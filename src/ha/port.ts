import type { MqttClient } from 'mqtt';
import { topicMatches } from './topics.js';

export interface PublishOptions {
  retain: boolean;
  qos: 0 | 1 | 2;
}

/** `retained`: the broker sent a stored retained message (at subscribe), not a live publish. */
export type MessageHandler = (topic: string, payload: Buffer, meta: { retained: boolean }) => void;

/**
 * The slice of an MQTT client this layer needs. The daemon adapts its MQTT connection to it;
 * tests use a real mqtt.js client through {@link mqttJsPort}.
 */
export interface HaMqttPort {
  /** Publishes a message; an empty payload with retain clears a retained message. */
  publish(topic: string, payload: string, options: PublishOptions): Promise<void>;
  /** Subscribes to a topic filter (wildcards allowed); the handler sees matching messages. */
  subscribe(topic: string, handler: MessageHandler): Promise<void>;
}

/** Adapts an mqtt.js client: one `message` listener dispatches to the subscribed filters. */
export function mqttJsPort(client: MqttClient): HaMqttPort {
  const handlers: { filter: string; handler: MessageHandler }[] = [];
  client.on('message', (topic, payload, packet) => {
    for (const h of handlers) if (topicMatches(h.filter, topic)) h.handler(topic, payload, { retained: packet.retain });
  });
  return {
    async publish(topic, payload, options) {
      await client.publishAsync(topic, payload, { retain: options.retain, qos: options.qos });
    },
    async subscribe(topic, handler) {
      handlers.push({ filter: topic, handler });
      await client.subscribeAsync(topic, { qos: 1 });
    },
  };
}

/** The shape of the daemon's shared MQTT connection (`src/devices/mqtt/connection.ts`). */
export interface SharedMqttConnection {
  subscribe(filter: string, handler: MessageHandler, options?: { qos?: 0 | 1 | 2 }): () => void;
  publish(topic: string, payload: string | Buffer, options?: { qos?: 0 | 1 | 2; retain?: boolean }): Promise<void>;
}

/** Adapts the shared connection; it re-subscribes after reconnects by itself. */
export function sharedConnectionPort(conn: SharedMqttConnection): HaMqttPort {
  return {
    publish: (topic, payload, options) => conn.publish(topic, payload, { retain: options.retain, qos: options.qos }),
    subscribe: async (topic, handler) => {
      conn.subscribe(topic, handler, { qos: 1 });
    },
  };
}
