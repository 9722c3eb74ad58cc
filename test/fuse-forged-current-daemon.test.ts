/**
 * The whole daemon (`buildApp`) on the simulation kernel's virtual clock with a go-e charger and a HAN meter (AMS
 * reader) simulated on the same clock: from 17:05 an oven loads L1 with 14 A, so the main fuse
 * (25 A) holds the car at 10 A. From 17:12 the meter lists L1 at -1000 A, a value no line
 * carries: that must not read as an empty line giving the car the whole fuse. The car is held at
 * no more than before (its safe current, the phase currents being missing), and no line is over
 * the fuse at any sampled instant.
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
const ovenFrom = localAt(day0, 0, 17, 5);
const forgedFrom = localAt(day0, 0, 17, 12);
const endMs = localAt(day0, 0, 17, 30);
const fuseA = 25;

/** The house without the car, A per line. */
const houseA = (atMs: number): number[] => (atMs >= ovenFrom ? [14, 2, 2] : [4, 2, 2]);

interface Sample {
  atMs: number;
  lines: number[];
  amp: number;
  powerW: number;
}

describe('the daemon under a meter listing -1000 A on a line', () => {
  const home = demoHome({ name: 'forged-current', startMs });
  const log = memoryLogger();
  let goe: GoeSim;
  let han: AmsReaderSim;
  const runs: Promise<unknown>[] = [];
  const samples: Sample[] = [];

  const carA = (): number => (goe.powerW > 0 ? goe.powerW / (3 * 230) : 0);
  const linesA = (atMs: number): number[] => houseA(atMs).map((a) => a + carA());

  beforeAll(async () => {
    const env = await home.startWorld();
    goe = createGoeSim({
      url: env.broker.url,
      topicPrefix: 'go-eCharger/forged01',
      startMs,
      phases: 3,
      amp: 16,
      maxCurrentA: 16,
      plugs: [{ atMs: startMs, battery: { capacityKwh: 60, socPct: 20, targetSocPct: 100, efficiency: 0.9 } }],
    });
    han = createAmsReaderSim({
      url: env.broker.url,
      topic: 'ams/forged01',
      startMs,
      importKwh: 1000,
      load: (atMs) => {
        const lines = linesA(atMs);
        const importW = lines.reduce((s, a) => s + a * 230, 0);
        return { importW, currentsA: atMs >= forgedFrom ? [-1000, ...lines.slice(1)] : lines };
      },
    });
    await goe.start();
    await han.start();
    runs.push(
      goe.run(home.clock, 5_000, home.stopSims).catch(() => undefined),
      han.run(home.clock, 10_000, home.stopSims).catch(() => undefined),
    );
    const input = env.config;
    const config = goeBehindFuse(input, { fuseA, goeTopic: 'go-eCharger/forged01', hanTopic: 'ams/forged01' });
    await home.register(config);
    await home.startApp(config, {
      logger: log.logger,
      controlTickMs: 30_000,
      onControlTick: (snap) => samples.push({ atMs: snap.atMs, lines: linesA(snap.atMs), amp: goe.amp, powerW: goe.powerW }),
    });
    await home.until(endMs);
  }, 120_000);

  afterAll(() =>
    home.close(async () => {
      await Promise.all(runs);
      await han?.close();
      await goe?.close();
    }),
  );

  it('holds the car at the fuse limit with the oven on, and never gives it more once L1 reads -1000 A', () => {
    const at = (from: number, until: number) => samples.filter((s) => s.atMs >= from && s.atMs < until);
    // Settled with the oven on: 25 − 1 − 14 = 10 A.
    const oven = at(ovenFrom + 3 * 60_000, forgedFrom);
    expect(oven.length).toBeGreaterThan(5);
    expect(oven.at(-1)?.amp).toBe(10);
    const forged = at(forgedFrom, endMs);
    expect(forged.length).toBeGreaterThan(20);
    expect(Math.max(...forged.map((s) => s.powerW / (3 * 230)))).toBeLessThanOrEqual(10 + 1e-9);
    expect(forged.at(-1)?.amp).toBe(6);
    expect(log.lines.some((l) => l.code === 'DEVICE_BAD_VALUE')).toBe(true);
  });

  it('keeps every line under the main fuse at every sampled instant', () => {
    // The loop sees the oven at its next tick, after the meter's next list: up to 90 s here.
    const settled = samples.filter((s) => !(s.atMs >= ovenFrom && s.atMs < ovenFrom + 90_000));
    expect(settled.filter((s) => s.lines.some((a) => a > fuseA + 1e-9))).toEqual([]);
  });
});
