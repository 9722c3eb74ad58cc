/**
 * Fault (e): the clock steps back 20 minutes and forward 2 hours between restarts (NTP
 * corrections), and a run crosses the spring DST change (2026-03-29, 02:00 → 03:00 in Oslo).
 * No crash, no duplicate hour rows, no hour counted twice, and plans lay out the 23-hour day.
 */
import { afterAll, expect, it } from 'vitest';
import { localTimeToUtcMs } from '../../src/core/zoned-time.js';
import { hourMs, localTime, secretLeaks, spawnDaemon, stopAll, waitUntilSim, writeConfig, type DaemonProcess, type World } from '../helpers/daemon-harness.js';
import { errorLines, faultOverrides, faultWorld, readStore, wallSeconds } from './common.js';

afterAll(stopAll, 30_000);

/** The tank's element is 2 kW: no hour can hold more than 2 kWh unless it was counted twice. */
const maxTankKwhPerHour = 2 * 1.001;

async function runFor(world: World, untilMs: number, clockOffsetMs: number, configPath: string): Promise<DaemonProcess> {
  const d = spawnDaemon(world, { configPath, clockOffsetMs });
  await d.waitForLog((l) => l.msg === 'wattshift started');
  await waitUntilSim(world, untilMs);
  d.kill('SIGTERM');
  const exit = await d.exited;
  expect(exit.code, d.rawOutput.slice(-10).join('\n')).toBe(0);
  return d;
}

function hourRows(world: World, fromMs: number, toMs: number) {
  return readStore(world, (s) => ({ rows: s.readHourly('device:tank', fromMs, toMs), integrity: s.integrityCheck() }));
}

it('survives NTP steps back by 20 minutes and forward by 2 hours', async () => {
  const t0 = Date.now();
  const world = await faultWorld('ntp');
  const configPath = writeConfig(world, faultOverrides);
  const runs = [
    await runFor(world, localTime(world, 0, 11, 30), 0, configPath),
    await runFor(world, localTime(world, 0, 12), -20 * 60_000, configPath),
    await runFor(world, localTime(world, 0, 12, 30), 2 * hourMs, configPath),
    // Back to the right time: a step back of two hours.
    await runFor(world, localTime(world, 0, 13, 30), 0, configPath),
  ];
  const { rows, integrity } = hourRows(world, world.startMs - hourMs, localTime(world, 0, 18));
  expect(integrity.ok).toBe(true);
  expect(rows.length).toBeGreaterThan(0);
  expect(new Set(rows.map((r) => r.hourStartMs)).size).toBe(rows.length);
  for (const r of rows) {
    expect(r.kwh).toBeGreaterThanOrEqual(0);
    expect(r.kwh, `hour ${new Date(r.hourStartMs).toISOString()}`).toBeLessThanOrEqual(maxTankKwhPerHour);
  }
  expect(errorLines(runs)).toEqual([]);
  expect(secretLeaks(world, runs)).toEqual([]);
  process.stderr.write(`fault clock-steps: ${wallSeconds(t0)} s wall; hours ${rows.map((r) => `${new Date(r.hourStartMs).toISOString().slice(11, 13)}Z:${r.quality}:${r.kwh.toFixed(3)}`).join(' ')}\n`);
}, 150_000);

it('runs across the spring DST change and plans the 23-hour day', async () => {
  const t0 = Date.now();
  const startMs = localTimeToUtcMs(2026, 3, 29, 0, 'Europe/Oslo', 30);
  const world = await faultWorld('dst', { startMs });
  const configPath = writeConfig(world, faultOverrides);
  const midnight29 = localTimeToUtcMs(2026, 3, 29, 0, 'Europe/Oslo', 0);
  const midnight30 = localTimeToUtcMs(2026, 3, 30, 0, 'Europe/Oslo', 0);
  expect(midnight30 - midnight29).toBe(23 * hourMs);

  const before = await runFor(world, startMs + hourMs, 0, configPath);
  const plan = readStore(world, (s) => s.latestPlan());
  expect(plan).toBeDefined();
  const slots = (plan!.json as { slots: { startMs: number; endMs: number }[] }).slots;
  for (let i = 0; i < slots.length; i++) {
    expect(slots[i]!.endMs - slots[i]!.startMs).toBe(hourMs);
    if (i > 0) expect(slots[i]!.startMs).toBe(slots[i - 1]!.endMs);
  }
  const today = slots.filter((s) => s.startMs >= midnight29 && s.startMs < midnight30);
  const firstToday = today[0]!.startMs;
  expect(today.length).toBe((midnight30 - firstToday) / hourMs);
  const localHours = today.map((s) => new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Oslo', hour: '2-digit', hourCycle: 'h23' }).format(new Date(s.startMs)));
  expect(localHours).not.toContain('02');
  expect(new Set(localHours).size).toBe(localHours.length);

  const across = await runFor(world, localTimeToUtcMs(2026, 3, 29, 4, 'Europe/Oslo', 30), 0, configPath);
  const { rows, integrity } = hourRows(world, startMs - hourMs, startMs + 6 * hourMs);
  expect(integrity.ok).toBe(true);
  expect(new Set(rows.map((r) => r.hourStartMs)).size).toBe(rows.length);
  // 01:00–02:00 CET and 03:00–04:00 CEST are consecutive UTC hours: both rows, one apart.
  const h1 = localTimeToUtcMs(2026, 3, 29, 1, 'Europe/Oslo', 0);
  const h3 = localTimeToUtcMs(2026, 3, 29, 3, 'Europe/Oslo', 0);
  expect(h3 - h1).toBe(hourMs);
  expect(rows.some((r) => r.hourStartMs === h1)).toBe(true);
  expect(rows.some((r) => r.hourStartMs === h3)).toBe(true);
  for (const r of rows) expect(r.kwh).toBeLessThanOrEqual(maxTankKwhPerHour);
  expect(errorLines([before, across])).toEqual([]);
  expect(secretLeaks(world, [before, across])).toEqual([]);
  process.stderr.write(`fault dst: ${wallSeconds(t0)} s wall; ${today.length} slots left in the 23-hour day at ${new Date(firstToday).toISOString()}\n`);
}, 120_000);
