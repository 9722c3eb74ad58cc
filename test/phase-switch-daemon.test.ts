/**
 * Phase switching in the whole daemon (`buildApp`) on the simulation kernel's virtual clock: the demo world's
 * sandbox API and broker, a go-e charger that switches phases and a HAN meter (AMS reader) with
 * per-phase currents, both simulated on the same clock. The car must charge all it can before
 * 19:00; from 17:10 to 17:40 a 20 A load on L2 and L3 leaves 3 phases under the 6 A minimum:
 * the charger runs 1-phase, then 3-phase again when the room returns, with no line over the main
 * fuse at any sampled instant (but the ticks the loop needs to see a load step).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localAt } from '../src/demo/environment.js';
import { createAmsReaderSim, type AmsReaderSim } from '../src/sandbox/devices/amsreader-sim.js';
import { createGoeSim, type GoeSim } from '../src/sandbox/devices/goe-sim.js';
import { memoryLogger } from './fixtures/modbus/servers.js';
import { demoHome } from './helpers/demo-home.js';
import { goeBehindFuse } from './helpers/fuse-home.js';

const day0 = Date.UTC(2026, 0, 14, 12);
const startMs = localAt(day0, 0, 17, 0);
const heavyFrom = localAt(day0, 0, 17, 10);
const heavyUntil = localAt(day0, 0, 17, 40);
const endMs = localAt(day0, 0, 18, 0);
const fuseA = 25;

/** The house without the car, A per line. */
const houseA = (atMs: number): number[] => (atMs >= heavyFrom && atMs < heavyUntil ? [3, 20, 20] : [3, 2, 2]);

interface Sample {
  atMs: number;
  lines: number[];
  phases: 1 | 3;
  powerW: number;
}

describe('the daemon switches a go-e between 1 and 3 phases under the main fuse', () => {
  const home = demoHome({ name: 'phases', startMs });
  const log = memoryLogger();
  let goe: GoeSim;
  let han: AmsReaderSim;
  const runs: Promise<unknown>[] = [];
  const samples: Sample[] = [];

  const carA = (): number[] => [0, 1, 2].map((l) => (l < goe.phasesNow && goe.powerW > 0 ? goe.powerW / (goe.phasesNow * 230) : 0));
  const linesA = (atMs: number): number[] => houseA(atMs).map((a, l) => a + carA()[l]!);

  beforeAll(async () => {
    const env = await home.startWorld();
    goe = createGoeSim({
      url: env.broker.url,
      topicPrefix: 'go-eCharger/phases01',
      startMs,
      phases: 3,
      amp: 16,
      maxCurrentA: 16,
      phaseSwitch: true,
      psm: 2,
      minToggleWaitMs: 30_000,
      switchPauseMs: 5_000,
      plugs: [{ atMs: startMs, battery: { capacityKwh: 60, socPct: 20, targetSocPct: 100, efficiency: 0.9 } }],
    });
    han = createAmsReaderSim({
      url: env.broker.url,
      topic: 'ams/phases01',
      startMs,
      importKwh: 1000,
      load: (atMs) => ({ importW: linesA(atMs).reduce((s, a) => s + a * 230, 0), currentsA: linesA(atMs) }),
    });
    await goe.start();
    await han.start();
    runs.push(
      goe.run(home.clock, 5_000, home.stopSims).catch(() => undefined),
      han.run(home.clock, 10_000, home.stopSims).catch(() => undefined),
    );
    const input = env.config;
    const config = goeBehindFuse(input, { fuseA, goeTopic: 'go-eCharger/phases01', hanTopic: 'ams/phases01', phaseSwitching: true });
    await home.register(config);
    await home.startApp(config, {
      logger: log.logger,
      controlTickMs: 30_000,
      onControlTick: (snap) => samples.push({ atMs: snap.atMs, lines: linesA(snap.atMs), phases: goe.phasesNow, powerW: goe.powerW }),
    });
    await home.until(endMs);
  }, 150_000);

  afterAll(() =>
    home.close(async () => {
      await Promise.all(runs);
      await han?.close();
      await goe?.close();
    }),
  );

  it('plans the car from the 1-phase minimum to the 3-phase maximum', () => {
    const plan = home.app.currentPlan();
    expect(plan?.slots.some((s) => (s.evs?.car?.powerKw ?? 0) > 11)).toBe(true);
  });

  it('runs 1-phase through the heavy L2/L3 load and 3-phase before and after it', () => {
    const at = (from: number, until: number) => samples.filter((s) => s.atMs >= from && s.atMs < until);
    expect(samples.length).toBeGreaterThan(60);
    // (The first minutes go to the first plan and the meter's first lists.)
    expect(at(startMs + 5 * 60_000, heavyFrom).every((s) => s.phases === 3 && s.powerW === 16 * 3 * 230)).toBe(true);
    const during = at(heavyFrom + 5 * 60_000, heavyUntil);
    expect(during.length).toBeGreaterThan(20);
    expect(during.every((s) => s.phases === 1)).toBe(true);
    expect(during.filter((s) => s.powerW > 0).length).toBeGreaterThan(during.length - 3);
    const after = at(heavyUntil + 5 * 60_000, endMs);
    expect(after.length).toBeGreaterThan(10);
    expect(after.every((s) => s.phases === 3 && s.powerW === 16 * 3 * 230)).toBe(true);
    expect(goe.setsOf('psm')).toBe(2);
    const switches = log.lines.filter((l) => l.msg === 'phase switch');
    expect(switches.map((l) => [l.from, l.to])).toEqual([
      [3, 1],
      [1, 3],
    ]);
  });

  it('keeps every line under the main fuse at every sampled instant', () => {
    // The loop sees a load step at its next tick, after the meter's next list: up to 90 s here.
    const settled = samples.filter((s) => !(s.atMs >= heavyFrom && s.atMs < heavyFrom + 90_000));
    const over = settled.filter((s) => s.lines.some((a) => a > fuseA + 1e-9));
    expect(over).toEqual([]);
  });
});
