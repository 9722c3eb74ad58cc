import type { IClientPublishOptions, MqttClient } from 'mqtt';
import type { Clock } from '../../ports.js';

/** What every simulated MQTT device offers its tests and the demo. */
export interface MqttSimulator {
  readonly nowMs: number;
  /** Whether its MQTT client is connected (offline it publishes nothing). */
  readonly connected: boolean;
  start(): Promise<void>;
  /** Moves simulated time forward, integrating energy exactly, then publishes. */
  advance(ms: number): Promise<void>;
  /** Ground truth: energy per UTC hour start, kWh. */
  energyKwhByHour(): Map<number, number>;
  /** While silent the device publishes nothing and answers nothing (a hung device). */
  setSilent(silent: boolean): void;
  /** Publishes raw bytes on a topic under the device's prefix (garbage tests). */
  publishRaw(subtopic: string, payload: string): Promise<void>;
  /** Follows `clock` in steps of `stepMs` until the signal aborts. */
  run(clock: Clock, stepMs: number, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/**
 * Publishes like a device: nothing while offline (it sends its whole state again on reconnect),
 * and a message in flight when the connection drops counts as sent (mqtt.js resends it). Either
 * way simulated time never waits for a broker that is away.
 */
export function publishOnline(client: MqttClient | undefined, topic: string, payload: string, options: IClientPublishOptions): Promise<void> {
  if (!client?.connected) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      client.off('close', done);
      resolve();
    };
    client.once('close', done);
    client.publishAsync(topic, payload, options).then(done, done);
  });
}

/**
 * A simulator's ways to leave the broker: `crash` drops the connection without a clean disconnect
 * (so the broker publishes the last will), `close` ends it cleanly. `forget` clears the client.
 */
export function clientEnds(get: () => MqttClient | undefined, forget: () => void): { crash(): Promise<void>; close(): Promise<void> } {
  return {
    async crash() {
      get()?.stream.destroy();
      await get()?.endAsync(true);
      forget();
    },
    async close() {
      await get()?.endAsync();
      forget();
    },
  };
}

/**
 * Advances a simulator along a clock. Each step catches up with the clock, since publishing can
 * take longer than a step on a fast clock.
 */
export async function followClock(sim: Pick<MqttSimulator, 'nowMs' | 'advance'>, clock: Clock, stepMs: number, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    try {
      await clock.sleep(stepMs, signal);
    } catch {
      return;
    }
    await sim.advance(Math.max(stepMs, clock.nowMs() - sim.nowMs));
  }
}
