/**
 * Clock steps under a running daemon process (NTP corrections): once, a step back of two days left
 * it on a plan two days ahead for 28 minutes. Now a step back or forward re-plans at once, on the
 * stepped clock, with a plan whose first slot holds the new instant.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it, onTestFailed } from 'vitest';
import { spawnDaemon, stopAll, writeConfig, type DaemonLogLine, type World } from '../helpers/daemon-harness.js';
import { faultOverrides, faultWorld, simTimeOf } from '../faults/common.js';
import { report } from './common.js';

afterAll(stopAll, 30_000);

const dayMs = 86_400_000;

/** Runs a daemon, steps its clock by `stepMs` after it planned once, and returns how fast it re-planned. */
async function stepUnder(world: World, stepMs: number): Promise<{ replanAfterClockS: number; planStartVsNowMin: number }> {
  const atRealMs = Date.now() + 12_000;
  // The daemon's clock starts wrong by -stepMs and the step corrects it to the API's time, as NTP
  // does: after the step the daemon and the API (the sandbox, the forecast) agree again.
  const daemon = spawnDaemon(world, { configPath: writeConfig(world, faultOverrides), clockOffsetMs: -stepMs, clockStep: { atRealMs, stepMs } });
  onTestFailed(() => writeFileSync(join(world.dataDir, `daemon-${stepMs}.log`), daemon.rawOutput.join('\n')));
  await daemon.waitForLog((l) => l.msg === 'plan updated');
  const jump = await daemon.waitForLog((l) => l.code === 'CLOCK_JUMP' && String(l.msg).startsWith('the clock stepped under the plan'), 30_000);
  const replan = await daemon.waitForLog((l: DaemonLogLine) => l.msg === 'plan updated' && String(l['reason']).startsWith('clock step'), 30_000);
  // Prices are fetched again for the new timeline: the plan after them is not a fallback one.
  const priced = await daemon.waitForLog(
    (l) => l.msg === 'plan updated' && daemon.logs.indexOf(l) >= daemon.logs.indexOf(replan) && l['mode'] !== 'fallback',
    30_000,
  );
  daemon.kill('SIGTERM');
  expect((await daemon.exited).code).toBe(0);
  // Real time from the step to the re-plan, in the daemon's clock seconds.
  const replanAfterClockS = ((Date.parse(String(replan['time'])) - atRealMs) * world.speed) / 1000;
  // The daemon's clock at the re-plan: stepped back onto the world's.
  const nowAtReplan = simTimeOf(world, replan);
  const planStartMs = Number(replan['planStartMs'] ?? NaN);
  expect(jump['direction']).toBe(stepMs < 0 ? 'back' : 'forward');
  expect(Number(priced['planStartMs'])).toBe(Number(replan['planStartMs']));
  return { replanAfterClockS, planStartVsNowMin: Number.isFinite(planStartMs) ? (planStartMs - nowAtReplan) / 60_000 : NaN };
}

it('re-plans at once after a step back of two days and a step forward of two hours', async () => {
  const world = await faultWorld('hostile-clock', { speed: 20 });
  const back = await stepUnder(world, -2 * dayMs);
  const forward = await stepUnder(world, 2 * 3_600_000);
  // At the first control tick or two after the step (a tick is 60 s of clock time on the simulated
  // clock, 10 s in service), not at the old timeline's next slot boundary (up to an hour).
  expect(back.replanAfterClockS).toBeLessThan(120);
  expect(forward.replanAfterClockS).toBeLessThan(120);
  // The new plan's first slot holds the stepped instant (hourly slots).
  for (const r of [back, forward]) {
    expect(r.planStartVsNowMin).toBeLessThanOrEqual(0);
    expect(r.planStartVsNowMin).toBeGreaterThan(-60);
  }
  report('clock-step', { back, forward });
}, 150_000);
