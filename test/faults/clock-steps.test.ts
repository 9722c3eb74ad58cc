/**
 * Fault (e): the clock steps back 40 minutes, forward 2 hours and back 2 hours between restarts
 * (NTP corrections), and runs cross both DST changes in Oslo (2026-03-29 02:00 → 03:00 and
 * 2026-10-25 03:00 → 02:00). No crash, no duplicate hour rows, no hour counted twice; each step
 * back is logged once and metering goes on at once on the new time; plans lay out the 23- and the
 * 25-hour day; the two 02:00 hours of the autumn night are kept apart in rows and reports.
 */
import { afterAll, expect, it } from 'vitest';
import { localTimeToUtcMs } from '../../src/core/zoned-time.js';
import type { HourlyEnergyRow } from '../../src/store/types.js';
import {
  checkReports,
  hourMs,
  localTime,
  secretLeaks,
  stampLagKwh,
  spawnDaemon,
  stopAll,
  truthByHour,
  waitUntilSim,
  writeConfig,
  type DaemonProcess,
  type World,
} from '../helpers/daemon-harness.js';
import {
  errorLines,
  expectHourVsTruth,
  faultOverrides,
  faultWorld,
  logsWith,
  priceCurve,
  priceCurveAt,
  readInFull,
  readStore,
  tankLpc,
  wallSeconds,
} from './common.js';

afterAll(stopAll, 30_000);

/**
 * The tank's element is 2 kW: no hour can hold more than 2 kWh unless it was counted twice, give
 * or take the element's draw over how late a reading is stamped (see stampLagKwh).
 */
const elementKw = 2;
const maxTankKwhPerHour = (world: World) => elementKw + stampLagKwh(world, elementKw) + 0.002;
const oslo = 'Europe/Oslo';

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

/** Rows unique, none above what the element can deliver. */
function expectNoHourTwice(world: World, rows: readonly HourlyEnergyRow[]): void {
  expect(rows.length).toBeGreaterThan(0);
  expect(new Set(rows.map((r) => r.hourStartMs)).size).toBe(rows.length);
  for (const r of rows) {
    expect(r.kwh).toBeGreaterThanOrEqual(0);
    expect(r.kwh, `hour ${new Date(r.hourStartMs).toISOString()}`).toBeLessThanOrEqual(maxTankKwhPerHour(world));
  }
}

/**
 * An hour read in full and right: within what the element draws during a late stamp (a boundary
 * reading moved), or in three minutes if estimated.
 */
function expectReadInFull(world: World, r: HourlyEnergyRow | undefined, truthKwh: number): void {
  expect(readInFull(r), JSON.stringify(r)).toBe(true);
  expectHourVsTruth(r!, truthKwh, { absTolKwh: Math.max(0.0005, stampLagKwh(world, elementKw)), estimatedTolKwh: 0.1 });
}

/** Local hour labels ("02") of slot starts. */
function localHours(startsMs: readonly number[]): string[] {
  const fmt = new Intl.DateTimeFormat('en-GB', { timeZone: oslo, hour: '2-digit', hourCycle: 'h23' });
  return startsMs.map((ms) => fmt.format(new Date(ms)));
}

/** The latest plan's slots: contiguous hours; those of the local day [midnight, nextMidnight). */
function planDay(world: World, midnightMs: number, nextMidnightMs: number): number[] {
  const plan = readStore(world, (s) => s.latestPlan());
  expect(plan).toBeDefined();
  const slots = (plan!.json as { slots: { startMs: number; endMs: number }[] }).slots;
  for (let i = 0; i < slots.length; i++) {
    expect(slots[i]!.endMs - slots[i]!.startMs).toBe(hourMs);
    if (i > 0) expect(slots[i]!.startMs).toBe(slots[i - 1]!.endMs);
  }
  const day = slots.filter((s) => s.startMs >= midnightMs && s.startMs < nextMidnightMs).map((s) => s.startMs);
  expect(day.length).toBe((nextMidnightMs - day[0]!) / hourMs);
  return day;
}

