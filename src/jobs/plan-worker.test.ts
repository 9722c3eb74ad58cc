import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../clock.js';
import { createLogger } from '../log.js';
import { planHome as plan } from '../core/home-plan.js';
import { buildPriceSeries } from '../core/prices.js';
import type { HomePlanInput } from '../core/types.js';
import { planWithCapacity, type CapacityContext } from '../core/capacity-plan.js';
import type { CapacityModel } from '../core/tariff.js';
import { startPlanWorker, type PlanWorker } from './plan-worker.js';

const t0 = Date.parse('2025-01-14T23:00:00Z');
/** Request times at which the stub thread dies: by exiting, or by outgrowing its heap. */
const CRASH_AT = t0 + 1;
const OOM_AT = t0 + 2;
const THROW_AFTER_AT = t0 + 3;

/**
 * A real thread that stands in for the planner's: it answers with its thread id and how many
 * requests it has had, exits at CRASH_AT, allocates without end at OOM_AT, and counts its starts
 * in `<file>.starts`.
 */
function stubThread(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'wattshift-worker-')), 'stub.mjs');
  writeFileSync(
    file,
    [
      "import { appendFileSync } from 'node:fs';",
      "import { parentPort, threadId } from 'node:worker_threads';",
      `appendFileSync(${JSON.stringify(`${file}.starts`)}, '.');`,
      'let nth = 0;',
      'const hoard = [];',
      "parentPort.on('message', (req) => {",
      `  if (req.nowMs === ${CRASH_AT}) process.exit(3);`,
      `  if (req.nowMs === ${OOM_AT}) for (;;) hoard.push(new Array(1000).fill(hoard.length));`,
      `  if (req.nowMs === ${THROW_AFTER_AT}) setTimeout(() => { throw new Error('idle failure'); }, 20);`,
      '  parentPort.postMessage({ plan: { threadId, nth: ++nth } });',
      '});',
    ].join('\n'),
  );
  return file;
}

const threadOf = (reply: unknown): number => (reply as { threadId: number }).threadId;

function input(): HomePlanInput {
  const prices = Array.from({ length: 48 }, (_, i) => 0.1 + 0.05 * Math.sin(i / 5));
  return {
    slots: buildPriceSeries({
      slotMinutes: 60,
      fromMs: t0,
      toMs: t0 + prices.length * 3_600_000,
      timezone: 'Europe/Oslo',
      currency: 'EUR',
      spot: {
        actual: {
          units: { currency: 'EUR', energyUnit: 'kWh' },
          resolutionMinutes: 60,
          points: prices.map((p, i) => ({ startMs: t0 + i * 3_600_000, price: p })),
        },
      },
      deltas: [],
      fees: { gridFeePerKwh: 0, taxPerKwh: 0 },
    }),
    timezone: 'Europe/Oslo',
    currency: 'EUR',
    tanks: [
      {
        id: 'tank',
        volumeL: 200,
        powerKw: 2,
        coldWaterC: 8,
        ambientC: 18,
        heatLossWPerK: 1.6,
        minC: 50,
        maxC: 75,
        currentTempC: 60,
        control: 'continuous',
      },
    ],
    evs: [],
    location: { limitKw: 17, baseLoadKw: 0 },
  };
}

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } });
  return { logger, warns: () => lines.filter((l) => l.level === 'warn') };
}

let worker: PlanWorker | undefined;
afterEach(async () => {
  await worker?.close();
  worker = undefined;
});

