/**
 * Plans on a worker thread, so that a long plan (7 days at 15 minutes takes about 0.1 s here and
 * several times that on a Raspberry Pi) never holds the event loop that reads the devices and runs
 * the control loop. The planner is pure: its input and its plan cross by structured clone.
 *
 * One thread with a small heap (`resourceLimits`) serves the plans that come close together (a slot
 * boundary, a price refresh, a command) and ends after `idleMs` without a plan: an idle Node thread
 * holds ~9 MiB, which the daemon's memory budget cannot spare all day (docs/performance.md). If
 * the thread dies or outgrows its heap, that plan is made on the calling thread (warn,
 * PLAN_WORKER_FAILED) and the next plan starts a new thread; after `maxFailures` failures in a row,
 * or when the thread's file is missing, every plan is made on the calling thread: slower ticks
 * during a plan, never no plan.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { CapacityContext } from '../core/capacity-plan.js';
import type { HomePlanInput, Plan } from '../core/types.js';
import { WattshiftError, type ErrorCode } from '../errors.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import { planRequest, type PlanRequest } from './plan-request.js';

export type { PlanRequest } from './plan-request.js';

export type PlanReply = { plan: Plan } | { error: { code: ErrorCode; message: string } };

export interface PlanWorker {
  plan(input: HomePlanInput, nowMs: number, previous?: Plan, capacity?: CapacityContext): Promise<Plan>;
  close(): Promise<void>;
}

/**
 * The thread's heap. A joint 7-day 15-min plan peaks at a few MB of heap (its DP tables are typed
 * arrays, outside the heap); the limits leave room for that and make a runaway plan end the thread
 * instead of growing the daemon (see docs/performance.md for the measured cost).
 */
export const planThreadLimits: ResourceLimits = { maxOldGenerationSizeMb: 24, maxYoungGenerationSizeMb: 1, codeRangeSizeMb: 8, stackSizeMb: 2 };

/**
 * The bundle's thread entry (`jobs/plan-worker-thread.js` in dist/, beside main.js or above its
 * chunk). Run from src/ (tsx: tests, a checkout) there is none: a thread would compile the planner
 * afresh through tsx, slower than planning here, so the caller plans on its own thread.
 */
function bundledWorkerFile(): string | undefined {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) return undefined;
  return [join(dirname(here), 'jobs', 'plan-worker-thread.js'), join(dirname(here), '..', 'jobs', 'plan-worker-thread.js')].find((f) =>
    existsSync(f),
  );
}

/** Starts the thread; a TypeScript entry (the unit test's) loads through tsx's API. */
function spawn(file: string, resourceLimits: ResourceLimits): Worker {
  const w = file.endsWith('.ts')
    ? new Worker(
        `import('tsx/esm/api').then((api) => api.tsImport(${JSON.stringify(pathToFileURL(file).href)}, ${JSON.stringify(import.meta.url)}))`,
        { eval: true, resourceLimits },
      )
    : new Worker(file, { resourceLimits });
  // An idle thread must not keep the process alive; it is held only while it plans.
  w.unref();
  return w;
}