it('meters on at once after NTP steps back by 40 minutes and by 2 hours, and forward by 2 hours', async () => {
  const t0 = Date.now();
  const world = await faultWorld('ntp');
  // Held off until 13:00, cheap then: the tank heats in the hour the last run reads in full.
  await tankLpc(world, [10, 11, 12]);
  await priceCurve(world, [13], [-2]);
  const configPath = writeConfig(world, faultOverrides);
  const runs = [
    await runFor(world, localTime(world, 0, 11, 10), 0, configPath),
    // The restart takes simulated minutes: 40 min behind still reads before the last reading.
    await runFor(world, localTime(world, 0, 11, 40), -40 * 60_000, configPath),
    await runFor(world, localTime(world, 0, 12, 10), 2 * hourMs, configPath),
    // Back to the right time: a step back of two hours, then a whole hour read on it.
    await runFor(world, localTime(world, 0, 14, 5), 0, configPath),
  ];
  const { rows, integrity } = hourRows(world, world.startMs - hourMs, localTime(world, 0, 18));
  expect(integrity.ok).toBe(true);
  expectNoHourTwice(world, rows);

  // Each step back is logged once, by the run that saw it, with how far the clock went back.
  const steps = runs.map((d) => logsWith([d], (l) => l.code === 'CLOCK_JUMP').map((l) => Math.round(Number(l['backMs']) / 60_000)));
  expect(steps.map((s) => s.length)).toEqual([0, 1, 0, 1]);
  // (The restart itself takes simulated minutes, so the step seen is shorter than the offset.)
  expect(steps[1]![0]).toBeGreaterThan(0);
  expect(steps[3]![0]).toBeGreaterThanOrEqual(90);

  // On the right clock again, 13:00 is read in full: it replaces the half hour the clock 2 h
  // ahead had put there, and equals the truth. 12:00 (from 12:10) is partial, never above it.
  const truth = truthByHour(world).tank;
  const at = (h: number) => rows.find((r) => r.hourStartMs === localTime(world, 0, h));
  expect(truth.get(localTime(world, 0, 13)) ?? 0).toBeGreaterThan(0.02);
  expectReadInFull(world, at(13), truth.get(localTime(world, 0, 13)) ?? 0);
  expect(at(12)?.quality).toBe('partial');
  expect(at(12)!.kwh).toBeLessThanOrEqual((truth.get(localTime(world, 0, 12)) ?? 0) + 0.0005);

  expect(errorLines(runs)).toEqual([]);
  expect(secretLeaks(world, runs)).toEqual([]);
  process.stderr.write(
    `fault clock-steps: ${wallSeconds(t0)} s wall; hours ${rows.map((r) => `${new Date(r.hourStartMs).toISOString().slice(11, 13)}Z:${r.quality}:${r.kwh.toFixed(3)}`).join(' ')}\n`,
  );
}, 150_000);

it('runs across the spring DST change and plans the 23-hour day', async () => {
  const t0 = Date.now();
  const startMs = localTimeToUtcMs(2026, 3, 29, 0, oslo, 30);
  const midnight29 = localTimeToUtcMs(2026, 3, 29, 0, oslo, 0);
  const midnight30 = localTimeToUtcMs(2026, 3, 30, 0, oslo, 0);
  expect(midnight30 - midnight29).toBe(23 * hourMs);
  const world = await faultWorld('dst-spring', { startMs, speed: 400 });
  const daemon = spawnDaemon(world, { configPath: writeConfig(world, faultOverrides) });
  await daemon.waitForLog((l) => l.msg === 'plan updated');
  const today = planDay(world, midnight29, midnight30);
  const labels = localHours(today);
  expect(labels).not.toContain('02');
  expect(new Set(labels).size).toBe(labels.length);

  await waitUntilSim(world, localTimeToUtcMs(2026, 3, 29, 4, oslo, 5));
  daemon.kill('SIGTERM');
  expect((await daemon.exited).code).toBe(0);
  const { rows, integrity } = hourRows(world, startMs - hourMs, startMs + 6 * hourMs);
  expect(integrity.ok).toBe(true);
  expectNoHourTwice(world, rows);
  // 01:00–02:00 CET and 03:00–04:00 CEST are consecutive UTC hours: both rows, one apart.
  const h1 = localTimeToUtcMs(2026, 3, 29, 1, oslo, 0);
  const h3 = localTimeToUtcMs(2026, 3, 29, 3, oslo, 0);
  expect(h3 - h1).toBe(hourMs);
  expect(rows.some((r) => r.hourStartMs === h1)).toBe(true);
  expect(rows.some((r) => r.hourStartMs === h3)).toBe(true);
  expect(errorLines([daemon])).toEqual([]);
  expect(secretLeaks(world, [daemon])).toEqual([]);
  process.stderr.write(
    `fault dst spring: ${wallSeconds(t0)} s wall; ${today.length} slots left in the 23-hour day at ${new Date(today[0]!).toISOString()}; hours ${rows.map((r) => `${new Date(r.hourStartMs).toISOString().slice(11, 13)}Z:${r.quality}:${r.kwh.toFixed(3)}`).join(' ')}\n`,
  );
}, 120_000);

