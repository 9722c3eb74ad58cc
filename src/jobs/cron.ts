/**
 * Wall-clock jobs and user schedules on node-cron: cron expressions with a time zone, node-cron's
 * matcher for when they fall (DST included), and node-cron's runner on the system clock.
 *
 * The seam for simulated time: node-cron's runner reads the process's `Date` and `setTimeout`, so
 * on the system clock it runs as is (tests drive it with fake timers). On any other `Clock` (the
 * demo, the benchmark's accelerated week, ManualClock tests) the same node-cron task is executed
 * at node-cron's own next match, waiting on that clock: the matching is node-cron's either way.
 */
import { createTask, type ScheduledTask } from 'node-cron';
import { systemClock } from '../clock.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import { startLoop, type LoopHandle } from './loop.js';

export { cronProblem } from '../config/time-fields.js';

/** A cron expression in a time zone, e.g. `30 6 * * 1-5` in Europe/Oslo. */
export interface CronSpec {
  cron: string;
  timezone: string;
}

export interface CronSchedule {
  readonly spec: CronSpec;
  /** The first occurrence strictly after `ms`. */
  nextAfterMs(ms: number): number;
  /** Occurrences in (`fromMs`, `toMs`], at most `max`. */
  occurrencesMs(fromMs: number, toMs: number, max?: number): number[];
}

/** node-cron's matcher of a task: public in its build, absent from its types. */
interface WithMatcher {
  timeMatcher?: { getNextMatch(date: Date): Date };
}

function matcherOf(task: ScheduledTask): { getNextMatch(date: Date): Date } {
  const matcher = (task as unknown as WithMatcher).timeMatcher;
  if (typeof matcher?.getNextMatch !== 'function') throw new Error('node-cron: this version has no timeMatcher.getNextMatch; pin a version that has');
  return matcher;
}

/** A schedule without a job: for occurrences (user schedules that feed the planner). */
export function cronSchedule(spec: CronSpec): CronSchedule {
  // A task made and never started holds no timer; destroy() drops it from node-cron's registry.
  const task = createTask(spec.cron, () => undefined, { timezone: spec.timezone });
  const matcher = matcherOf(task);
  void task.destroy();
  return scheduleOf(spec, matcher);
}

function scheduleOf(spec: CronSpec, matcher: { getNextMatch(date: Date): Date }): CronSchedule {
  // node-cron matches whole seconds: ask from the second, so an occurrence at `ms` itself is not repeated.
  const nextAfterMs = (ms: number): number => matcher.getNextMatch(new Date(Math.floor(ms / 1000) * 1000)).getTime();
  return {
    spec,
    nextAfterMs,
    occurrencesMs(fromMs, toMs, max = 64) {
      const out: number[] = [];
      for (let t = nextAfterMs(fromMs); t <= toMs && out.length < max; t = nextAfterMs(t)) out.push(t);
      return out;
    },
  };
}

/** A run that starts this late is still made; later than that it waits for the next occurrence. */
const lateRunToleranceMs = 10 * 60_000;

export interface CronJob extends LoopHandle {
  readonly schedule: CronSchedule;
}

/**
 * Runs `run` at every occurrence of `spec`, never two at once. A failing run is logged with its
 * code by the caller's `run`; here it only must not stop the job.
 */
export function startCronJob(options: {
  name: string;
  spec: CronSpec;
  clock: Clock;
  logger: Logger;
  run: () => Promise<void> | void;
}): CronJob {
  const log = options.logger.child({ component: 'cron', job: options.name });
  const runSafely = async (): Promise<void> => {
    try {
      await options.run();
    } catch (err) {
      log.error({ err, code: 'INTERNAL' }, `${options.name} failed`);
    }
  };
  const cronLogger = {
    info: (m: string) => log.debug(m),
    warn: (m: string) => log.warn(m),
    error: (m: string | Error, err?: Error) => log.error({ err: err ?? m }, String(m)),
    debug: (m: string | Error) => log.debug(String(m)),
  };
  const task = createTask(options.spec.cron, runSafely, {
    timezone: options.spec.timezone,
    name: options.name,
    noOverlap: true,
    // node-cron skips a run whose timer fires over a second late; a busy Pi (a long plan) must not lose the day's poll.
    missedExecutionTolerance: lateRunToleranceMs,
    logger: cronLogger,
  });
  const schedule = scheduleOf(options.spec, matcherOf(task));

  if (options.clock === systemClock) {
    void task.start();
    return {
      schedule,
      wake: () => void task.execute().catch(() => undefined),
      stop: async () => {
        await task.destroy();
      },
    };
  }

  let dueMs = schedule.nextAfterMs(options.clock.nowMs());
  const loop = startLoop({
    name: options.name,
    clock: options.clock,
    logger: log,
    errorDelayMs: 60_000,
    tick: async () => {
      const now = options.clock.nowMs();
      if (now >= dueMs) {
        await task.execute();
        dueMs = schedule.nextAfterMs(Math.max(now, dueMs));
      }
      return Math.max(0, dueMs - options.clock.nowMs());
    },
  });
  return {
    schedule,
    wake: () => void task.execute().catch(() => undefined),
    stop: async () => {
      await loop.stop();
      await task.destroy();
    },
  };
}
