/**
 * Source shapes of the `devices` config section for MQTT devices. Structurally identical to the
 * agreed shapes (`ShellySource`, `TasmotaSource`, `GoeSource`, `MqttMapSource` in
 * `src/config/schema.ts`); switch to importing them once that file exports them.
 */
import type { Clock } from '../../ports.js';
import type { Logger } from '../../log.js';
import type { DeviceCapabilities } from '../supervisor.js';
import type { MqttConnection } from './connection.js';

/**
 * Which relay state blocks the heater. `off` (default, recommended): the heater is fed through
 * the relay's contact, so an unpowered or rebooted relay (configure `initial_state: on` /
 * `PowerOnState 1`) heats. `on`: the relay drives a normally-closed contactor or a utility-lock
 * input, so energising it blocks.
 */
export type BlockedRelayState = 'off' | 'on';

export interface ShellySource {
  type: 'shelly';
  topicPrefix: string;
  switchId?: number;
  temperatureSensorId?: number;
  blockedState?: BlockedRelayState;
}

export interface TasmotaSource {
  type: 'tasmota';
  topic: string;
  relay?: number;
  fullTopic?: string;
  sensor?: string;
  blockedState?: BlockedRelayState;
  /** Rule set (1..3) and rule timer (1..8) wattshift owns on the device to end a block (relay OFF) by itself. */
  releaseRule?: { rule: number; timer: number };
}

export interface GoeSource {
  type: 'goe';
  topicPrefix: string;
}

export interface MqttMapSource {
  type: 'mqtt';
  stateTopic?: string;
  energyKwhPath?: string;
  powerWPath?: string;
  temperatureCPath?: string;
  energyScale?: number;
  powerScale?: number;
  commandTopic?: string;
  blockPayload?: string;
  allowPayload?: string;
  currentTopic?: string;
  currentPayloadTemplate?: string;
  pluggedPath?: string;
  chargingPath?: string;
  availabilityTopic?: string;
  availablePayload?: string;
  unavailablePayload?: string;
  refreshTopic?: string;
  refreshPayload?: string;
}

/** The AMS reader firmware's "JSON (classic)" payload on its publish topic. */
export interface AmsReaderSource {
  type: 'amsreader';
  topic: string;
}

export type MqttDeviceSource = ShellySource | TasmotaSource | GoeSource | AmsReaderSource | MqttMapSource;

export interface MqttDeviceDeps {
  connection: MqttConnection;
  clock: Clock;
  logger: Logger;
}

export interface MqttDeviceOptions {
  /** Device id for logs and errors. */
  id?: string;
  /** A value older than this counts as missing (DEVICE_STALE). Default 120 s. */
  staleAfterS?: number;
  /** How long a command or status request waits for the device's answer. Default 5000 ms. */
  requestTimeoutMs?: number;
}

/** The capabilities an MQTT source offers, plus a way to detach it from the connection. */
export interface MqttDevice extends DeviceCapabilities {
  /** Removes this device's topic handlers. */
  close(): void;
}