it('runs across the autumn DST change: the 25-hour day, and the two 02:00 hours apart in rows and reports', async () => {
  const t0 = Date.now();
  // 01:15 CEST; 02:00 CEST is 00:00Z, 02:00 CET is 01:00Z.
  const startMs = Date.UTC(2026, 9, 24, 23, 15);
  const first02 = Date.UTC(2026, 9, 25, 0);
  const second02 = Date.UTC(2026, 9, 25, 1);
  expect(localHours([first02, second02])).toEqual(['02', '02']);
  const midnight25 = localTimeToUtcMs(2026, 10, 25, 0, oslo, 0);
  const midnight26 = localTimeToUtcMs(2026, 10, 26, 0, oslo, 0);
  expect(midnight26 - midnight25).toBe(25 * hourMs);

  // 45 simulated minutes before the first 02:00 hour: at 200× the daemon has 13 wall seconds to
  // start and take its first reading, which a loaded machine needs (at 800× it had 3.4).
  const world = await faultWorld('dst-autumn', { startMs, speed: 200 });
  // Cheap energy in both 02:00 hours: the tank heats through them, and the report must hold both.
  const curve = await priceCurveAt(world, [first02, second02], [-1.5, -1.5]);
  const daemon = spawnDaemon(world, { configPath: writeConfig(world, faultOverrides) });
  await daemon.waitForLog((l) => l.msg === 'plan updated');
  const today = planDay(world, midnight25, midnight26);
  const labels = localHours(today);
  expect(labels.filter((h) => h === '02')).toHaveLength(2);
  expect(new Set(today).size).toBe(today.length);

  // Past the event's end and the report's grace (20 min).
  await waitUntilSim(world, second02 + hourMs + 35 * 60_000);
  daemon.kill('SIGTERM');
  expect((await daemon.exited).code).toBe(0);

  // Hour rows are UTC-keyed: the two 02:00 hours are two rows, each read in full.
  const { rows, integrity } = hourRows(world, startMs - hourMs, second02 + 2 * hourMs);
  expect(integrity.ok).toBe(true);
  expectNoHourTwice(world, rows);
  const truth = truthByHour(world).tank;
  const both = [first02, second02].map((h) => rows.find((r) => r.hourStartMs === h));
  both.forEach((r, i) => {
    expect(truth.get([first02, second02][i]!) ?? 0).toBeGreaterThan(0.5);
    expectReadInFull(world, r, truth.get([first02, second02][i]!) ?? 0);
  });
  // The usage report, sent once: both hours at their own UTC timestamps, as metered (and equal
  // to the truth where measured).
  const estimated = new Set(rows.filter((r) => r.quality === 'estimated').map((r) => r.hourStartMs));
  const check = checkReports(world, { skipHours: estimated, absTolKwh: { tank: stampLagKwh(world, elementKw) } });
  expect(check.problems).toEqual([]);
  expect(check.usageByEvent.get(curve.id)).toBe(1);
  const report = world.env.sandbox.acceptedReports(String(world.config.spark.clientId)).find((r) => r.eventId === curve.id)!;
  const tankPoints = report.payloads.find((p) => p.resourceId === world.registration!.resources['tank'])!.points;
  expect(tankPoints.map((p) => [p.timestampMs, p.kiloWattHours])).toEqual(both.map((r) => [r!.hourStartMs, Math.round(r!.kwh * 1000) / 1000]));

  expect(errorLines([daemon])).toEqual([]);
  expect(secretLeaks(world, [daemon])).toEqual([]);
  process.stderr.write(
    `fault dst autumn: ${wallSeconds(t0)} s wall; ${today.length} slots in the 25-hour day from ${new Date(today[0]!).toISOString()}\n`,
  );
}, 180_000);
