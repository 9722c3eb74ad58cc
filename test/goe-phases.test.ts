/**
 * go-e phase switching over a real broker (aedes): the adapter writes `psm` only when it must
 * change and reads `pnp`; the simulator switches its real phase count per `psm`, no sooner than its
 * minimum toggle wait, pauses across a toggle while charging and draws with the new phase count.
 */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../src/log.js';
import { createMqttDevice } from '../src/devices/mqtt/index.js';
import { superviseDevice } from '../src/devices/supervisor.js';
import { createGoeSim, type GoeSimOptions } from '../src/sandbox/devices/goe-sim.js';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';

const t0 = Date.UTC(2025, 0, 6, 0, 0, 0);
const sig = () => new AbortController().signal;
const quick = () => AbortSignal.timeout(500);
const w = useMqttDeviceWorld(t0, { reconnectPeriodMs: 100 });

async function world(options: Partial<GoeSimOptions> = {}) {
  const sim = createGoeSim({
    url: w.broker.url,
    topicPrefix: 'go-eCharger/ps1',
    startMs: t0,
    phases: 3,
    amp: 16,
    phaseSwitch: true,
    minToggleWaitMs: 60_000,
    switchPauseMs: 5_000,
    plugs: [{ atMs: t0, battery: { capacityKwh: 60, socPct: 20 } }],
    ...options,
  });
  await sim.start();
  w.cleanups.push(() => sim.close());
  const dev = createMqttDevice(
    { type: 'goe', topicPrefix: 'go-eCharger/ps1' },
    { connection: w.connection, clock: w.clock, logger: silentLogger() },
    { staleAfterS: 120, requestTimeoutMs: 2000 },
  );
  w.cleanups.push(() => dev.close());
  await eventually(async () => expect((await dev.evStateReader!.readEvState(quick())).plugged).toBe(true));
  await dev.chargeCurrentLimit!.setCurrentA(16, sig());
  const step = async (ms: number) => {
    await w.clock.advance(ms);
    await sim.advance(ms);
  };
  return { sim, dev, step };
}

describe('go-e phase switching (psm, pnp)', () => {
  it('writes psm once per change; pnp follows after the pause, and the car draws on the new phase count', async () => {
    const { sim, dev, step } = await world();
    await eventually(async () => expect((await dev.evStateReader!.readEvState(quick())).phases).toBe(3));
    expect(sim.powerW).toBe(16 * 3 * 230);
    for (let i = 0; i < 3; i++) await dev.phaseSwitch!.setPhases(1, sig());
    expect([sim.psm, sim.setsOf('psm'), sim.changesOf('psm')]).toEqual([1, 1, 1]);
    // Charging: the charger pauses across the toggle (5 s), then charges on one phase.
    expect([sim.phasesNow, sim.powerW]).toEqual([3, 0]);
    await step(5_000);
    expect([sim.phasesNow, sim.powerW]).toEqual([1, 16 * 230]);
    await eventually(async () => expect((await dev.evStateReader!.readEvState(quick())).phases).toBe(1));
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(quick())).toBe(16 * 230));
    // Back to 3 phases at once: psm is written, but the charger toggles only 60 s after its last toggle.
    await dev.phaseSwitch!.setPhases(3, sig());
    expect([sim.psm, sim.setsOf('psm')]).toEqual([2, 2]);
    await step(50_000);
    expect(sim.phasesNow).toBe(1);
    await step(10_000); // 60 s since the toggle: the pause begins
    expect(sim.powerW).toBe(0);
    await step(5_000);
    expect([sim.phasesNow, sim.powerW]).toEqual([3, 16 * 3 * 230]);
    await eventually(async () => expect((await dev.evStateReader!.readEvState(quick())).phases).toBe(3));
    expect(sim.setsOf('psm')).toBe(2);
  });

  it('through the supervisor: a phase count the charger has is not written again (a persisted setting)', async () => {
    const { sim, dev } = await world({ psm: 2 });
    await eventually(async () => expect((await dev.evStateReader!.readEvState(quick())).phases).toBe(3));
    const sup = superviseDevice(
      { id: 'car', kind: 'evCharger', capabilities: dev, safeCurrentA: 6, leaseMs: 600_000, readTimeoutMs: 2000 },
      { clock: w.clock, logger: silentLogger() },
    );
    for (let i = 0; i < 5; i++) await sup.applyPhases!(3);
    expect(sim.setsOf('psm')).toBe(0); // the charger already says 2 (force 3-phase)
    for (let i = 0; i < 5; i++) await sup.applyPhases!(1);
    expect(sim.setsOf('psm')).toBe(1);
  });

  it('a charger without phase switching publishes no pnp and refuses psm', async () => {
    const { sim, dev } = await world({ phaseSwitch: false });
    expect(await dev.evStateReader!.readEvState(quick())).not.toHaveProperty('phases');
    await expect(dev.phaseSwitch!.setPhases(1, AbortSignal.timeout(1000))).rejects.toBeDefined();
    expect([sim.psm, sim.phasesNow]).toEqual([0, 3]);
  });
});
