/**
 * Field truth: the real daemon process against devices that behave as their vendors
 * document them, on an accelerated clock. A plain Modbus relay board without a release timer
 * (Waveshare-style coil) with an SDM120 on the heater; a go-e charger on MQTT API v2 that publishes
 * a key only when it changes. A three-hour window whose effective price is negative, then an hour
 * with a positive delta; the car plugs in mid-slot, more re-plans come at odd minutes, and the
 * Modbus gateway goes away for a quarter of an hour.
 *
 * It shows: every slot gets the energy its plan asks for (within one control tick of the element's
 * power), a safe state never starts the charger in an hour the plan left empty, settings are
 * written only when they change, and the tank is heated to its maximum in the negative window.
 */
import mqtt from 'mqtt';
import { afterAll, describe, expect, it } from 'vitest';
import {
  hourMs,
  localTime,
  registerHome,
  sampleTruth,
  spawnDaemon,
  stampLagKwh,
  startWorld,
  stopAll,
  truthByHour,
  waitUntilSim,
  writeConfig,
  type DaemonLogLine,
  type TruthSample,
} from './helpers/daemon-harness.js';
import { tempDir } from './helpers/temp-dir.js';
import { localAt } from '../src/demo/environment.js';

const speed = 300;
// A January Wednesday, 09:00 in Oslo: up to two simulated hours for the daemon to start on a
// loaded machine before the scenario begins at 11:00.
const startMs = localAt(Date.UTC(2026, 0, 14, 12), 0, 9);
const maxC = 75;
const hysteresisK = 5; // the simulated tank's own thermostat
const elementKw = 2;
/** The daemon's control tick on a simulated clock (src/cli/run.ts). */
const tickMs = 60_000;
const tickKwh = (elementKw * tickMs) / hourMs;
/** The demo's charger at full power: 16 A on three phases at 230 V. */
const carKw = 11.04;

afterAll(stopAll, 30_000);

/** What each plan made while the daemon ran asked of the slot it was made in (its log line). */
interface SlotTargets {
  atLine: number;
  slotStartMs: number;
  tankKwh: number;
  evKwh: number;
  reason: string;
}

function slotTargets(logs: readonly DaemonLogLine[]): SlotTargets[] {
  const out: SlotTargets[] = [];
  logs.forEach((l, atLine) => {
    const r = l as DaemonLogLine & { slotStartMs?: number; slotKwh?: Record<string, number>; reason?: string };
    if (l.msg !== 'plan updated' || r.slotStartMs === undefined) return;
    out.push({ atLine, slotStartMs: r.slotStartMs, tankKwh: r.slotKwh?.tank ?? 0, evKwh: r.slotKwh?.car ?? 0, reason: r.reason ?? '' });
  });
  return out;
}

const inSlot = (samples: readonly TruthSample[], fromMs: number, toMs: number): TruthSample[] =>
  samples.filter((s) => s.atMs >= fromMs && s.atMs < toMs);

