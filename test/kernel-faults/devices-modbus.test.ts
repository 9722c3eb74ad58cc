/**
 * Fault (c), devices, on the simulation kernel, Modbus: the tank's Modbus server vanishes for over
 * an hour and returns, then its meter answers NaN, ±Inf, out-of-range values and Modbus
 * exceptions, and its counter jumps down and back and up and back. The tank gets its safe state
 * from its own release timer; every episode is logged once with its code; garbage never becomes
 * energy; the hours it touched are marked; hours read in full equal the simulator's truth to the Wh.
 * (The MQTT half, on a real Mosquitto, stays in test/faults/devices.test.ts.)
 */
import { afterEach, expect, it } from 'vitest';
import type { HourlyEnergyRow } from '../../src/store/types.js';
import { hourMs, secretLeaks, truthByHour } from '../helpers/daemon-harness.js';
import { errorLines, expectHourVsTruth, floorC, logsWith, readInFull } from '../faults/common.js';
import { closeFaultHomes, faultHome, type FaultHome, type KernelDaemon } from './fault-home.js';

afterEach(closeFaultHomes, 60_000);

/** A device's supervisor transitions (down with its code, recovered) in [fromMs, toMs) of the clock. */
function deviceTransitions(daemon: KernelDaemon, device: string, fromMs: number, toMs: number): { down: string[]; recovered: number } {
  const inWindow = daemon.logs.filter((l) => l['device'] === device && l.atMs >= fromMs && l.atMs < toMs);
  return {
    down: inWindow.filter((l) => l.msg === 'device down; putting it in its safe state').map((l) => String(l.code)),
    recovered: inWindow.filter((l) => l.msg === 'device recovered').length,
  };
}

/** The tank's hour rows: unique, each against the truth (to the Wh; an estimated one within three minutes of the element). */
function checkTankHours(home: FaultHome, untilMs: number): HourlyEnergyRow[] {
  const rows = home.readStore((s) => s.readHourly('device:tank', home.startMs - hourMs, untilMs));
  const truth = truthByHour(home).tank;
  expect(new Set(rows.map((r) => r.hourStartMs)).size).toBe(rows.length);
  for (const r of rows) expectHourVsTruth(r, truth.get(r.hourStartMs) ?? 0, { absTolKwh: 0.0005, estimatedTolKwh: 0.1 });
  return rows;
}

const hourOf = (rows: readonly HourlyEnergyRow[], hourStartMs: number): HourlyEnergyRow | undefined =>
  rows.find((r) => r.hourStartMs === hourStartMs);
const brief = (rows: readonly HourlyEnergyRow[]): string =>
  rows.map((r) => `${new Date(r.hourStartMs).toISOString().slice(11, 13)}Z:${r.quality}`).join(' ');

it('puts a vanished Modbus tank in its safe state and keeps garbage from its meter out of the hours', async () => {
  const home = await faultHome('devices-modbus', { startLocal: [10, 40] });
  const tank = home.env.tank;
  // A meter in service for a while (well within float32's resolution of a Wh).
  tank.physics.resetCounter(900);
  const samples = home.sampleTruth();
  const daemon = await home.startDaemon();
  expect(daemon.running).toBe(true);

  // The tank vanishes from 11:50 to 13:02: 12:00 is never read.
  const goneMs = home.localTime(0, 11, 50);
  const backMs = home.localTime(0, 13, 2);
  await home.until(goneMs);
  await tank.stopServer();
  await home.until(backMs);
  await tank.startServer();

  // Garbage: each for 6 minutes with 4 clean minutes after; then the counter reads 40 kWh low
  // for 2 minutes and, after 2 clean ones, 40 kWh high for 2 minutes.
  const garbage = [
    ['nan', 10, 6],
    ['inf', 20, 6],
    ['out-of-range', 30, 6],
    ['exception', 40, 6],
    ['counter-low', 50, 2],
    ['counter-high', 54, 2],
  ] as const;
  for (const [fault, minute, minutes] of garbage) {
    await home.until(home.localTime(0, 13, minute));
    tank.setFault(fault);
    await home.until(home.localTime(0, 13, minute + minutes));
    tank.setFault(null);
  }
  const endMs = home.localTime(0, 15, 2);
  await home.until(endMs);
  expect(await daemon.stop()).toBe(0);

  // The outage: down once, recovered once. Its release timer (the 10 min lease) runs out on the
  // device: from then on the relay is not blocked.
  expect(deviceTransitions(daemon, 'tank', goneMs, backMs + 5 * 60_000)).toEqual({ down: ['DEVICE_UNREACHABLE'], recovered: 1 });
  const afterLease = samples.filter((s) => s.atMs >= goneMs + 12 * 60_000 && s.atMs < backMs);
  expect(afterLease.length).toBe(60);
  expect(afterLease.filter((s) => s.tankBlocked)).toEqual([]);
  expect(samples.filter((s) => s.tankC < floorC - 0.5)).toEqual([]);

  // Each bad answer: logged once with its code when the device goes down, once when it recovers.
  // A counter that jumps is a valid number: the metering leaves the jumps out and says so once.
  expect(deviceTransitions(daemon, 'tank', home.localTime(0, 13, 10), home.localTime(0, 14))).toEqual({
    down: ['DEVICE_BAD_VALUE', 'DEVICE_BAD_VALUE', 'DEVICE_BAD_VALUE', 'DEVICE_REJECTED'],
    recovered: 4,
  });
  const jumps = logsWith([daemon], (l) => l.code === 'METER_DISCONTINUITY');
  expect(jumps.map((l) => [l['subject'], l['kind']])).toEqual([['device:tank', 'counter-down']]);

  // Hours: 14:00 read in full and exact; 12:00 never read (gap); the hours the tank left, came
  // back and answered garbage in are partial, never above the truth (no jump became energy).
  const rows = checkTankHours(home, endMs);
  expect(readInFull(hourOf(rows, home.localTime(0, 14))), brief(rows)).toBe(true);
  expect(hourOf(rows, home.localTime(0, 12))).toMatchObject({ quality: 'gap', kwh: 0 });
  for (const h of [11, 13]) expect(hourOf(rows, home.localTime(0, h))?.quality, brief(rows)).toBe('partial');

  expect(errorLines([daemon])).toEqual([]);
  expect(secretLeaks(home, [daemon])).toEqual([]);
}, 120_000);