describe('startPlanWorker', () => {
  it('plans on its thread exactly what the planner plans here', async () => {
    const log = capture();
    worker = startPlanWorker({ logger: log.logger, file: fileURLToPath(new URL('./plan-worker-thread.ts', import.meta.url)) });
    const inThread = plan(input(), t0 + 600_000);
    expect(await worker.plan(input(), t0 + 600_000)).toEqual(inThread);
    // A malformed input is the planner's error, passed back with its code.
    await expect(worker.plan({ ...input(), slots: [{ ...input().slots[0]!, endMs: t0 }] }, t0)).rejects.toMatchObject({ code: 'PLAN_INPUT_INVALID' });
    expect(log.warns()).toEqual([]);
  });

  it("plans the whole bill on its thread, as here, when a tariff's capacity fee comes with the request", async () => {
    const log = capture();
    worker = startPlanWorker({ logger: log.logger, file: fileURLToPath(new URL('./plan-worker-thread.ts', import.meta.url)) });
    // Steps tight enough that holding the month's step changes the plan: a 2.5 kW base load sits in the first step.
    const rule: CapacityModel = {
      measure: 'dailyPeaks',
      count: 3,
      days: 'all',
      steps: [
        { upToKw: 4, perMonth: 500 },
        { upToKw: null, perMonth: 900 },
      ],
    };
    const capacity: CapacityContext = {
      rule,
      timezone: 'Europe/Oslo',
      holidays: [],
      meteredHours: [{ startMs: t0 - 3_600_000, kWh: 3 }],
      vatRate: 1.25,
    };
    const home = { ...input(), location: { ...input().location, baseLoadKw: 2.5 } };
    const here = planWithCapacity(home, t0 + 600_000, capacity);
    expect(here.capacity).toBeDefined();
    expect(here).not.toEqual(plan(home, t0 + 600_000));
    expect(await worker.plan(home, t0 + 600_000, undefined, capacity)).toEqual(here);
    expect(log.warns()).toEqual([]);
  });

  it('plans on the calling thread, logging once, when its file is missing', async () => {
    const log = capture();
    worker = startPlanWorker({ logger: log.logger, file: join(tmpdir(), 'no-such-plan-worker.js') });
    expect((await worker.plan(input(), t0)).mode).toBe('optimal');
    await worker.plan(input(), t0);
    expect(log.warns()).toHaveLength(1);
    expect(log.warns()[0]).toMatchObject({ code: 'PLAN_WORKER_FAILED' });
  });

  it('reuses one thread for every plan, one plan at a time', async () => {
    worker = startPlanWorker({ logger: capture().logger, file: stubThread() });
    const replies = await Promise.all([worker.plan(input(), t0), worker.plan(input(), t0), worker.plan(input(), t0)]);
    expect(new Set(replies.map(threadOf)).size).toBe(1);
    expect(replies.map((r) => (r as unknown as { nth: number }).nth)).toEqual([1, 2, 3]);
  });

  it('ends the thread after idle.ms of the clock without a plan, and starts a new one for the next plan', async () => {
    const clock = new ManualClock(t0);
    const file = stubThread();
    worker = startPlanWorker({ logger: capture().logger, file, idle: { clock, ms: 120_000 } });
    const first = threadOf(await worker.plan(input(), t0));
    await clock.advance(119_000);
    // A plan inside the idle time keeps the thread and starts the idle time again.
    expect(threadOf(await worker.plan(input(), t0))).toBe(first);
    await clock.advance(119_000);
    expect(threadOf(await worker.plan(input(), t0))).toBe(first);
    await clock.advance(120_000);
    expect(threadOf(await worker.plan(input(), t0))).not.toBe(first);
    expect(readFileSync(`${file}.starts`, 'utf8')).toBe('..');
  });

  it('plans on the calling thread when the thread dies under a request, and starts a new one for the next', async () => {
    const log = capture();
    worker = startPlanWorker({ logger: log.logger, file: stubThread() });
    const first = threadOf(await worker.plan(input(), t0));
    expect(await worker.plan(input(), CRASH_AT)).toEqual(plan(input(), CRASH_AT));
    expect(log.warns()).toHaveLength(1);
    expect(log.warns()[0]).toMatchObject({ code: 'PLAN_WORKER_FAILED', err: 'the planner thread exited (3)', failures: 1 });
    const next = threadOf(await worker.plan(input(), t0));
    expect(next).not.toBe(first);
    expect(log.warns()).toHaveLength(1);
  });

  it('ends a thread that outgrows its heap limit, plans that one here and the next on a new thread', async () => {
    const log = capture();
    worker = startPlanWorker({ logger: log.logger, file: stubThread(), resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 } });
    const first = threadOf(await worker.plan(input(), t0));
    expect(await worker.plan(input(), OOM_AT)).toEqual(plan(input(), OOM_AT));
    expect(log.warns()).toHaveLength(1);
    expect(log.warns()[0]).toMatchObject({ code: 'PLAN_WORKER_FAILED', err: 'the planner thread ran out of its heap' });
    expect(threadOf(await worker.plan(input(), t0))).not.toBe(first);
  });

  it('survives a thread that fails while idle, and starts a new one for the next plan', async () => {
    const log = capture();
    worker = startPlanWorker({ logger: log.logger, file: stubThread() });
    const first = threadOf(await worker.plan(input(), THROW_AFTER_AT));
    await vi.waitFor(() => expect(log.warns()).toHaveLength(1), { timeout: 10_000 });
    expect(log.warns()).toMatchObject([{ code: 'PLAN_WORKER_FAILED', err: 'idle failure' }]);
    expect(threadOf(await worker.plan(input(), t0))).not.toBe(first);
  });

  it('stops starting threads after maxFailures failures in a row', async () => {
    const log = capture();
    const file = stubThread();
    worker = startPlanWorker({ logger: log.logger, file, maxFailures: 2 });
    for (let i = 0; i < 4; i++) expect(await worker.plan(input(), CRASH_AT)).toEqual(plan(input(), CRASH_AT));
    // Two threads started and died; the third and fourth plans did not try another.
    expect(readFileSync(`${file}.starts`, 'utf8')).toBe('..');
    expect(log.warns().map((w) => w.failures)).toEqual([1, 2]);
    expect(log.warns()[1]!.msg).toMatch(/from now on/);
  });
});