describe('field truth: vendor-faithful devices, re-plans, a negative window and a Modbus outage', () => {
  it('keeps every slot to its plan, starts nothing in a safe state, writes on change and fills the tank when paid to', async () => {
    const world = await startWorld({
      startMs,
      speed,
      dataDir: tempDir('wattshift-field-'),
      tank: 'plain-relay',
      chargerStepMs: 2_000,
      // The car comes home at 11:20, in the middle of a slot: a re-plan there.
      plugs: [{ atMs: localAt(startMs, 0, 11, 20), battery: { capacityKwh: 60, socPct: 35, targetSocPct: 100, efficiency: 0.9 } }],
    });
    // Stale after 10 minutes: far shorter than the dear hour in which no key of the waiting car
    // changes (the field's 120 s would be 0.4 s of real time at this speed, less than a stall of a
    // loaded test machine).
    // The car wants 15 kWh: the paid window holds it with room to spare, so the plan leaves the dear
    // hour empty however late a loaded machine re-plans after it plugs in.
    world.config.devices = world.config.devices?.map((d) =>
      d.kind === 'evCharger' ? { ...d, staleAfterS: 600, model: { ...d.model, targetEnergyKwh: 15 } } : d,
    );
    const reg = await registerHome(world);
    const loc = reg.locationId;
    const resources = [
      { resourceId: reg.resources['tank']!, locationId: loc },
      { resourceId: reg.resources['car']!, locationId: loc },
    ];
    // 11:00–14:00 paid to consume (the delta outweighs spot, fees and VAT), 14:00–15:00 dear.
    const curveHours = [11, 12, 13, 14].map((h) => localTime(world, 0, h));
    const deltas = [-4, -4, -4, 1];
    await world.spark.simulatePriceCurve({
      targets: resources,
      priceCurveDelta: {
        points: curveHours.map((h, i) => ({ timestamp: new Date(h).toISOString(), price: deltas[i]! })),
        currency: 'NOK',
        energyUnit: 'kWh',
        resolution: '01:00:00',
      },
      priceArea: 'NO4',
    });

    const sampler = sampleTruth(world, 30_000);
    const daemon = spawnDaemon(world, { configPath: writeConfig(world, { planner: { horizonHours: 24 } }) });
    await daemon.waitForLog((l) => l.msg === 'wattshift started', 30_000);
    expect(world.clock.nowMs(), 'the daemon started too late on the simulated clock (machine overloaded?)').toBeLessThan(localTime(world, 0, 10, 40));

    // Re-plans at odd minutes inside slots: a command asks for one (mode auto changes nothing else).
    const client = await mqtt.connectAsync(world.broker!.url);
    const replanAt = [
      [10, 41],
      [11, 47],
      [12, 13],
      [12, 52],
      [13, 29],
      [14, 37],
    ] as const;
    for (const [h, m] of replanAt) {
      if (h === 14 && m === 37) break;
      await waitUntilSim(world, localTime(world, 0, h, m));
      await client.publishAsync('wattshift/tank/set', 'auto');
    }
    // The Modbus gateway goes away for a quarter of an hour in the dear hour, with the heater blocked.
    await waitUntilSim(world, localTime(world, 0, 14, 10));
    await world.env.tank.stopServer();
    await waitUntilSim(world, localTime(world, 0, 14, 25));
    await world.env.tank.startServer();
    await waitUntilSim(world, localTime(world, 0, 14, 37));
    await client.publishAsync('wattshift/tank/set', 'auto');
    await client.endAsync();
    await waitUntilSim(world, localTime(world, 0, 15, 5));
    daemon.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
    sampler.stop();
    const samples = sampler.samples;
    const targets = slotTargets(daemon.logs);
    const truth = truthByHour(world);

    // Soft assertions from here: a failure shows every broken promise at once.
    // 1. A re-plan inside a slot keeps the slot's target: every plan made in a slot asks at least the
    //    energy of it that the first one did (the car plugging in at 11:20 included); more only where
    //    the heater already took more (paid to consume), which the target then counts. A re-plan
    //    counts what the slot took so far from readings that a loaded machine stamps late (at this
    //    speed, simulated seconds): it may ask that much less.
    const firstSlot = localTime(world, 0, 11);
    const slots = [0, 1, 2, 3].map((i) => firstSlot + i * hourMs);
    const midSlot = targets.filter(
      (t) => slots.includes(t.slotStartMs) && targets.some((u) => u.slotStartMs === t.slotStartMs && u.atLine < t.atLine),
    );
    expect.soft(midSlot.length).toBeGreaterThanOrEqual(5);
    for (const t of midSlot) {
      const first = targets.find((u) => u.slotStartMs === t.slotStartMs)!;
      expect
        .soft(t.tankKwh, `re-plan (${t.reason}) in the slot at ${new Date(t.slotStartMs).toISOString()}`)
        .toBeGreaterThanOrEqual(first.tankKwh - 0.005 - stampLagKwh(world, elementKw));
    }
    //    And each slot gets that energy, within one tick of the element's power and a late stamp;
    //    where consuming is paid the heater may run on, and where its own thermostat opened it may
    //    stop short.
    const slotTolKwh = tickKwh + stampLagKwh(world, elementKw);
    const checked: string[] = [];
    for (const slot of slots) {
      const planned = targets.filter((t) => t.slotStartMs === slot).at(-1);
      expect.soft(planned, `no plan for the slot at ${new Date(slot).toISOString()}`).toBeDefined();
      const got = truth.tank.get(slot) ?? 0;
      const thermostatOpen = inSlot(samples, slot, slot + hourMs).some((s) => !s.tankBlocked && s.tankPowerW === 0);
      const where = `${new Date(slot).toISOString()}: planned ${planned!.tankKwh.toFixed(3)} kWh, metered ${got.toFixed(3)} kWh`;
      if (!thermostatOpen) expect.soft(got, where).toBeGreaterThanOrEqual(planned!.tankKwh - slotTolKwh);
      if (slot >= localTime(world, 0, 14)) expect.soft(got, where).toBeLessThanOrEqual(planned!.tankKwh + slotTolKwh);
      checked.push(where);
    }
    expect.soft(checked.some((c) => !c.includes('planned 0.000'))).toBe(true);

    // 2. The tank is at its maximum by the end of the paid window: the relay blocked it there only
    //    at its maximum (and 1 K below, not to chatter); beyond that its own thermostat (75 °C, 5 K
    //    hysteresis) decided.
    const windowStart = localTime(world, 0, 11);
    const windowEnd = localTime(world, 0, 14);
    const paid = inSlot(samples, windowStart + tickMs, windowEnd);
    expect.soft(paid.filter((s) => s.tankBlocked && s.tankC < maxC - 1.5)).toEqual([]);
    expect.soft(Math.max(...paid.map((s) => s.tankC))).toBeGreaterThanOrEqual(maxC - 0.5);
    expect.soft(paid.at(-1)!.tankC).toBeGreaterThanOrEqual(maxC - hysteresisK);

    // 3. No safe state started a load: the car waits, paused, through the dear hour, its keys
    //    unchanged for an hour; the daemon never took that silence for a dead charger.
    const dear = inSlot(samples, windowEnd + 2 * tickMs, windowEnd + hourMs);
    expect.soft(dear.length).toBeGreaterThan(50);
    expect.soft(dear.filter((s) => s.chargerPowerW > 0)).toEqual([]);
    // A plan's target for its current slot counts what the slot already took: the car may run on
    // into the dear hour until control's next tick (one tick of full power at most, two on a
    // loaded machine), and the simulator, catching up with the clock after a stall, integrates its
    // lag at the power it had. Rehearsals under CI load measured 0.66 and 1.31 kWh while the samples
    // from two ticks on showed the charger at 0 W (checked above): up to 2 s of wall-clock stall is
    // allowed (5 × the file's 0.4 s stamp lag). The plan asks nothing beyond that (below); a charger
    // left running would put up to 11 kWh here.
    const carInDear = truth.car.get(windowEnd) ?? 0;
    expect.soft(carInDear, 'the car ran on into the dear hour').toBeLessThanOrEqual((2 * carKw * tickMs) / hourMs + 5 * stampLagKwh(world, carKw));
    expect
      .soft(targets.filter((t) => t.slotStartMs === windowEnd).at(-1)?.evKwh ?? 0, 'scenario: the plan leaves the dear hour empty')
      .toBeLessThan(carInDear + 0.05);
    expect.soft(daemon.logs.filter((l) => l.msg?.startsWith('device down') && (l as { device?: string }).device === 'car')).toEqual([]);

    // 4. Writes only on change: each go-e write changed a setting, and the coil was written once per
    //    change, plus a resynchronisation after the outage (and the first write of the run).
    const goeSets = world.charger.setsOf('amp') + world.charger.setsOf('frc');
    const goeChanges = world.charger.changesOf('amp') + world.charger.changesOf('frc');
    expect.soft(goeSets).toBeGreaterThan(0);
    expect.soft(goeSets - goeChanges).toBeLessThanOrEqual(2);
    const coil = world.env.tank.writes();
    expect.soft(coil.coil).toBeGreaterThan(0);
    expect.soft(coil.timer).toBe(0);
    expect.soft(coil.coil - coil.coilChanges).toBeLessThanOrEqual(3);

    // 5. The outage: the relay held its block (it has no timer), the daemon said so and recovered.
    const outage = inSlot(samples, localTime(world, 0, 14, 12), localTime(world, 0, 14, 24));
    expect.soft(outage.every((s) => s.tankBlocked)).toBe(true);
    const tankDown = daemon.logs.findIndex((l) => l.msg?.startsWith('device down') && (l as { device?: string }).device === 'tank');
    expect.soft(tankDown).toBeGreaterThanOrEqual(0);
    expect.soft(daemon.logs.slice(tankDown).some((l) => l.msg === 'device recovered' && (l as { device?: string }).device === 'tank')).toBe(true);
    expect.soft(daemon.logs.filter((l) => l.level === 'error' || l.level === 'fatal')).toEqual([]);
  }, 180_000);
});
