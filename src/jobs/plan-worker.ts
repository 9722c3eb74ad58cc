/**
 * Plans in a worker thread, so that a long plan (7 days at 15 minutes takes about 0.1 s here and
 * several times that on a Raspberry Pi) never holds the event loop that reads the devices and runs
 * the control loop. The planner is pure: its input and its plan cross by structured clone.
 *
 * Each plan gets a fresh thread that ends with it: a thread kept alive would hold its own V8 heap
 * (several MB) all day for a few seconds of work an hour. If the thread's file is missing, it
 * cannot start, or it dies, planning continues on the calling thread (logged once, warn,
 * PLAN_WORKER_FAILED): slower ticks during a plan, never no plan.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { plan as planHere } from '../core/planner.js';
import type { Plan, PlanInput } from '../core/types.js';
import { WattshiftError, type ErrorCode } from '../errors.js';
import type { Logger } from '../log.js';

export interface PlanRequest { input: PlanInput; nowMs: number; previous?: Plan }
export type PlanReply = { plan: Plan } | { error: { code: ErrorCode; message: string } };

export interface PlanWorker {
  plan(input: PlanInput, nowMs: number, previous?: Plan): Promise<Plan>;
  close(): Promise<void>;
}

/**
 * The bundle's thread entry (`jobs/plan-worker-thread.js` in dist/, beside main.js or above its
 * chunk). Run from src/ (tsx: tests, a checkout) there is none: a thread would compile the planner
 * afresh for every plan, slower than planning here, so the caller plans on its own thread.
 */
function bundledWorkerFile(): string | undefined {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) return undefined;
  return [join(dirname(here), 'jobs', 'plan-worker-thread.js'), join(dirname(here), '..', 'jobs', 'plan-worker-thread.js')].find((f) => existsSync(f));
}

export function startPlanWorker(deps: { logger: Logger; file?: string }): PlanWorker {
  const log = deps.logger.child({ component: 'plan-worker' });
  const fromSource = deps.file === undefined && fileURLToPath(import.meta.url).endsWith('.ts');
  const file = deps.file ?? bundledWorkerFile();
  let broken = false;
  let running: Worker | undefined;

  const fallBack = (reason: string, cause?: unknown): void => {
    if (!broken) log.warn({ code: 'PLAN_WORKER_FAILED', err: cause instanceof Error ? cause.message : cause }, `${reason}; planning on the main thread`);
    broken = true;
  };

  /** One thread per plan: it costs a start-up off the loop, and no memory between plans. */
  const spawn = (f: string): Worker =>
    // A TypeScript entry (the unit test's) loads through tsx's API.
    f.endsWith('.ts')
      ? new Worker(`import('tsx/esm/api').then((api) => api.tsImport(${JSON.stringify(pathToFileURL(f).href)}, ${JSON.stringify(import.meta.url)}))`, { eval: true })
      : new Worker(f);

  const onThread = (w: Worker, request: PlanRequest): Promise<Plan> =>
    new Promise<Plan>((resolve, reject) => {
      w.once('message', (reply: PlanReply) => {
        if ('plan' in reply) resolve(reply.plan);
        else reject(new WattshiftError(reply.error.code, reply.error.message));
      });
      w.once('error', (err) => reject(new WattshiftError('PLAN_WORKER_FAILED', 'the planner thread failed', { cause: err })));
      w.once('exit', (code) => reject(new WattshiftError('PLAN_WORKER_FAILED', `the planner thread exited (${code})`)));
      w.postMessage(request);
    });

  if (file === undefined && !fromSource) fallBack('the planner thread\'s file is missing');

  return {
    async plan(input, nowMs, previous) {
      if (broken || file === undefined) return planHere(input, nowMs, previous);
      let w: Worker;
      try {
        w = spawn(file);
      } catch (err) {
        fallBack('the planner thread did not start', err);
        return planHere(input, nowMs, previous);
      }
      running = w;
      try {
        return await onThread(w, { input, nowMs, ...(previous ? { previous } : {}) });
      } catch (err) {
        if (!(err instanceof WattshiftError) || err.code !== 'PLAN_WORKER_FAILED') throw err;
        fallBack(err.message, err.cause);
        return planHere(input, nowMs, previous);
      } finally {
        running = undefined;
        await w.terminate();
      }
    },
    async close() {
      broken = true;
      await running?.terminate();
    },
  };
}
