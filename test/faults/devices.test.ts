/**
 * Fault (c), devices, MQTT on a real Mosquitto (TLS, password): a Shelly switches, meters and
 * measures the tank, a go-e charges the car. The charger sends malformed JSON and then the wrong
 * type; the broker stops for 20 minutes, inside a 0 kW cap on the tank, and restarts empty. The
 * Shelly keeps the cap's block by its own `toggle_after`, timed to the cap's end; the daemon
 * reconnects, re-subscribes, republishes its retained state and Home Assistant discovery, and
 * takes control back.
 * Hours read in full equal the simulators' truth, the others are marked partial or gap. It runs the
 * real process: the broker is a process of its own the simulation kernel cannot see into, and the
 * outage ends through mqtt.js's real-time reconnect timer. The Modbus half runs on the kernel
 * (test/kernel-faults/devices-modbus.test.ts).
 */
import mqtt from 'mqtt';
import { readFileSync } from 'node:fs';
import { afterAll, expect, it } from 'vitest';
import { localAt } from '../../src/demo/environment.js';
import type { HourlyEnergyRow } from '../../src/store/types.js';
import {
  hourMs,
  localTime,
  sampleTruth,
  secretLeaks,
  stampLagKwh,
  spawnDaemon,
  stopAll,
  truthByHour,
  waitUntilSim,
  writeConfig,
  type World,
} from '../helpers/daemon-harness.js';
import {
  deviceTransitions,
  errorLines,
  expectHourVsTruth,
  faultOverrides,
  faultWorld,
  januaryDay,
  logsWith,
  readInFull,
  readStore,
  simTimeOf,
  tankLpc,
  wallSeconds,
} from './common.js';

afterAll(stopAll, 30_000);

const started = (l: { msg?: string }): boolean => l.msg === 'wattshift started';

/** Hour rows of a device: unique, each against the truth (see expectHourVsTruth). */
function checkHours(
  world: World,
  device: 'tank' | 'car',
  untilMs: number,
  tolerances: { absTolKwh: number; estimatedTolKwh: number },
): HourlyEnergyRow[] {
  const rows = readStore(world, (s) => s.readHourly(`device:${device}`, world.startMs - hourMs, untilMs));
  const truth = truthByHour(world)[device];
  expect(new Set(rows.map((r) => r.hourStartMs)).size).toBe(rows.length);
  for (const r of rows) expectHourVsTruth(r, truth.get(r.hourStartMs) ?? 0, tolerances);
  return rows;
}

/** The tank's element (2 kW): during a late stamp (see stampLagKwh), or three minutes if estimated. */
const tankTolerances = (world: World) => ({ absTolKwh: Math.max(0.0005, stampLagKwh(world, 2)), estimatedTolKwh: 0.1 });
const hourOf = (rows: readonly HourlyEnergyRow[], hourStartMs: number): HourlyEnergyRow | undefined =>
  rows.find((r) => r.hourStartMs === hourStartMs);
const qualityOf = (rows: readonly HourlyEnergyRow[], hourStartMs: number): string | undefined => hourOf(rows, hourStartMs)?.quality;
const brief = (rows: readonly HourlyEnergyRow[]): string =>
  rows.map((r) => `${new Date(r.hourStartMs).toISOString().slice(11, 13)}Z:${r.quality}`).join(' ');

