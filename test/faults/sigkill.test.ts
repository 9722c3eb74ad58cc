/**
 * Fault (d): SIGKILL at twelve seeded random moments over a simulated day, restarting at once each
 * time. The database stays intact, no report is lost or sent twice, and no hour is counted twice:
 * every hour the daemon read in full equals the ground truth.
 */
import { afterAll, expect, it } from 'vitest';
import { checkReports, hourMs, localTime, secretLeaks, spawnDaemon, stopAll, truthByHour, waitUntilSim, writeConfig, type DaemonProcess } from '../helpers/daemon-harness.js';
import { errorLines, faultOverrides, faultWorld, priceCurve, readStore, tankLpc, wallSeconds } from './common.js';
import { rng } from '../../src/core/prng.js';

afterAll(stopAll, 30_000);


it('survives twelve SIGKILLs over a simulated day without losing, duplicating or double-counting anything', async () => {
  const t0 = Date.now();
  const world = await faultWorld('sigkill', { speed: 800, startLocal: [9, 0] });
  const curve = await priceCurve(world, [12, 13, 14, 15, 16, 17, 18, 19, 20, 21], [-0.4, -0.6, 0.1, 0.2, 0.3, -0.2, 0.4, 0.5, 0.1, -0.1]);
  const lpc = await tankLpc(world, [18]);
  const configPath = writeConfig(world, faultOverrides);

  // Twelve moments in [10:00, 08:00 next day], at least 50 simulated minutes apart.
  // Seeded, so the kill moments are the same on every run.
  const random = rng(20260114);
  const from = localTime(world, 0, 10);
  const to = localTime(world, 1, 8);
  const kills: number[] = [];
  while (kills.length < 12) {
    const at = Math.round(from + random() * (to - from));
    if (kills.every((k) => Math.abs(k - at) >= 50 * 60_000)) kills.push(at);
  }
  kills.sort((a, b) => a - b);

  const all: DaemonProcess[] = [];
  let daemon = spawnDaemon(world, { configPath });
  all.push(daemon);
  const downFrom: number[] = [];
  for (const at of kills) {
    await waitUntilSim(world, at);
    downFrom.push(world.clock.nowMs());
    daemon.kill('SIGKILL');
    expect((await daemon.exited).signal).toBe('SIGKILL');
    daemon = spawnDaemon(world, { configPath });
    all.push(daemon);
  }
  await waitUntilSim(world, localTime(world, 1, 9));
  daemon.kill('SIGTERM');
  expect((await daemon.exited).code).toBe(0);
  // Every incarnation got going (none died on its own).
  for (const d of all) expect(d.logs.some((l) => l.msg === 'wattshift started'), d.rawOutput.slice(-10).join('\n')).toBe(true);

  const end = localTime(world, 1, 9);
  const { integrity, rows, notAccepted, acceptedKeys } = readStore(world, (s) => ({
    integrity: s.integrityCheck(),
    rows: s.readHourly('device:tank', world.startMs - hourMs, end),
    notAccepted: s.listReports({ states: ['pending', 'sending', 'rejected'] }),
    acceptedKeys: s.listReports({ states: ['accepted'] }).map((r) => r.idempotencyKey),
  }));
  expect(integrity.ok, integrity.messages.join('\n')).toBe(true);

  // Hours: unique, and every hour read in full equals the truth (none counted twice).
  expect(new Set(rows.map((r) => r.hourStartMs)).size).toBe(rows.length);
  const truth = truthByHour(world).tank;
  const measured = rows.filter((r) => r.quality === 'measured');
  expect(measured.length).toBeGreaterThanOrEqual(8);
  // Downtimes on the simulated clock: from each kill to the next incarnation's first tick.
  const simOf = (iso: unknown): number => world.startMs + (Date.parse(String(iso)) - world.realOriginMs) * world.speed;
  const downtimes = downFrom.map((from, i) => [from, simOf(all[i + 1]!.logs.find((l) => l.msg === 'running')?.['time']) + 2 * 60_000] as const);
  // An hour whose boundaries saw no downtime (±15 min, the longest interval the metering splits
  // across a boundary by interpolation) is read in full and must be exact; the others must at least
  // not hold more than the element can deliver (nothing counted twice).
  const nearDowntime = (h: number): boolean =>
    downtimes.some(([a, b]) => [h, h + hourMs].some((edge) => a < edge + 15 * 60_000 && b > edge - 15 * 60_000));
  const clean = measured.filter((r) => !nearDowntime(r.hourStartMs));
  expect(clean.length).toBeGreaterThanOrEqual(4);
  for (const r of clean) {
    const t = truth.get(r.hourStartMs) ?? 0;
    expect(Math.abs(r.kwh - t), `hour ${new Date(r.hourStartMs).toISOString()}: ${r.kwh} vs truth ${t}`).toBeLessThanOrEqual(Math.max(0.001 * t, 0.0005));
  }
  for (const r of rows) expect(r.kwh, `hour ${new Date(r.hourStartMs).toISOString()}`).toBeLessThanOrEqual(2 * 1.001);
  const incomplete = new Set(rows.filter((r) => r.quality !== 'measured').map((r) => r.hourStartMs));
  const interpolated = new Set(rows.filter((r) => nearDowntime(r.hourStartMs)).map((r) => r.hourStartMs));

  // Reports: each sent exactly once, none left behind; the sandbox has every one the DB marks accepted.
  expect(notAccepted).toEqual([]);
  const sandboxReports = world.env.sandbox.acceptedReports(String(world.config.spark.clientId));
  expect(sandboxReports.length).toBe(acceptedKeys.length);
  const check = checkReports(world, { gapHours: incomplete, skipHours: interpolated, absTolKwh: { car: Number.POSITIVE_INFINITY } });
  expect(check.problems).toEqual([]);
  expect(check.usageByEvent.get(curve.id)).toBe(1);
  expect(check.acksByEvent.get(lpc.id)).toHaveLength(1);

  expect(errorLines(all)).toEqual([]);
  expect(secretLeaks(world, all)).toEqual([]);
  process.stderr.write(
    `fault sigkill: ${wallSeconds(t0)} s wall, ${kills.length} kills, ${measured.length}/${rows.length} tank hours complete (${clean.length} away from restarts, exact), ${sandboxReports.length} reports accepted\n`,
  );
}, 240_000);
