/**
 * Fault (c): the MQTT broker stops and comes back; the Modbus tank vanishes for a simulated hour
 * and returns; the tank's meter answers garbage for a quarter of an hour. Safe states are reached,
 * the tank's outage is logged once each way, hours read in full are exact and the others are
 * marked gap or partial.
 */
import { afterAll, expect, it } from 'vitest';
import { hourMs, localTime, sampleTruth, secretLeaks, spawnDaemon, stopAll, truthByHour, waitUntilSim, writeConfig, type DaemonLogLine } from '../helpers/daemon-harness.js';
import { errorLines, faultOverrides, faultWorld, floorC, logsWith, readStore, wallSeconds } from './common.js';

afterAll(stopAll, 30_000);

it('reaches safe states through a broker restart, a vanished Modbus device and garbage readings', async () => {
  const t0 = Date.now();
  const world = await faultWorld('devices', { ownBroker: true });
  const broker = world.broker!;
  const tank = world.env.tank;
  const sampler = sampleTruth(world);
  const daemon = spawnDaemon(world, { configPath: writeConfig(world, faultOverrides) });
  await daemon.waitForLog((l) => l.msg === 'wattshift started');

  // The broker stops for 20 simulated minutes and restarts empty (no retained messages).
  await waitUntilSim(world, localTime(world, 0, 11, 10));
  const brokerDownReal = Date.now();
  await broker.stop();
  await waitUntilSim(world, localTime(world, 0, 11, 30));
  await broker.start();
  await daemon.waitForLog((l) => l.msg === 'MQTT broker connected' && Date.parse(String(l['time'])) > brokerDownReal, 20_000);

  // The tank vanishes from 13:00 to 14:00.
  const goneMs = localTime(world, 0, 13);
  const backMs = localTime(world, 0, 14);
  await waitUntilSim(world, goneMs);
  const goneReal = Date.now();
  await tank.stopServer();
  await waitUntilSim(world, backMs);
  await tank.startServer();
  const backReal = Date.now();
  await daemon.waitForLog((l) => l.msg === 'device recovered' && l['device'] === 'tank' && Date.parse(String(l['time'])) >= backReal - 50, 20_000);

  // Garbage from the meter for a quarter of an hour.
  await waitUntilSim(world, localTime(world, 0, 14, 30));
  tank.setFault('out-of-range');
  await waitUntilSim(world, localTime(world, 0, 14, 45));
  tank.setFault(null);
  await waitUntilSim(world, localTime(world, 0, 16, 10));
  daemon.kill('SIGTERM');
  expect((await daemon.exited).code).toBe(0);
  sampler.stop();

  // The broker outage was seen and healed.
  expect(logsWith([daemon], (l) => l.msg === 'MQTT broker connection lost').length).toBeGreaterThan(0);

  // The tank's outage: down once and recovered once within it; relay released (heater allowed).
  const inOutage = (l: DaemonLogLine): boolean => {
    const t = Date.parse(String(l['time']));
    return t >= goneReal && t <= backReal + 3000;
  };
  const downs = logsWith([daemon], (l) => l.msg === 'device down; putting it in its safe state' && l['device'] === 'tank' && inOutage(l));
  const ups = logsWith([daemon], (l) => l.msg === 'device recovered' && l['device'] === 'tank' && inOutage(l));
  expect(downs).toHaveLength(1);
  expect(ups).toHaveLength(1);
  // Its lease (10 min) runs out on the device: from then on the relay is not blocked.
  const afterLease = sampler.samples.filter((s) => s.atMs >= goneMs + 12 * 60_000 && s.atMs < backMs);
  expect(afterLease.length).toBeGreaterThan(20);
  expect(afterLease.filter((s) => s.tankBlocked)).toEqual([]);
  expect(sampler.samples.filter((s) => s.tankC < floorC - 0.5)).toEqual([]);

  // Hourly energy: measured hours exact, the outage hour marked, nothing counted twice.
  const truth = truthByHour(world).tank;
  const rows = readStore(world, (s) => s.readHourly('device:tank', world.startMs - hourMs, localTime(world, 0, 17)));
  expect(new Set(rows.map((r) => r.hourStartMs)).size).toBe(rows.length);
  const measured = rows.filter((r) => r.quality === 'measured');
  // Read in full: 11:00 (the broker outage does not touch the tank) and 15:00 local.
  expect(measured.map((r) => r.hourStartMs), JSON.stringify(rows)).toEqual(expect.arrayContaining([localTime(world, 0, 11), localTime(world, 0, 15)]));
  for (const r of measured) {
    const t = truth.get(r.hourStartMs) ?? 0;
    expect(Math.abs(r.kwh - t), `hour ${new Date(r.hourStartMs).toISOString()}: ${r.kwh} vs truth ${t}`).toBeLessThanOrEqual(Math.max(0.001 * t, 0.0005));
  }
  // The hour the device was away is a gap; the hours it left and came back in (and the one with
  // garbage) are partial, their kWh a lower bound.
  expect(rows.find((r) => r.hourStartMs === goneMs)?.quality).toBe('gap');
  for (const h of [goneMs - hourMs, backMs]) expect(rows.find((r) => r.hourStartMs === h)?.quality).toBe('partial');
  for (const r of rows.filter((x) => x.quality === 'partial')) expect(r.kwh).toBeLessThanOrEqual((truth.get(r.hourStartMs) ?? 0) + 0.0005);

  expect(errorLines([daemon])).toEqual([]);
  expect(secretLeaks(world, [daemon])).toEqual([]);
  process.stderr.write(`fault devices: ${wallSeconds(t0)} s wall; hours ${rows.map((r) => `${new Date(r.hourStartMs).toISOString().slice(11, 13)}Z:${r.quality}`).join(' ')}\n`);
}, 150_000);
