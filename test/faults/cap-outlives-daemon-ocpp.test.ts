/**
 * Fault: the daemon is killed (SIGKILL) at the start of a 0 kW cap on an OCPP charger whose car
 * charges in a session the charger started itself (a card), and nothing restarts it. The charger
 * must keep the car at 0 A to the window's end, by the ChargePointMaxProfile (validFrom/validTo)
 * the daemon put into it, although the lease of the daemon's own limit ends ten minutes after the
 * kill (without the cap profile the charger would go back to its safe 6 A); and it must let the car
 * charge again after. The proof is the simulated charge point's own offered current and energy
 * integral, sampled every five simulated minutes. The cap is acknowledged for that reason.
 */
import { afterAll, expect, it } from 'vitest';
import { createOcppChargePointSim } from '../../src/sandbox/devices/ocpp-charge-point-sim.js';
import { findFreePort } from '../../src/sandbox/devices/modbus-tank.js';
import { hourMs, spawnDaemon, stopAll, waitUntilSim, writeConfig, type World } from '../helpers/daemon-harness.js';
import { errorLines, faultOverrides, faultWorld, targetAnswer, wallSeconds } from './common.js';

afterAll(stopAll, 30_000);

const minuteMs = 60_000;
const password = 'fault-cap-ocpp-secret-1';
const started = (l: { msg?: string }): boolean => l.msg === 'wattshift started';

/** A 0 kW LPC on the car for local hours 11:00 to 13:00 of the first day. */
async function carLpc(world: World): Promise<{ id: string; startMs: number; endMs: number }> {
  const reg = world.registration!;
  const startMs = world.startMs + hourMs;
  const hoursMs = [startMs, startMs + hourMs];
  const ev = await world.spark.simulateResourceLpc({
    resources: [
      {
        resource: { resourceId: reg.resources['car']!, locationId: reg.locationId },
        points: hoursMs.map((h) => ({ timestamp: new Date(h).toISOString(), maxPowerInKiloWatts: 0 })),
      },
    ],
  });
  return { id: ev.id, startMs, endMs: startMs + 2 * hourMs };
}

it('holds a 0 kW cap to its end after a SIGKILL: OCPP ChargePointMaxProfile (validFrom/validTo)', async () => {
  const t0 = Date.now();
  const world = await faultWorld('cap-ocpp');
  const port = await findFreePort();
  world.config.devices = world.config.devices?.map((d) =>
    d.kind === 'evCharger' ? { ...d, staleAfterS: 900, safeCurrentA: 6, charger: { type: 'ocpp', chargePointId: 'cp-fault', password } } : d,
  );
  const lpc = await carLpc(world);
  const daemon = spawnDaemon(world, { configPath: writeConfig(world, { ...faultOverrides, ocpp: { host: '127.0.0.1', port } }) });
  await daemon.waitForLog(started);
  // The car is plugged in with its card from the start: the charger starts its own session.
  const sim = createOcppChargePointSim({
    url: `ws://127.0.0.1:${port}/ocpp`,
    identity: 'cp-fault',
    password,
    startMs: world.clock.nowMs(),
    plugs: [{ atMs: world.clock.nowMs(), idTag: 'CARD-FAULT', battery: { capacityKwh: 77, socPct: 10 } }],
    reconnectMs: { initial: 50, max: 500 },
  });
  await sim.start();
  const stop = new AbortController();
  // The charge point's time follows the world's clock.
  const following = (async () => {
    while (!stop.signal.aborted) {
      await waitUntilSim(world, world.clock.nowMs() + 10_000);
      const behind = world.clock.nowMs() - sim.nowMs;
      if (behind > 0) await sim.advance(behind);
    }
  })();

  try {
    // The charger holds a cap by itself as a charging profile: the cap is promised. The answer waits
    // for the charge point to be heard from; it is not judged on the state assumed at the start.
    expect(await targetAnswer(world, lpc.id, 'car')).toBe('acknowledged');
    await waitUntilSim(world, lpc.startMs);
    // Killed during the car's session once the cap profile is in the charger, or ten minutes into
    // the window whatever it holds: the charge point's own meter judges.
    const capProfile = () => sim.profiles().find((p) => p.profile.chargingProfilePurpose === 'ChargePointMaxProfile');
    for (;;) {
      if (sim.transactionId !== undefined && (capProfile() !== undefined || world.clock.nowMs() >= lpc.startMs + 10 * minuteMs)) break;
      expect(world.clock.nowMs(), "the car's session never started").toBeLessThan(lpc.startMs + 30 * minuteMs);
      await waitUntilSim(world, world.clock.nowMs() + minuteMs);
    }
    daemon.kill('SIGKILL');
    await daemon.exited;
    const killedAtMs = sim.nowMs;

    // From here the charge point runs on its own time, five simulated minutes at a time, to a
    // minute before the window's end: nothing offered, nothing drawn (its own energy integral).
    stop.abort();
    await following;
    const atKillWh = sim.totalWh;
    const during: { atMs: number; offeredA: number; wh: number }[] = [];
    while (sim.nowMs < lpc.endMs - minuteMs) {
      await sim.advance(Math.min(5 * minuteMs, lpc.endMs - minuteMs - sim.nowMs));
      during.push({ atMs: sim.nowMs, offeredA: sim.offeredA, wh: sim.totalWh - atKillWh });
    }
    expect(during.length).toBeGreaterThan(12);
    expect(
      during.filter((s) => s.offeredA > 0 || s.wh > 1),
      `the car charged before ${new Date(lpc.endMs).toISOString()}`,
    ).toEqual([]);

    // The profile ends with the window: the charger goes back to its safe current by itself.
    await sim.advance(lpc.endMs + 5 * minuteMs - sim.nowMs);
    expect(sim.offeredA, 'the safe current after the window').toBe(6);
    expect(errorLines([daemon])).toEqual([]);
    process.stderr.write(
      `fault cap (OCPP): killed ${((killedAtMs - lpc.startMs) / minuteMs).toFixed(0)} min into a 2 h cap, held to its end; ${wallSeconds(t0)} s wall\n`,
    );
  } finally {
    stop.abort();
    await following.catch(() => undefined);
    await sim.close().catch(() => undefined);
  }
}, 300_000);
