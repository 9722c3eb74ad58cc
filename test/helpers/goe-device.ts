/**
 * A go-e charger simulator on a {@link MqttDeviceWorld}'s broker with wattshift's go-e adapter
 * reading it, both closed with the world; resolves once the adapter has the charger's counter.
 */
import { expect } from 'vitest';
import { createMqttDevice, type MqttDevice } from '../../src/devices/mqtt/index.js';
import { silentLogger } from '../../src/log.js';
import { createGoeSim, type GoeSim, type GoeSimOptions } from '../../src/sandbox/devices/goe-sim.js';
import { eventually, type MqttDeviceWorld } from './aedes.js';

export async function startGoeDevice(w: MqttDeviceWorld, options: Omit<GoeSimOptions, 'url'>): Promise<{ sim: GoeSim; dev: MqttDevice }> {
  const sim = createGoeSim({ url: w.broker.url, ...options });
  await sim.start();
  w.cleanups.push(() => sim.close());
  const dev = createMqttDevice(
    { type: 'goe', topicPrefix: options.topicPrefix },
    { connection: w.connection, clock: w.clock, logger: silentLogger() },
    { staleAfterS: 120, requestTimeoutMs: 2000 },
  );
  w.cleanups.push(() => dev.close());
  await eventually(async () => expect(await dev.energyMeter!.readEnergyKwh(AbortSignal.timeout(500))).toBe(0));
  return { sim, dev };
}

/** Moves the world's clock and the simulator on by `ms`. */
export async function stepGoe(w: MqttDeviceWorld, sim: GoeSim, ms: number): Promise<void> {
  await w.clock.advance(ms);
  await sim.advance(ms);
}
