/**
 * End to end: the real daemon process against the sandbox and the simulated tank and charger on
 * an accelerated clock. A price curve with negative deltas and a 0 kW LPC on the tank; the daemon
 * is SIGKILLed in the middle and restarted. Every accepted report must equal the simulators'
 * ground truth, no report may be lost or sent twice, the tank must stay above its floor and off
 * during the LPC, and the LPC acknowledgement must arrive before the event starts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  hourMs,
  localTime,
  registerHome,
  sampleTruth,
  spawnDaemon,
  startWorld,
  stopAll,
  truthByHour,
  waitUntilSim,
  writeConfig,
  checkReports,
  secretLeaks,
  type DaemonProcess,
  type World,
} from './helpers/daemon-harness.js';
import { tempDir } from './helpers/temp-dir.js';
import { localAt } from '../src/demo/environment.js';
import { openStore } from '../src/store/index.js';

const speed = 400;
// A 24-hour horizon keeps each planning run short: on an accelerated clock the planner's CPU time
// is simulated time in which the daemon reads nothing.
const plannerOverrides = { planner: { horizonHours: 24 } };
// A January Wednesday, 10:00 in Oslo.
const startMs = localAt(Date.UTC(2026, 0, 14, 12), 0, 10);
const floorC = 45;

afterAll(stopAll, 30_000);

/** Log lines at error level that are expected: none so far. */
function unexpectedErrors(d: DaemonProcess): unknown[] {
  return d.logs.filter((l) => l.level === 'error' || l.level === 'fatal');
}

