/**
 * One node-cron task, two clocks: on the system clock node-cron's own runner fires it (driven here
 * by vitest's fake timers, which fake the `Date` and `setTimeout` it reads); on any other clock
 * the same task fires at node-cron's next match. Both must give the same instants, DST included.
 */
import { createTask } from 'node-cron';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock, systemClock } from '../clock.js';
import { silentLogger } from '../log.js';
import type { Clock } from '../ports.js';
import { cronProblem } from '../config/time-fields.js';
import { cronSchedule, startCronJob, type CronJob } from './cron.js';

const hour = 3_600_000;
const oslo = 'Europe/Oslo';
// From Friday 2026-03-27 12:00Z over the spring change (Sunday 29th) to Tuesday the 31st.
const start = Date.UTC(2026, 2, 27, 12);
const until = Date.UTC(2026, 2, 31, 12);
const expected = {
  daily: [
    Date.UTC(2026, 2, 27, 12, 5),
    Date.UTC(2026, 2, 28, 12, 5),
    Date.UTC(2026, 2, 29, 11, 5),
    Date.UTC(2026, 2, 30, 11, 5),
    Date.UTC(2026, 2, 31, 11, 5),
  ],
  // Weekdays 06:30 local: Monday and Tuesday after the change (UTC+2).
  weekdays: [Date.UTC(2026, 2, 30, 4, 30), Date.UTC(2026, 2, 31, 4, 30)],
};

let jobs: CronJob[] = [];
afterEach(async () => {
  for (const j of jobs) await j.stop();
  jobs = [];
  vi.useRealTimers();
});

function record(clock: Clock, cron: string, fired: number[], fail = false): void {
  jobs.push(
    startCronJob({
      name: cron,
      spec: { cron, timezone: oslo },
      clock,
      logger: silentLogger(),
      run: () => {
        fired.push(clock.nowMs());
        if (fail) throw new Error('job failed');
      },
    }),
  );
}

describe('on the system clock: node-cron runs the job', () => {
  it('fires at 13:05 local each day and 06:30 on weekdays, across the spring change', async () => {
    vi.useFakeTimers({ now: start, toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const daily: number[] = [];
    const weekdays: number[] = [];
    record(systemClock, '5 13 * * *', daily);
    record(systemClock, '30 6 * * 1-5', weekdays, true);
    for (let t = start; t < until; t += hour) await vi.advanceTimersByTimeAsync(hour);
    // Fake timers fire on the millisecond; node-cron runs within its second.
    expect(daily.map((t) => Math.floor(t / 1000) * 1000)).toEqual(expected.daily);
    expect(weekdays.map((t) => Math.floor(t / 1000) * 1000)).toEqual(expected.weekdays);
  });

  it('still runs when its timer fires minutes late (a busy event loop)', async () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 2, 27, 12, 4), toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const daily: number[] = [];
    record(systemClock, '5 13 * * *', daily);
    // The wall clock moves on 3 minutes while no timer can run, as under a long synchronous plan:
    // the timer set for 13:05 fires at 13:08.
    vi.setSystemTime(Date.UTC(2026, 2, 27, 12, 7));
    await vi.advanceTimersByTimeAsync(61_000);
    expect(daily).toHaveLength(1);
    expect(daily[0]).toBeGreaterThanOrEqual(Date.UTC(2026, 2, 27, 12, 8));
  });
});

describe("on a simulated clock: the same task at node-cron's next match", () => {
  it('fires at the same instants, and a failing run does not stop the job', async () => {
    const clock = new ManualClock(start);
    const daily: number[] = [];
    const weekdays: number[] = [];
    record(clock, '5 13 * * *', daily);
    record(clock, '30 6 * * 1-5', weekdays, true);
    const minute = 60_000;
    await new Promise((r) => setImmediate(r));
    for (let t = start; t < until; t += minute) {
      await clock.advance(minute);
      await new Promise((r) => setImmediate(r));
    }
    expect(daily).toEqual(expected.daily);
    expect(weekdays).toEqual(expected.weekdays);
  });

  it('a stopped job fires no more', async () => {
    const clock = new ManualClock(start);
    const fired: number[] = [];
    record(clock, '5 13 * * *', fired);
    await jobs.pop()!.stop();
    await clock.advance(48 * hour);
    expect(fired).toEqual([]);
  });
});

