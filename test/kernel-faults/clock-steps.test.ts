/**
 * Fault (e) on the simulation kernel: the gateway's clock steps back 40 minutes, forward 2 hours and back 2 hours between restarts
 * (NTP corrections), and runs cross both DST changes in Oslo (2026-03-29 02:00 → 03:00 and
 * 2026-10-25 03:00 → 02:00). No crash, no duplicate hour rows, no hour counted twice; each step
 * back is logged once and metering goes on at once on the new time; plans lay out the 23- and the
 * 25-hour day; the two 02:00 hours of the autumn night are kept apart in rows and reports.
 */
import { afterEach, expect, it } from 'vitest';
import { localTimeToUtcMs } from '../../src/core/zoned-time.js';
import type { HourlyEnergyRow } from '../../src/store/types.js';
import { checkReports, hourMs, secretLeaks, truthByHour } from '../helpers/daemon-harness.js';
import { errorLines, expectHourVsTruth, logsWith, priceCurve, priceCurveAt, readInFull, tankLpc } from '../faults/common.js';
import { closeFaultHomes, faultHome, type FaultHome, type KernelDaemon } from './fault-home.js';

afterEach(closeFaultHomes, 60_000);

/** The tank's element is 2 kW: no hour can hold more than 2 kWh (to the Wh) unless it was counted twice. */
const elementKw = 2;
const maxTankKwhPerHour = elementKw + 0.0005;
const oslo = 'Europe/Oslo';

/** A daemon on a clock `clockOffsetMs` off the home's, from now until `untilMs`. */
async function runFor(home: FaultHome, untilMs: number, clockOffsetMs: number): Promise<KernelDaemon> {
  const d = await home.startDaemon(home.config, { clockOffsetMs });
  expect(d.running).toBe(true);
  await home.until(untilMs);
  expect(await d.stop(), d.rawOutput.slice(-10).join('\n')).toBe(0);
  return d;
}

function hourRows(home: FaultHome, fromMs: number, toMs: number) {
  return home.readStore((s) => ({ rows: s.readHourly('device:tank', fromMs, toMs), integrity: s.integrityCheck() }));
}

/** Rows unique, none above what the element can deliver. */
function expectNoHourTwice(rows: readonly HourlyEnergyRow[]): void {
  expect(rows.length).toBeGreaterThan(0);
  expect(new Set(rows.map((r) => r.hourStartMs)).size).toBe(rows.length);
  for (const r of rows) {
    expect(r.kwh).toBeGreaterThanOrEqual(0);
    expect(r.kwh, `hour ${new Date(r.hourStartMs).toISOString()}`).toBeLessThanOrEqual(maxTankKwhPerHour);
  }
}

/** An hour read in full and right: to the Wh, or within three minutes of the element if estimated. */
function expectReadInFull(r: HourlyEnergyRow | undefined, truthKwh: number): void {
  expect(readInFull(r), JSON.stringify(r)).toBe(true);
  expectHourVsTruth(r!, truthKwh, { absTolKwh: 0.0005, estimatedTolKwh: 0.1 });
}

/** Local hour labels ("02") of slot starts. */
function localHours(startsMs: readonly number[]): string[] {
  const fmt = new Intl.DateTimeFormat('en-GB', { timeZone: oslo, hour: '2-digit', hourCycle: 'h23' });
  return startsMs.map((ms) => fmt.format(new Date(ms)));
}

/** The latest plan's slots: contiguous hours; those of the local day [midnight, nextMidnight). */
function planDay(home: FaultHome, midnightMs: number, nextMidnightMs: number): number[] {
  const plan = home.readStore((s) => s.latestPlan());
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
  const world = await faultHome('ntp');
  // Held off until 13:00, cheap then: the tank heats in the hour the last run reads in full.
  await tankLpc(world, [10, 11, 12]);
  await priceCurve(world, [13], [-2]);
  const runs = [
    await runFor(world, world.localTime(0, 11, 10), 0),
    // The restart takes simulated minutes: 40 min behind still reads before the last reading.
    await runFor(world, world.localTime(0, 11, 40), -40 * 60_000),
    await runFor(world, world.localTime(0, 12, 10), 2 * hourMs),
    // Back to the right time: a step back of two hours, then a whole hour read on it.
    await runFor(world, world.localTime(0, 14, 5), 0),
  ];
  const { rows, integrity } = hourRows(world, world.startMs - hourMs, world.localTime(0, 18));
  expect(integrity.ok).toBe(true);
  expectNoHourTwice(rows);

  // Each step back is logged once, by the run that saw it, with how far the clock went back.
  const steps = runs.map((d) => logsWith([d], (l) => l.code === 'CLOCK_JUMP').map((l) => Math.round(Number(l['backMs']) / 60_000)));
  expect(steps.map((s) => s.length)).toEqual([0, 1, 0, 1]);
  // A restart takes no time of the home (its stop and its start are held): the step seen is the
  // whole offset, to the minute.
  expect(steps).toEqual([[], [40], [], [120]]);

  // On the right clock again, 13:00 is read in full: it replaces the half hour the clock 2 h
  // ahead had put there, and equals the truth. 12:00 (from 12:10) is partial, never above it.
  const truth = truthByHour(world).tank;
  const at = (h: number) => rows.find((r) => r.hourStartMs === world.localTime(0, h));
  expect(truth.get(world.localTime(0, 13)) ?? 0).toBeGreaterThan(0.02);
  expectReadInFull(at(13), truth.get(world.localTime(0, 13)) ?? 0);
  expect(at(12)?.quality).toBe('partial');
  expect(at(12)!.kwh).toBeLessThanOrEqual((truth.get(world.localTime(0, 12)) ?? 0) + 0.0005);

  expect(errorLines(runs)).toEqual([]);
  expect(secretLeaks(world, runs)).toEqual([]);
}, 150_000);

