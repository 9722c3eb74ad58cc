import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../log.js';
import { plan } from '../core/planner.js';
import { buildPriceSeries } from '../core/prices.js';
import type { PlanInput } from '../core/types.js';
import { startPlanWorker, type PlanWorker } from './plan-worker.js';

const t0 = Date.parse('2025-01-14T23:00:00Z');

function input(): PlanInput {
  const prices = Array.from({ length: 48 }, (_, i) => 0.1 + 0.05 * Math.sin(i / 5));
  return {
    slots: buildPriceSeries({
      slotMinutes: 60, fromMs: t0, toMs: t0 + prices.length * 3_600_000, timezone: 'Europe/Oslo', currency: 'EUR',
      spot: { actual: { units: { currency: 'EUR', energyUnit: 'kWh' }, resolutionMinutes: 60, points: prices.map((p, i) => ({ startMs: t0 + i * 3_600_000, price: p })) } },
      deltas: [], fees: { gridFeePerKWh: 0, taxPerKWh: 0 },
    }),
    timezone: 'Europe/Oslo', currency: 'EUR',
    tank: { volumeL: 200, powerKW: 2, coldWaterC: 8, ambientC: 18, heatLossWPerK: 1.6, minC: 50, maxC: 75, currentTempC: 60, control: 'continuous' },
    ev: null, location: { limitKW: 17, baseLoadKW: 0 },
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

  it('plans on the calling thread, logging once, when its file is missing', async () => {
    const log = capture();
    worker = startPlanWorker({ logger: log.logger, file: join(tmpdir(), 'no-such-plan-worker.js') });
    expect((await worker.plan(input(), t0)).mode).toBe('optimal');
    await worker.plan(input(), t0);
    expect(log.warns()).toHaveLength(1);
    expect(log.warns()[0]).toMatchObject({ code: 'PLAN_WORKER_FAILED' });
  });

  it('plans on the calling thread when the worker dies under a request', async () => {
    const log = capture();
    const file = join(mkdtempSync(join(tmpdir(), 'wattshift-worker-')), 'dies.mjs');
    writeFileSync(file, "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => process.exit(3));\n");
    worker = startPlanWorker({ logger: log.logger, file });
    expect(await worker.plan(input(), t0)).toEqual(plan(input(), t0));
    expect(log.warns()).toHaveLength(1);
    expect(log.warns()[0]).toMatchObject({ code: 'PLAN_WORKER_FAILED' });
  });
});
