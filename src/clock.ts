import type { Clock } from './ports.js';
import { SleeperQueue } from './sleepers.js';

/** The wall clock. */
export const systemClock: Clock = {
  nowMs: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/**
 * A clock that runs `speed` times faster than real time from `startMs`: the demo and the
 * end-to-end tests run days in minutes with real sockets and real timers underneath.
 */
export function acceleratedClock(startMs: number, speed: number, realOriginMs = Date.now()): Clock {
  const realStart = realOriginMs;
  return {
    nowMs: () => startMs + (Date.now() - realStart) * speed,
    sleep: (ms, signal) => systemClock.sleep(ms / speed, signal),
  };
}

/**
 * A clock that only moves when told to, for unit tests. `sleep` resolves when `advance`
 * passes its wake-up time; sleepers wake in time order.
 */
export class ManualClock implements Clock {
  private now: number;
  private readonly sleepers = new SleeperQueue();

  constructor(startMs: number) {
    this.now = startMs;
  }

  nowMs(): number {
    return this.now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.sleepers.sleepUntil(this.now + Math.max(0, ms), signal);
  }

  /** Moves time forward, waking sleepers in order and letting their continuations run. */
  async advance(ms: number): Promise<void> {
    const target = this.now + ms;
    for (let next = this.sleepers.take(target); next; next = this.sleepers.take(target)) {
      this.now = next.wakeMs;
      next.wake();
      await new Promise((r) => setImmediate(r));
    }
    this.now = target;
  }

  /** When the next sleeper wakes (clock ms), if any: a test waits for a job to go to sleep before it moves time. */
  nextWakeMs(): number | undefined {
    return this.sleepers.nextDueMs();
  }

  /** Steps the wall clock without waking anyone, like an NTP correction. */
  set(ms: number): void {
    this.now = ms;
  }
}

/**
 * A simulated clock from `WATTSHIFT_SIM_CLOCK="<startMs>,<realOriginMs>,<speed>"`: the demo and
 * the end-to-end tests run the daemon as its own process on the same accelerated time as the
 * simulators. Two more fields `<stepAtRealMs>,<stepMs>` step it by `stepMs` at that real time.
 * Undefined when the variable is absent; throws on a malformed value.
 */
export function simClockFromEnv(env: NodeJS.ProcessEnv): { clock: Clock; speed: number } | undefined {
  const raw = env['WATTSHIFT_SIM_CLOCK'];
  if (!raw) return undefined;
  const fields = raw.split(',').map(Number);
  const [startMs, originMs, speed, stepAtRealMs, stepMs] = fields;
  const stepped = fields.length === 5;
  if ((fields.length !== 3 && !stepped) || !fields.every((n) => Number.isFinite(n)) || !(speed! > 0)) {
    throw new Error(`WATTSHIFT_SIM_CLOCK must be "<startMs>,<realOriginMs>,<speed>[,<stepAtRealMs>,<stepMs>]", got ${raw}`);
  }
  const clock = acceleratedClock(startMs!, speed!, originMs!);
  if (!stepped) return { clock, speed: speed! };
  // A step like an NTP correction at a given real time: the tests of clock steps in a live daemon.
  return { clock: { ...clock, nowMs: () => clock.nowMs() + (Date.now() >= stepAtRealMs! ? stepMs! : 0) }, speed: speed! };
}
