/** MQTT device adapters: one factory over the source types of the `devices` config section. */
import { createAmsReaderDevice } from './amsreader.js';
import { createGoeDevice } from './goe.js';
import { createMqttMapDevice } from './map.js';
import { createShellyDevice } from './shelly.js';
import { createTasmotaDevice } from './tasmota.js';
import type { MqttDevice, MqttDeviceDeps, MqttDeviceOptions, MqttDeviceSource } from './types.js';

export { createMqttConnection, classifyMqttError, topicMatches } from './connection.js';
export type { MqttConnection, MqttConnectionOptions, MqttHandler, MqttWill } from './connection.js';
export type * from './types.js';
export { createGoeDevice, createMqttMapDevice, createShellyDevice, createTasmotaDevice };

/**
 * Builds the capabilities of one MQTT source. Several capability sources of one device that name
 * the same physical device (e.g. a Shelly as switch, meter and thermometer) may share one
 * instance; creating several is also fine (each subscribes on the shared connection).
 */
export function createMqttDevice(source: MqttDeviceSource, deps: MqttDeviceDeps, options: MqttDeviceOptions = {}): MqttDevice {
  switch (source.type) {
    case 'shelly':
      return createShellyDevice(source, deps, options);
    case 'tasmota':
      return createTasmotaDevice(source, deps, options);
    case 'goe':
      return createGoeDevice(source, deps, options);
    case 'amsreader':
      return createAmsReaderDevice(source, deps, options);
    case 'mqtt':
      return createMqttMapDevice(source, deps, options);
  }
}
