/**
 * Comfort windows end to end: the composed daemon against the sandbox and the simulated Modbus
 * tank on an accelerated clock, with "70 °C by 01:30 on weekdays" in its config. The planner knows
 * the simulated household's draws (EN 16147 "M", the evening baths included), so on a Friday the
 * simulated tank holds the temperature at 01:30 after them; on a Saturday nothing heats for it, and
 * the tank stays well below (nothing but the draws asks for heat before the night).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acceleratedClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { parseConfig } from '../src/config/load.js';
import { buildApp, type App } from '../src/app.js';
import { createSparkClient } from '../src/spark/client.js';
import { openStore } from '../src/store/index.js';
import { register } from '../src/registration.js';
import { localAt, startDemoEnvironment, type DemoEnvironment } from '../src/demo/environment.js';
import type { Plan } from '../src/core/types.js';
import { profileMDraws } from '../src/sandbox/devices/tank-physics.js';

const speed = 900;
const targetC = 70;
const logger = silentLogger();
/** The simulator's draws (at UTC minutes of the day) per local winter hour (UTC+1), kWh. */
const drawProfileKwh = new Array<number>(24).fill(0);
for (const d of profileMDraws) {
  const hour = (Math.floor(d.minuteOfDay / 60) + 1) % 24;
  drawProfileKwh[hour] = (drawProfileKwh[hour] ?? 0) + d.kwh;
}

interface Run {
  env: DemoEnvironment;
  app: App;
  dir: string;
}
let run: Run | undefined;

afterEach(async () => {
  await run?.app.stop();
  await run?.env.close();
  if (run) rmSync(run.dir, { recursive: true, force: true });
  run = undefined;
});

/**
 * Runs the daemon from 20:00 local on the day of `noonUtcMs` to 01:30 the next night; returns the
 * tank's temperature at 01:30, the hottest it was from 23:00 on, and every plan the daemon made.
 */
async function night(noonUtcMs: number): Promise<{ atDeadlineC: number; maxLateC: number; plans: Plan[] }> {
  const startMs = localAt(noonUtcMs, 0, 20);
  const clock = acceleratedClock(startMs, speed);
  const dir = mkdtempSync(join(tmpdir(), 'wattshift-comfort-'));
  const env = await startDemoEnvironment({ clock, startMs, dataDir: dir, logger });
  const devices = env.config.devices!.map((d) =>
    d.kind === 'hotWaterTank'
      ? { ...d, model: { ...d.model, legionella: { enabled: false }, drawProfileKwh, comfort: [{ cron: '30 1 * * 1-5', tempC: targetC }] } }
      : d,
  );
  const { config } = parseConfig({ ...env.config, devices, planner: { horizonHours: 24 } });
  const spark = createSparkClient({ ...config.spark, clock, logger });
  const store = openStore({ path: config.storage.path, clock });
  await register(config, { spark, store, logger, nowMs: clock.nowMs() });
  store.close();
  await spark.close();
  const app = buildApp(config, { logger, clock, controlTickMs: 60_000, deviceTimeoutMs: 2_000 * speed });
  run = { env, app, dir };
  await app.start();
  const deadline = localAt(startMs, 1, 1, 30);
  const plans: Plan[] = [];
  // The first plan is made before the first reading, from the floor: it may heat the first two
  // (frozen) slots, whatever the windows. From 23:00 on, after the evening's baths, only plans made
  // on measured temperatures have acted.
  const lateFromMs = localAt(startMs, 0, 23);
  let maxLateC = -Infinity;
  while (clock.nowMs() < deadline) {
    await clock.sleep(Math.min(5 * 60_000, deadline - clock.nowMs()));
    const p = app.currentPlan();
    if (p && plans[plans.length - 1] !== p) plans.push(p);
    if (clock.nowMs() >= lateFromMs) maxLateC = Math.max(maxLateC, env.tank.state().tempC);
  }
  // Three hours are plenty for the 12 K; a daemon that took longer to make its first plan ran on an overloaded machine.
  const firstPlanMs = plans[0]?.createdMs ?? Infinity;
  if (firstPlanMs > localAt(startMs, 0, 22, 30))
    throw new Error(`the first plan came at ${new Date(firstPlanMs).toISOString()} on the simulated clock (machine overloaded?)`);
  return { atDeadlineC: env.tank.state().tempC, maxLateC, plans };
}

describe('comfort windows in the running daemon', () => {
  it("on a weekday the tank holds the window's temperature at 01:30, and the plan says why it heats", async () => {
    // Thursday 15 January 2026 20:00 to Friday 01:30; the demo tank starts at 58 °C.
    const friday = await night(Date.UTC(2026, 0, 15, 12));
    expect(friday.atDeadlineC).toBeGreaterThanOrEqual(targetC);
    const first = friday.plans[0];
    expect(first?.tanks?.tank?.comfort?.[0]).toMatchObject({
      atMs: Date.UTC(2026, 0, 16, 0, 30),
      tempC: targetC,
      label: `hot water ≥ ${targetC} °C by 01:30`,
      met: true,
    });
    expect(first?.slots.some((s) => s.reason.includes(`for hot water ≥ ${targetC} °C by 01:30`))).toBe(true);
  }, 120_000);

  it('on a Saturday nothing heats for it', async () => {
    // Friday 16 January 20:00 to Saturday 01:30: the next occurrence is Monday's, beyond the horizon.
    const saturday = await night(Date.UTC(2026, 0, 16, 12));
    expect(saturday.plans.length).toBeGreaterThan(0);
    for (const p of saturday.plans) {
      expect(p.tanks?.tank?.comfort).toBeUndefined();
      expect(p.slots.every((s) => !s.reason.includes('01:30') && !s.binding.includes('comfort'))).toBe(true);
    }
    // In the hours before 01:30 the tank does not get to the window's temperature.
    expect(saturday.maxLateC).toBeLessThan(targetC);
    expect(saturday.atDeadlineC).toBeLessThan(targetC);
  }, 120_000);
});