/** Sends one request and waits for its reply, the thread's error or its exit, whichever is first. */
function ask(w: Worker, request: PlanRequest): Promise<Plan> {
  return new Promise<Plan>((resolve, reject) => {
    const done = (): void => {
      w.off('message', onMessage).off('error', onError).off('exit', onExit);
      w.unref();
    };
    const onMessage = (reply: PlanReply): void => {
      done();
      if ('plan' in reply) resolve(reply.plan);
      else reject(new WattshiftError(reply.error.code, reply.error.message));
    };
    const onError = (err: Error): void => {
      done();
      const oom = (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';
      reject(new WattshiftError('PLAN_WORKER_FAILED', oom ? 'the planner thread ran out of its heap' : 'the planner thread failed', { cause: err }));
    };
    const onExit = (code: number): void => {
      done();
      reject(new WattshiftError('PLAN_WORKER_FAILED', `the planner thread exited (${code})`));
    };
    w.on('message', onMessage).on('error', onError).on('exit', onExit);
    w.ref();
    w.postMessage(request);
  });
}

export interface PlanWorkerOptions {
  logger: Logger;
  /** The thread's entry; by default the bundle's (none under tsx: plans stay on the calling thread). */
  file?: string;
  resourceLimits?: ResourceLimits;
  /** Failures in a row after which no thread is started again (default 3). */
  maxFailures?: number;
  /** Ends the thread after this much of `clock`'s time without a plan; without both it lives until `close`. */
  idle?: { clock: Clock; ms: number };
}

export function startPlanWorker(deps: PlanWorkerOptions): PlanWorker {
  const log = deps.logger.child({ component: 'plan-worker' });
  const fromSource = deps.file === undefined && fileURLToPath(import.meta.url).endsWith('.ts');
  const file = [deps.file ?? bundledWorkerFile()].find((f) => f !== undefined && existsSync(f));
  const limits = deps.resourceLimits ?? planThreadLimits;
  const maxFailures = deps.maxFailures ?? 3;
  let broken = file === undefined;
  let failures = 0;
  let thread: Worker | undefined;
  let idleTimer: AbortController | undefined;
  /** A plan is waiting on the thread (its failure is then that plan's, see `ask`). */
  let busy = false;
  // Plans are made one at a time, in order, on the one thread.
  let queue: Promise<unknown> = Promise.resolve();

  if (file === undefined && !fromSource)
    log.warn({ code: 'PLAN_WORKER_FAILED' }, "the planner thread's file is missing; planning on the main thread");

  const fail = async (err: unknown): Promise<void> => {
    const dead = thread;
    thread = undefined;
    await dead?.terminate();
    failures += 1;
    broken = failures >= maxFailures;
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : undefined;
    log.warn(
      { code: 'PLAN_WORKER_FAILED', err: err instanceof Error ? err.message : String(err), ...(cause ? { cause } : {}), failures },
      broken
        ? `${failures} planner thread failures in a row; planning on the main thread from now on`
        : 'planning this one on the main thread; the next plan starts a new thread',
    );
  };

  const endWhenIdle = (w: Worker): void => {
    if (!deps.idle) return;
    const timer = new AbortController();
    idleTimer = timer;
    deps.idle.clock.sleep(deps.idle.ms, timer.signal).then(
      () => {
        if (thread !== w) return;
        thread = undefined;
        void w.terminate();
      },
      () => undefined,
    );
  };

  const planOnThread = async (request: PlanRequest): Promise<Plan> => {
    idleTimer?.abort();
    idleTimer = undefined;
    if (broken || file === undefined) return planRequest(request);
    try {
      if (!thread) {
        const w = spawn(file, limits);
        // A thread that dies between plans is replaced at the next plan; its error, with no plan
        // waiting on it, must not become the daemon's uncaught exception.
        w.once('exit', () => {
          if (thread === w) thread = undefined;
        });
        w.on('error', (err) => {
          if (thread === w && !busy)
            log.warn({ code: 'PLAN_WORKER_FAILED', err: err.message }, 'the idle planner thread failed; the next plan starts a new one');
        });
        thread = w;
      }
      busy = true;
      const made = await ask(thread, request).finally(() => {
        busy = false;
      });
      failures = 0;
      endWhenIdle(thread);
      return made;
    } catch (err) {
      // The planner's own errors (a malformed input) are the caller's; only a failed thread falls back.
      if (err instanceof WattshiftError && err.code !== 'PLAN_WORKER_FAILED') throw err;
      await fail(err);
      return planRequest(request);
    }
  };

  return {
    plan(input, nowMs, previous, capacity) {
      const request: PlanRequest = { input, nowMs, ...(previous ? { previous } : {}), ...(capacity ? { capacity } : {}) };
      const made = queue.then(() => planOnThread(request));
      queue = made.catch(() => undefined);
      return made;
    },
    async close() {
      broken = true;
      idleTimer?.abort();
      const w = thread;
      thread = undefined;
      await w?.terminate();
    },
  };
}
