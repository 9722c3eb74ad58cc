/**
 * A simulated car integration that tells the car's state of charge over MQTT the way TeslaMate
 * does (docs.teslamate.org, "Integrations → MQTT"): one retained topic per value under
 * `teslamate/cars/<carId>/`, a bare payload each, published when the value changes:
 *
 * - `battery_level`: state of charge, whole percent;
 * - `plugged_in`: `true` / `false`.
 *
 * The car is the battery a charger simulator charges (and the road empties), so the SoC a home
 * reads is the battery's own. The car's logger learns it in whole percent and with a delay of its
 * polling, here at most one step of `run`.
 */
import mqtt, { type MqttClient } from 'mqtt';
import type { Clock } from '../../ports.js';
import type { EvBattery } from './ev-battery.js';
import { publishOnline } from './mqtt-simulator.js';
import { brokerUrlOptions } from '../../devices/mqtt/transport.js';

export interface TeslaMateSimOptions {
  url: string;
  /** TeslaMate's car id (1 for the first car). */
  carId: number;
  /** The car's battery now (it is the same object across plug-ins). */
  battery: EvBattery;
  /** Whether the car is plugged in now. */
  pluggedIn: () => boolean;
}

export interface TeslaMateSim {
  readonly topic: (key: 'battery_level' | 'plugged_in') => string;
  start(): Promise<void>;
  /** Publishes whatever changed since the last call. */
  update(): Promise<void>;
  /** Publishes changes every `stepMs` of the clock until the signal aborts. */
  run(clock: Clock, stepMs: number, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

export function createTeslaMateSim(options: TeslaMateSimOptions): TeslaMateSim {
  const topic = (key: 'battery_level' | 'plugged_in'): string => `teslamate/cars/${options.carId}/${key}`;
  let client: MqttClient | undefined;
  const last = new Map<string, string>();

  const publishChanged = async (key: 'battery_level' | 'plugged_in', value: string): Promise<void> => {
    if (last.get(key) === value || !client?.connected) return;
    last.set(key, value);
    await publishOnline(client, topic(key), value, { qos: 1, retain: true });
  };

  const update = async (): Promise<void> => {
    await publishChanged('battery_level', String(Math.floor(options.battery.socPct)));
    await publishChanged('plugged_in', String(options.pluggedIn()));
  };

  return {
    topic,
    async start() {
      client = await mqtt.connectAsync({
        ...brokerUrlOptions(options.url),
        clientId: `teslamate-sim-${options.carId}-${Math.random().toString(16).slice(2, 8)}`,
        reconnectPeriod: 500,
      });
      // A reconnecting logger publishes its state again.
      client.on('connect', () => {
        last.clear();
        void update();
      });
      await update();
    },
    update,
    async run(clock, stepMs, signal) {
      while (!signal.aborted) {
        try {
          await clock.sleep(stepMs, signal);
        } catch {
          return;
        }
        await update();
      }
    },
    async close() {
      await client?.endAsync();
      client = undefined;
    },
  };
}