it('runs across the spring DST change and plans the 23-hour day', async () => {
  const startMs = localTimeToUtcMs(2026, 3, 29, 0, oslo, 30);
  const midnight29 = localTimeToUtcMs(2026, 3, 29, 0, oslo, 0);
  const midnight30 = localTimeToUtcMs(2026, 3, 30, 0, oslo, 0);
  expect(midnight30 - midnight29).toBe(23 * hourMs);
  const world = await faultHome('dst-spring', { startMs });
  const daemon = await world.startDaemon();
  await world.untilLog(daemon, (l) => l.msg === 'plan updated', 60 * 60_000);
  const today = planDay(world, midnight29, midnight30);
  const labels = localHours(today);
  expect(labels).not.toContain('02');
  expect(new Set(labels).size).toBe(labels.length);

  await world.until(localTimeToUtcMs(2026, 3, 29, 4, oslo, 5));
  expect(await daemon.stop()).toBe(0);
  const { rows, integrity } = hourRows(world, startMs - hourMs, startMs + 6 * hourMs);
  expect(integrity.ok).toBe(true);
  expectNoHourTwice(rows);
  // 01:00–02:00 CET and 03:00–04:00 CEST are consecutive UTC hours: both rows, one apart.
  const h1 = localTimeToUtcMs(2026, 3, 29, 1, oslo, 0);
  const h3 = localTimeToUtcMs(2026, 3, 29, 3, oslo, 0);
  expect(h3 - h1).toBe(hourMs);
  expect(rows.some((r) => r.hourStartMs === h1)).toBe(true);
  expect(rows.some((r) => r.hourStartMs === h3)).toBe(true);
  expect(errorLines([daemon])).toEqual([]);
  expect(secretLeaks(world, [daemon])).toEqual([]);
}, 120_000);

it('runs across the autumn DST change: the 25-hour day, and the two 02:00 hours apart in rows and reports', async () => {
  // 01:15 CEST; 02:00 CEST is 00:00Z, 02:00 CET is 01:00Z.
  const startMs = Date.UTC(2026, 9, 24, 23, 15);
  const first02 = Date.UTC(2026, 9, 25, 0);
  const second02 = Date.UTC(2026, 9, 25, 1);
  expect(localHours([first02, second02])).toEqual(['02', '02']);
  const midnight25 = localTimeToUtcMs(2026, 10, 25, 0, oslo, 0);
  const midnight26 = localTimeToUtcMs(2026, 10, 26, 0, oslo, 0);
  expect(midnight26 - midnight25).toBe(25 * hourMs);

  const world = await faultHome('dst-autumn', { startMs });
  // Cheap energy in both 02:00 hours: the tank heats through them, and the report must hold both.
  const curve = await priceCurveAt(world, [first02, second02], [-1.5, -1.5]);
  const daemon = await world.startDaemon();
  await world.untilLog(daemon, (l) => l.msg === 'plan updated', 60 * 60_000);
  const today = planDay(world, midnight25, midnight26);
  const labels = localHours(today);
  expect(labels.filter((h) => h === '02')).toHaveLength(2);
  expect(new Set(today).size).toBe(today.length);

  // Past the event's end and the report's grace (20 min).
  await world.until(second02 + hourMs + 35 * 60_000);
  expect(await daemon.stop()).toBe(0);

  // Hour rows are UTC-keyed: the two 02:00 hours are two rows, each read in full.
  const { rows, integrity } = hourRows(world, startMs - hourMs, second02 + 2 * hourMs);
  expect(integrity.ok).toBe(true);
  expectNoHourTwice(rows);
  const truth = truthByHour(world).tank;
  const both = [first02, second02].map((h) => rows.find((r) => r.hourStartMs === h));
  both.forEach((r, i) => {
    expect(truth.get([first02, second02][i]!) ?? 0).toBeGreaterThan(0.5);
    expectReadInFull(r, truth.get([first02, second02][i]!) ?? 0);
  });
  // The usage report, sent once: both hours at their own UTC timestamps, as metered (and equal
  // to the truth to the Wh where measured).
  const estimated = new Set(rows.filter((r) => r.quality === 'estimated').map((r) => r.hourStartMs));
  const check = checkReports(world, { skipHours: estimated, relTol: 0 });
  expect(check.problems).toEqual([]);
  expect(check.usageByEvent.get(curve.id)).toBe(1);
  const report = world.env.sandbox.acceptedReports(String(world.config.spark.clientId)).find((r) => r.eventId === curve.id)!;
  const tankPoints = report.payloads.find((p) => p.resourceId === world.registration!.resources['tank'])!.points;
  expect(tankPoints.map((p) => [p.timestampMs, p.kiloWattHours])).toEqual(both.map((r) => [r!.hourStartMs, Math.round(r!.kwh * 1000) / 1000]));

  expect(errorLines([daemon])).toEqual([]);
  expect(secretLeaks(world, [daemon])).toEqual([]);
}, 180_000);