describe('the daemon end to end', () => {
  it('acts on a price curve and an LPC, survives a SIGKILL, and reports exactly the metered energy once', async () => {
    const dataDir = tempDir('wattshift-e2e-');
    const world: World = await startWorld({
      startMs,
      speed,
      dataDir,
      // The car arrives at 11:30 today and stays, so the curve's cheap hours can charge it.
      chargerStepMs: 2_000,
      plugs: [{ atMs: localAt(startMs, 0, 11, 30), battery: { capacityKwh: 60, socPct: 35, targetSocPct: 100, efficiency: 0.9 } }],
    });
    const reg = await registerHome(world);
    const tankRes = reg.resources['tank']!;
    const carRes = reg.resources['car']!;
    const loc = reg.locationId;

    // Price curve for 12:00–16:00 local with some negative deltas.
    const curveHours = [12, 13, 14, 15].map((h) => localTime(world, 0, h));
    const deltas = [-0.4, -0.8, 0.2, 0.3];
    const curve = await world.spark.simulatePriceCurve({
      targets: [
        { resourceId: tankRes, locationId: loc },
        { resourceId: carRes, locationId: loc },
      ],
      priceCurveDelta: {
        points: curveHours.map((h, i) => ({ timestamp: new Date(h).toISOString(), price: deltas[i]! })),
        currency: 'NOK',
        energyUnit: 'kWh',
        resolution: '01:00:00',
      },
      priceArea: 'NO4',
    });
    // LPC: the tank at 0 kW from 14:00 to 16:00.
    const lpcHours = [14, 15].map((h) => localTime(world, 0, h));
    const lpc = await world.spark.simulateResourceLpc({
      resources: [
        {
          resource: { resourceId: tankRes, locationId: loc },
          points: lpcHours.map((h) => ({ timestamp: new Date(h).toISOString(), maxPowerInKiloWatts: 0 })),
        },
      ],
    });
    const lpcStartMs = lpcHours[0]!;
    const lpcEndMs = lpcHours.at(-1)! + hourMs;

    const sampler = sampleTruth(world, 60_000);
    const config = writeConfig(world, plannerOverrides);
    const first = spawnDaemon(world, { configPath: config });
    await first.waitForLog((l) => l.msg === 'wattshift started', 30_000);
    // The curve's first hour must be read in full; a machine this slow cannot run the scenario.
    expect(world.clock.nowMs(), 'the daemon started too late on the simulated clock (machine overloaded?)').toBeLessThan(localTime(world, 0, 11, 45));

    // SIGKILL just after an hour boundary (the tank heats in this hour), restart at once: the gap
    // stays inside one hour, whose energy must still come out exact.
    await waitUntilSim(world, localTime(world, 0, 12, 5));
    first.kill('SIGKILL');
    const killed = await first.exited;
    expect(killed.signal).toBe('SIGKILL');
    const second = spawnDaemon(world, { configPath: config });
    await second.waitForLog((l) => l.msg === 'wattshift started', 30_000);

    await waitUntilSim(world, localTime(world, 0, 16, 40));
    second.kill('SIGTERM');
    const stopped = await second.exited;
    sampler.stop();
    expect(stopped.code).toBe(0);

    // The daemon's log: no error lines.
    const errors = [first, second].flatMap(unexpectedErrors);
    expect(errors).toEqual([]);
    expect(secretLeaks(world, [first, second])).toEqual([]);

    // Reports: each equals the ground truth, none twice, none missing.
    // The tank's counter is polled over Modbus: every hour exact to 0.1 % and 2 Wh (below). The charger pushes its
    // counter over MQTT and the daemon stamps the last value it received when it reads it; on a
    // 400× clock a CPU stall of the daemon (a planning run) is minutes of simulated time in which
    // that value ages, so an hour boundary can move up to ~30 s × 11 kW between two hours (and in
    // or out of the event at its ends). At real speed that is a few Wh.
    // The tank's counter is stamped when its Modbus answer arrives, a few ms of real time after the
    // tick at the hour boundary: 1–2 s of simulated time at 400×. When the heater switches in the
    // minute around a boundary (it now stops exactly at its slot's target), the interpolated
    // boundary value can move ~1 Wh (2 kW × 1.5 s) across it; at real speed that is under 0.01 Wh.
    const check = checkReports(world, { absTolKwh: { car: 0.1, tank: 0.002 } });
    const diagnostics = (): string => {
      const db = openStore({ path: String(world.config.storage!.path), readOnly: true });
      try {
        const rows = ['tank', 'car'].flatMap((d) => db.readHourly(`device:${d}`, startMs - hourMs, startMs + 12 * hourMs));
        return JSON.stringify({ hourly: rows, truth: { tank: [...truthByHour(world).tank], car: [...truthByHour(world).car] } });
      } finally {
        db.close();
      }
    };
    expect(check.problems, check.problems.length > 0 ? diagnostics() : '').toEqual([]);
    const truth = truthByHour(world);
    const tankInCurve = curveHours.reduce((s, h) => s + (truth.tank.get(h) ?? 0), 0);
    const tankInLpc = lpcHours.reduce((s, h) => s + (truth.tank.get(h) ?? 0), 0);
    // The scenario must exercise a usage report (the tank heats under the negative deltas; how much
    // depends on the plan: 0.3–0.6 kWh since heating stops at each slot's target, re-plans or not).
    expect(tankInCurve).toBeGreaterThan(0.2);
    expect(check.usageByEvent.get(curve.id)).toBe(1);
    expect(check.pointsCompared).toBeGreaterThan(0);
    // The LPC: acknowledged once, before it started; no consumption in it, so no usage report.
    const acks = check.acksByEvent.get(lpc.id) ?? [];
    expect(acks).toHaveLength(1);
    expect(acks[0]!).toBeLessThan(lpcStartMs);
    expect(tankInLpc).toBe(0);
    expect(check.usageByEvent.get(lpc.id)).toBeUndefined();

    // The daemon's own view agrees: both events settled, nothing left in the outbox.
    const store = openStore({ path: String(world.config.storage!.path), readOnly: true });
    try {
      const states = new Map(store.listEvents().map((e) => [e.eventId, e.state]));
      expect(states.get(curve.id)).toBe('done'); // its report was accepted
      expect(states.get(lpc.id)).toBe('done');
      const pending = store.listReports({ states: ['pending', 'sending', 'rejected'] });
      expect(pending).toEqual([]);
      expect(store.integrityCheck().ok).toBe(true);
    } finally {
      store.close();
    }

    // Truth sampled while it ran: never below the floor, off through the LPC, never above the limit.
    expect(sampler.samples.length).toBeGreaterThan(200);
    const cold = sampler.samples.filter((s) => s.tankC < floorC - 0.5);
    expect(cold).toEqual([]);
    const duringLpc = sampler.samples.filter((s) => s.atMs >= lpcStartMs + 60_000 && s.atMs < lpcEndMs);
    expect(duringLpc.length).toBeGreaterThan(50);
    expect(duringLpc.filter((s) => s.tankPowerW > 0)).toEqual([]);
    const limitW = Number(world.config.site.locationLimitKw) * 1000;
    expect(sampler.samples.filter((s) => s.tankPowerW + s.chargerPowerW > limitW)).toEqual([]);
  }, 120_000);
});
