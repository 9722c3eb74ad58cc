/**
 * Fault: the daemon is killed (SIGKILL) at the start of a 0 kW cap on an openWB wallbox in
 * secondary mode, and nothing restarts it. openWB has no timed limit, but its watchdog stops the
 * charge 80 s after the last read (src/sandbox/devices/openwb-secondary-sim.ts), so it holds any
 * cap with wattshift gone, and more: the car does not charge again until wattshift returns. The
 * cap is acknowledged for that reason. The proof is the simulated wallbox's own energy counter and
 * current, sampled every simulated minute.
 */
import { afterAll, expect, it } from 'vitest';
import { findFreePort } from '../../src/sandbox/devices/modbus-tank.js';
import { createOpenWbSecondarySim } from '../../src/sandbox/devices/openwb-secondary-sim.js';
import { hourMs, spawnDaemon, stopAll, waitUntilSim, writeConfig } from '../helpers/daemon-harness.js';
import { errorLines, faultOverrides, faultWorld, targetAnswer, wallSeconds } from './common.js';

afterAll(stopAll, 30_000);

const minuteMs = 60_000;
const started = (l: { msg?: string }): boolean => l.msg === 'wattshift started';

it('holds a 0 kW cap to its end after a SIGKILL: openWB secondary (its watchdog stops the charge)', async () => {
  const t0 = Date.now();
  const world = await faultWorld('cap-openwb');
  const port = await findFreePort();
  const sim = createOpenWbSecondarySim({
    clock: world.clock,
    port,
    plugs: [{ atMs: world.clock.nowMs(), untilMs: world.clock.nowMs() + 24 * hourMs, battery: { capacityKwh: 77, socPct: 10 } }],
  });
  await sim.start();
  world.config.modbus = { ...world.config.modbus, wallbox: { type: 'tcp', host: '127.0.0.1', port, timeoutMs: 2000 } };
  world.config.devices = world.config.devices?.map((d) =>
    d.kind === 'evCharger' ? { ...d, staleAfterS: 900, charger: { type: 'modbus', bus: 'wallbox', unitId: 1, profile: 'openwb-secondary' } } : d,
  );
  // The world starts at 10:00 with the car plugged in. 0 kW on the car for two hours from the
  // second whole hour the daemon runs through: its start takes real seconds, which on a loaded
  // machine are tens of simulated minutes.
  const reg = world.registration!;
  const daemon = spawnDaemon(world, { configPath: writeConfig(world, faultOverrides) });
  try {
    await daemon.waitForLog(started);
    const startMs = Math.ceil(world.clock.nowMs() / hourMs) * hourMs + hourMs;
    const ev = await world.spark.simulateResourceLpc({
      resources: [
        {
          resource: { resourceId: reg.resources['car']!, locationId: reg.locationId },
          points: [startMs, startMs + hourMs].map((h) => ({ timestamp: new Date(h).toISOString(), maxPowerInKiloWatts: 0 })),
        },
      ],
    });
    const lpc = { id: ev.id, startMs, endMs: startMs + 2 * hourMs };
    expect(await targetAnswer(world, lpc.id, 'car')).toBe('acknowledged');

    // Killed ten minutes into the window, once the daemon holds the car at 0 A.
    await waitUntilSim(world, lpc.startMs + 10 * minuteMs);
    while (sim.state().setA > 0) {
      expect(world.clock.nowMs(), 'the car held at 0 A with half the window left').toBeLessThan(lpc.startMs + hourMs);
      await waitUntilSim(world, world.clock.nowMs() + minuteMs);
    }
    daemon.kill('SIGKILL');
    await daemon.exited;
    const atKillMs = world.clock.nowMs();
    const atKill = sim.state();

    // Every simulated minute to the window's end: no current, no energy on the wallbox's counter.
    const during: { atMs: number; setA: number; wh: number }[] = [];
    while (world.clock.nowMs() < lpc.endMs) {
      await waitUntilSim(world, Math.min(world.clock.nowMs() + minuteMs, lpc.endMs));
      const s = sim.state();
      during.push({ atMs: world.clock.nowMs(), setA: s.setA, wh: s.totalWh - atKill.totalWh });
    }
    // As many samples as the loaded machine let the loop take; the wallbox's counter covers the rest.
    expect(during.length).toBeGreaterThan(0);
    expect(
      during.filter((s) => s.setA > 0 || s.wh > 0),
      `the car charged before ${new Date(lpc.endMs).toISOString()}`,
    ).toEqual([]);
    // And after it: the watchdog has stopped the charge until wattshift reads the wallbox again.
    await waitUntilSim(world, lpc.endMs + 15 * minuteMs);
    expect(sim.state()).toMatchObject({ setA: 0, charging: false, watchdogTripped: true });
    expect(errorLines([daemon])).toEqual([]);
    process.stderr.write(
      `fault cap (openWB): killed ${((atKillMs - lpc.startMs) / minuteMs).toFixed(0)} min into a 2 h cap, held to its end and past it; ${wallSeconds(t0)} s wall\n`,
    );
  } finally {
    daemon.kill('SIGKILL');
    await sim.close();
  }
}, 300_000);
