/**
 * Wall-clock jobs and user schedules on node-cron: cron expressions with a time zone, node-cron's
 * matcher for when they fall (DST included), and node-cron's runner on the system clock.
 *
 * The seam for simulated time: node-cron's runner reads the process's `Date` and `setTimeout`, so
 * on the system clock it runs as is (tests drive it with fake timers). On any other `Clock` (the
 * demo, the benchmark's accelerated week, ManualClock tests) the same node-cron task is executed
 * at the next match after that clock's time. node-cron's public API finds next runs only from the
 * real time, so that search is ours (below); node-cron still decides what matches.
 */
import { createTask, parse, type ScheduledTask } from 'node-cron';
import { systemClock } from '../clock.js';
import { localParts, localTimeToUtcMs } from '../core/zoned-time.js';
import { WattshiftError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import { startLoop, type LoopHandle } from './loop.js';

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

/** How far ahead a match is looked for (node-cron's own bound): an expression such as `0 0 30 2 *` never matches. */
const searchDays = 366 * 100;
const noop = (): undefined => undefined;

/**
 * The first match strictly after `ms`, in whole seconds: day by day in the zone's calendar, then
 * the day's times in order. node-cron answers both questions: a task on the expression's day
 * fields alone (at local noon, which every day has) says whether a day can match, and the
 * expression's own task says whether an instant does. So its day-of-month and day-of-week rules
 * (`L`, `W`, `#`) and its DST handling hold here too: a time the spring change skips does not
 * match, and of a repeated autumn hour one pass is taken; times before `ms` on its own day are
 * compared as wall-clock times, as node-cron's runner does.
 */
function nextMatchAfter(
  spec: CronSpec,
  whole: ScheduledTask,
  dayMatches: (y: number, m: number, d: number) => boolean,
  times: { hour: number[]; minute: number[]; second: number[] },
  ms: number,
): number {
  const base = Math.floor(ms / 1000) * 1000;
  const from = { ...localParts(base, spec.timezone), second: Math.floor(base / 1000) % 60 };
  let date = new Date(Date.UTC(from.year, from.month - 1, from.day));
  for (let i = 0; i < searchDays; i++, date = new Date(date.getTime() + 86_400_000)) {
    const [y, m, d] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
    if (!dayMatches(y, m, d)) continue;
    for (const hour of times.hour) {
      for (const minute of times.minute) {
        for (const second of times.second) {
          if (i === 0 && hour * 3600 + minute * 60 + second <= from.hour * 3600 + from.minute * 60 + from.second) continue;
          const at = localTimeToUtcMs(y, m, d, hour, spec.timezone, minute) + second * 1000;
          if (at > base && whole.match(new Date(at))) return at;
        }
      }
    }
  }
  throw new WattshiftError('CONFIG_INVALID', `cron expression "${spec.cron}" (${spec.timezone}) has no time in ${searchDays} days`, {
    details: { cron: spec.cron },
  });
}

/** The expression's day-of-month, month and day-of-week fields under "every second of the day". */
function dayPattern(cron: string): string {
  const fields = cron.trim().split(/\s+/);
  return ['*', '*', '*', ...fields.slice(-3)].join(' ');
}

/** A schedule without a job: for occurrences (user schedules that feed the planner). */
export function cronSchedule(spec: CronSpec): CronSchedule {
  // Tasks made and never started hold no timer; destroy() drops them from node-cron's registry,
  // and match() keeps working.
  const whole = createTask(spec.cron, noop, { timezone: spec.timezone });
  const day = createTask(dayPattern(spec.cron), noop, { timezone: spec.timezone });
  void whole.destroy();
  void day.destroy();
  const fields = parse(spec.cron);
  const ascending = (xs: number[]): number[] => [...new Set(xs)].sort((a, b) => a - b);
  const times = { hour: ascending(fields.hour), minute: ascending(fields.minute), second: ascending(fields.second) };
  // Whether a date can match never changes; the planner asks about the same days at every plan.
  const days = new Map<number, boolean>();
  const dayMatches = (y: number, m: number, d: number): boolean => {
    const key = Date.UTC(y, m - 1, d);
    let matches = days.get(key);
    if (matches === undefined) {
      if (days.size >= 1024) days.clear();
      matches = day.match(new Date(localTimeToUtcMs(y, m, d, 12, spec.timezone)));
      days.set(key, matches);
    }
    return matches;
  };
  const nextAfterMs = (ms: number): number => nextMatchAfter(spec, whole, dayMatches, times, ms);
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
export function startCronJob(options: { name: string; spec: CronSpec; clock: Clock; logger: Logger; run: () => Promise<void> | void }): CronJob {
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
  const schedule = cronSchedule(options.spec);

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
