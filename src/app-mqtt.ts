/** Adapts the shared MQTT connection to the home-automation layer's small port. */
import type { HaMqttPort } from './ha/port.js';
import type { MqttConnection } from './devices/mqtt/index.js';

export function haPortFor(connection: MqttConnection): HaMqttPort {
  return {
    publish: (topic, payload, options) => connection.publish(topic, payload, { retain: options.retain, qos: options.qos }),
    subscribe: async (topic, handler) => {
      connection.subscribe(topic, handler);
    },
  };
}