describe('schedules', () => {
  it('lists the occurrences within a horizon, across the autumn change', () => {
    const s = cronSchedule({ cron: '30 6 * * 1-5', timezone: oslo });
    // Friday 2026-10-23 to Wednesday the 28th; clocks go back on Sunday the 25th.
    expect(s.occurrencesMs(Date.UTC(2026, 9, 23, 12), Date.UTC(2026, 9, 28, 12))).toEqual([
      Date.UTC(2026, 9, 26, 5, 30),
      Date.UTC(2026, 9, 27, 5, 30),
      Date.UTC(2026, 9, 28, 5, 30),
    ]);
    expect(s.occurrencesMs(Date.UTC(2026, 9, 26, 5, 30), Date.UTC(2026, 9, 26, 23))).toEqual([]);
  });

  it('names what is wrong with an expression', () => {
    expect(cronProblem('30 6 * * 1-5')).toBeUndefined();
    expect(cronProblem('30 6 * *')).toMatch(/expected 5 fields/);
    expect(cronProblem('0 30 6 * * 1-5')).toMatch(/expected 5 fields/);
    expect(cronProblem('61 6 * * *')).toBeDefined();
    expect(cronProblem('30 25 * * *')).toBeDefined();
    expect(cronProblem('30 6 * * funday')).toBeDefined();
  });
});

describe("the next match after any instant is node-cron's", () => {
  /** node-cron's own next runs from `fromMs`: its public getNextRuns() counts from `new Date()`, faked here. */
  function nodeCronRuns(cron: string, timezone: string, fromMs: number, count: number): number[] {
    vi.useFakeTimers({ now: fromMs, toFake: ['Date'] });
    const task = createTask(cron, () => undefined, { timezone });
    try {
      return task.getNextRuns(count).map((d) => d.getTime());
    } finally {
      void task.destroy();
      vi.useRealTimers();
    }
  }

  function ours(cron: string, timezone: string, fromMs: number, count: number): number[] {
    const s = cronSchedule({ cron, timezone });
    const out: number[] = [];
    for (let t = fromMs; out.length < count;) out.push((t = s.nextAfterMs(t)));
    return out;
  }

  const cases: [string, string, number][] = [
    // Oslo's spring change (01:00Z, 02:00 → 03:00) and autumn change (01:00Z, 03:00 → 02:00).
    ['*/15 * * * *', oslo, Date.UTC(2026, 2, 29, 0, 20, 7, 500)],
    ['30 2 * * *', oslo, Date.UTC(2026, 2, 27, 12)],
    ['*/20 * * * *', oslo, Date.UTC(2026, 9, 24, 23, 50)],
    // From inside the first pass of the repeated hour (02:10 CEST).
    ['*/20 * * * *', oslo, Date.UTC(2026, 9, 25, 0, 10)],
    ['30 2 * * *', oslo, Date.UTC(2026, 9, 24, 12)],
    // New York: changes at 07:00Z in March and 06:00Z in November, west of Greenwich.
    ['0,30 * * * *', 'America/New_York', Date.UTC(2026, 2, 8, 6, 10)],
    ['30 2 * * *', 'America/New_York', Date.UTC(2026, 2, 6)],
    ['*/30 * * * *', 'America/New_York', Date.UTC(2026, 10, 1, 5, 10)],
    ['30 1 * * *', 'America/New_York', Date.UTC(2026, 9, 30)],
    // Half-hour changes (Lord Howe) and a quarter-hour offset (Kathmandu).
    ['*/30 * * * *', 'Australia/Lord_Howe', Date.UTC(2026, 3, 4, 13)],
    ['0 * * * *', 'Asia/Kathmandu', Date.UTC(2026, 0, 1, 10, 14)],
    // node-cron's day tokens: last day, nearest weekday, nth and last weekday; a leap day.
    ['0 9 L * *', oslo, Date.UTC(2026, 0, 15)],
    ['0 9 15W * *', oslo, Date.UTC(2026, 0, 1)],
    ['0 7 * * 1#2', oslo, Date.UTC(2026, 0, 1)],
    ['0 7 * * 5L', oslo, Date.UTC(2026, 0, 1)],
    ['0 12 29 2 *', oslo, Date.UTC(2026, 0, 1)],
    ['5 4 * * 0', 'UTC', Date.UTC(2026, 5, 3, 4, 5)],
    ['30 6 * * 1-5', oslo, Date.UTC(2026, 2, 30, 4, 30)],
  ];

  it.each(cases)('%s in %s from %d', (cron, timezone, fromMs) => {
    expect(ours(cron, timezone, fromMs, 6)).toEqual(nodeCronRuns(cron, timezone, fromMs, 6));
  });

  it('refuses an expression that never matches with a config error', () => {
    // The first of a month is never its fifth Monday.
    const s = cronSchedule({ cron: '0 0 1 * 1#5', timezone: oslo });
    expect(() => s.nextAfterMs(start)).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }) as Error);
  });
});