it('rides out a Mosquitto restart and garbage from an MQTT charger', async () => {
  const t0 = Date.now();
  const startMs = localAt(januaryDay, 0, 10);
  const world = await faultWorld('devices-mqtt', {
    startMs,
    ownBroker: 'mosquitto',
    tank: 'shelly',
    chargerStepMs: 10_000,
    plugs: [{ atMs: startMs - hourMs, battery: { capacityKwh: 60, socPct: 20, targetSocPct: 100, efficiency: 0.9 } }],
  });
  const lpc = await tankLpc(world, [11, 12]);
  const sampler = sampleTruth(world);
  const daemon = spawnDaemon(world, { configPath: writeConfig(world, faultOverrides) });
  await daemon.waitForLog(started);
  const mqttConfig = world.config.mqtt!;
  const client = await mqtt.connectAsync(world.broker!.url, {
    username: String(mqttConfig.username),
    password: String(mqttConfig.password),
    ca: readFileSync(String(mqttConfig.ca)),
    reconnectPeriod: 200,
  });
  try {
    // The car charges at full current through everything (a user's boost).
    await client.publishAsync('wattshift/car/set', JSON.stringify({ boostMinutes: 240 }), { qos: 1 });

    // The charger's energy counter: malformed JSON inside 10:00, the wrong type across 11:00.
    const charger = world.charger;
    const garbage: [string, number, number][] = [
      ['{"eto":', localTime(world, 0, 10, 20), localTime(world, 0, 10, 26)],
      ['"12 kWh"', localTime(world, 0, 10, 50), localTime(world, 0, 11, 10)],
    ];
    // Each episode lasts until the daemon has said the charger is down, and the next begins only
    // once it has said it recovered: the daemon's state, not the clock, ends them.
    const carLines = (msg: string) => (l: { msg?: string; device?: unknown }) => l.device === 'car' && l.msg === msg;
    for (const [payload, fromMs, toMs] of garbage) {
      await waitUntilSim(world, fromMs);
      const seenBefore = daemon.logs.length;
      charger.corrupt('eto', payload);
      await daemon.waitForLog((l) => daemon.logs.indexOf(l) >= seenBefore && carLines('device down; putting it in its safe state')(l));
      await waitUntilSim(world, toMs);
      const downAt = daemon.logs.length;
      charger.corrupt('eto', null);
      await daemon.waitForLog((l) => daemon.logs.indexOf(l) >= downAt && carLines('device recovered')(l));
    }

    // The broker stops from 11:20 to 11:40 and restarts empty (no persistence).
    const downMs = localTime(world, 0, 11, 20);
    const upMs = localTime(world, 0, 11, 40);
    await waitUntilSim(world, downMs);
    await world.broker!.stop();
    await waitUntilSim(world, upMs);
    const upReal = Date.now();
    await world.broker!.start();
    const reconnected = await daemon.waitForLog((l) => l.msg === 'MQTT broker connected' && Date.parse(String(l['time'])) >= upReal, 20_000);

    // Everything the daemon keeps retained is there again: availability and discovery.
    const retained = new Map<string, string>();
    client.on('message', (topic, payload) => retained.set(topic, payload.toString()));
    await client.subscribeAsync(['wattshift/availability', 'homeassistant/#'], { qos: 1 });
    await waitUntilSim(world, localTime(world, 0, 13, 2));
    expect(retained.get('wattshift/availability')).toBe('online');
    expect([...retained.keys()].filter((t) => t.startsWith('homeassistant/') && t.endsWith('/config')).length).toBeGreaterThan(5);
    daemon.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
    sampler.stop();

    // Garbage: rejected at the boundary, so never a counter jump in the metering; the charger
    // down once per episode with its code, recovered once.
    expect(logsWith([daemon], (l) => l.code === 'METER_DISCONTINUITY')).toEqual([]);
    expect(deviceTransitions(world, [daemon], 'car', localTime(world, 0, 10, 15), localTime(world, 0, 11, 15))).toEqual({
      down: ['DEVICE_BAD_VALUE', 'DEVICE_BAD_VALUE'],
      recovered: 2,
    });
    // The broker outage: both devices down once (the broker gone, or a read cut off by it) and
    // back once.
    const backBy = Math.min(localTime(world, 0, 12), simTimeOf(world, reconnected) + 5 * 60_000);
    for (const device of ['tank', 'car']) {
      const t = deviceTransitions(world, [daemon], device, downMs, backBy);
      expect(t.down, device).toHaveLength(1);
      expect(['MQTT_UNAVAILABLE', 'DEVICE_TIMEOUT'], device).toContain(t.down[0]);
      expect(t.recovered, device).toBe(1);
    }
    expect(logsWith([daemon], (l) => l.msg === 'MQTT broker connection lost').length).toBeGreaterThan(0);

    // The Shelly: blocked for the LPC before the outage, with its toggle_after running to the
    // cap's end (docs/caps.md), so it stays blocked while the broker is away, and after.
    const between = (from: number, to: number) => sampler.samples.filter((s) => s.atMs >= from && s.atMs < to);
    expect(between(lpc.startMs + 10 * 60_000, downMs).some((s) => s.tankBlocked)).toBe(true);
    const away = between(downMs + 11 * 60_000, upMs);
    expect(away.length).toBeGreaterThanOrEqual(5);
    expect(away.filter((s) => !s.tankBlocked)).toEqual([]);
    expect(between(backBy, lpc.endMs).some((s) => s.tankBlocked)).toBe(true);

    // Hours: 12:00 read in full for both; the hours with garbage or the outage are partial.
    // A pushed counter is metered when its message is taken in; on this 400× clock a CPU stall
    // of the daemon delays that by up to ~30 simulated seconds (milliseconds at real speed),
    // which at 11 kW moves up to 0.1 kWh across an hour boundary.
    const tankRows = checkHours(world, 'tank', lpc.endMs, tankTolerances(world));
    const carRows = checkHours(world, 'car', lpc.endMs, { absTolKwh: 0.1, estimatedTolKwh: 0.1 });
    expect(readInFull(hourOf(tankRows, localTime(world, 0, 12))), brief(tankRows)).toBe(true);
    expect(readInFull(hourOf(carRows, localTime(world, 0, 12))), brief(carRows)).toBe(true);
    expect(truthByHour(world).car.get(localTime(world, 0, 12))).toBeGreaterThan(5);
    for (const h of [10, 11]) expect(qualityOf(carRows, localTime(world, 0, h)), brief(carRows)).toBe('partial');

    expect(errorLines([daemon])).toEqual([]);
    expect(secretLeaks(world, [daemon])).toEqual([]);
    process.stderr.write(`fault devices (MQTT): ${wallSeconds(t0)} s wall; tank ${brief(tankRows)}; car ${brief(carRows)}\n`);
  } finally {
    await client.endAsync();
  }
}, 150_000);
