/**
 * A go-e charger that takes a set only after wattshift stopped waiting for its answer (its link
 * stalled past the command's deadline, then delivered everything at once): the command after it
 * must still reach the charger, or the late set becomes the charger's setting while wattshift
 * believes another. The go-e simulator on aedes behind a gate that holds what the broker sends it,
 * the go-e adapter (and its supervisor) on a manual clock.
 */
import { describe, expect, it } from 'vitest';
import { createMqttDevice } from '../src/devices/mqtt/index.js';
import { superviseDevice } from '../src/devices/supervisor.js';
import { silentLogger } from '../src/log.js';
import { createGoeSim } from '../src/sandbox/devices/goe-sim.js';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';
import { goeHeard } from './helpers/loop-world.js';
import { startTcpGate } from './helpers/tcp-gate.js';

const t0 = Date.UTC(2026, 0, 12, 17, 0, 0);
const timeoutMs = 2000;
const w = useMqttDeviceWorld(t0);

/** A charging go-e at `amp` whose link to the broker can stall, with its adapter and supervisor. */
async function charger(amp: number) {
  const gate = await startTcpGate(w.broker.port);
  w.cleanups.push(() => gate.close());
  const goe = createGoeSim({
    url: `mqtt://127.0.0.1:${gate.port}`,
    topicPrefix: 'go-eCharger/late',
    startMs: t0,
    phases: 3,
    amp,
    frc: 2,
    maxCurrentA: 16,
    plugs: [{ atMs: t0, battery: { capacityKwh: 60, socPct: 20 } }],
  });
  await goe.start();
  w.cleanups.push(() => goe.close());
  const dev = createMqttDevice(
    { type: 'goe', topicPrefix: 'go-eCharger/late' },
    { connection: w.connection, clock: w.clock, logger: silentLogger() },
    { requestTimeoutMs: timeoutMs },
  );
  w.cleanups.push(() => dev.close());
  await goeHeard(dev, goe);
  const sup = superviseDevice(
    { id: 'car', kind: 'evCharger', capabilities: dev, safeCurrentA: 6, leaseMs: 600_000, readTimeoutMs: timeoutMs },
    { clock: w.clock, logger: silentLogger() },
  );
  await sup.applyCurrent(amp);

  /** Runs a command whose set reaches the charger only once its deadline has passed. */
  const stalled = async (command: () => Promise<void>): Promise<void> => {
    gate.hold();
    const timedOut = expect(command()).rejects.toMatchObject({ code: 'DEVICE_TIMEOUT' });
    await eventually(() => expect(gate.heldBytes).toBeGreaterThan(0));
    await w.clock.advance(timeoutMs);
    await timedOut;
  };
  /** The stall ends: the charger takes every set it was sent, in order. Resolves once it has taken the late one. */
  const linkBack = async (): Promise<void> => {
    gate.release();
    await eventually(() => expect(goe.changesOf('amp')).toBeGreaterThan(0));
  };
  return { goe, dev, sup, stalled, linkBack };
}

describe('a go-e that takes a set after its deadline', () => {
  it('a lowered current it takes late does not outlast the command after it: the charger ends where wattshift believes it is', async () => {
    const c = await charger(16);
    await c.stalled(() => c.sup.applyCurrent(6));
    // The next tick wants 16 A again, which the charger still shows: the supervisor writes it (a
    // failed command is followed by a resynchronising one), and it must reach the charger.
    await c.sup.applyCurrent(16);
    await c.linkBack();
    await eventually(() => expect(c.goe.amp).toBe(16));
    expect(c.sup.health().currentA).toBe(16);
  });

  it('a raise it takes late does not outlast a safe limit after it: the charger ends at the limit', async () => {
    const c = await charger(6);
    await c.stalled(() => c.dev.chargeCurrentLimit!.setCurrentA(16, AbortSignal.timeout(5000)));
    // The safe state's limit, 6 A, which the charger still shows.
    await c.dev.chargeCurrentLimit!.limitCurrentA!(6, AbortSignal.timeout(5000));
    await c.linkBack();
    await eventually(() => expect(c.goe.amp).toBe(6));
    expect(c.goe.powerW).toBe(6 * 3 * 230);
  });
});
