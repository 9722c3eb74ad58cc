/**
 * The simulation kernel's clock: one `Clock` for the daemon and every peer of its simulated home,
 * in one process. Time stands still while anything is moving; once the whole process is idle
 * (see quiescence.ts) it jumps to the next instant a sleeper is due and wakes those due then one
 * by one, in the order they went to sleep, letting each settle before the next. How busy the machine is changes how long a run takes, never
 * what happens in it.
 */
import type { Clock } from '../ports.js';
import { SleeperQueue } from '../sleepers.js';
import type { Quiescence } from './quiescence.js';

/** Wakes at one instant beyond which a run is taken to spin (a loop of zero-length sleeps). */
const maxWakesAtOneInstant = 100_000;

export interface RunOptions {
  /** Called with each instant that had wakes, once they have all settled; a throw ends the run with it. */
  afterInstant?: (nowMs: number) => void;
  /** Ends the run early when it returns true (checked after each instant). */
  until?: () => boolean;
}

export class VirtualClock implements Clock {
  private now: number;
  private readonly sleepers = new SleeperQueue();
  private running = false;

  constructor(
    startMs: number,
    private readonly quiescence: Quiescence,
  ) {
    this.now = startMs;
  }

  nowMs(): number {
    return this.now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.sleepers.sleepUntil(this.now + Math.max(0, Number.isFinite(ms) ? ms : 0), signal);
  }

  /** Sleepers still waiting. */
  pending(): number {
    return this.sleepers.size;
  }

  /** When the next sleeper is due, if any. */
  nextDueMs(): number | undefined {
    return this.sleepers.nextDueMs();
  }

  /** Waits until the process is idle, without moving time. */
  settle(): Promise<number> {
    return this.quiescence.settle();
  }

  /**
   * Moves time to `untilMs`, wake by wake: settle, wake the next sleeper due (moving time to
   * its instant), repeat. Ends settled at `untilMs` (or earlier when `options.until` says so).
   */
  async runUntil(untilMs: number, options: RunOptions = {}): Promise<void> {
    if (this.running) throw new Error('VirtualClock.runUntil is already running');
    this.running = true;
    try {
      let wakesHere = 0;
      /** The instant of the last wake, until `afterInstant` has been told it settled. */
      let woken: number | undefined;
      const instantSettled = (): void => {
        if (woken !== undefined) options.afterInstant?.(woken);
        woken = undefined;
      };
      for (;;) {
        await this.settle();
        if (options.until?.()) return;
        const due = this.nextDueMs();
        if (due === undefined || due > untilMs) {
          instantSettled();
          this.now = Math.max(this.now, untilMs);
          await this.settle();
          return;
        }
        if (due > this.now) {
          instantSettled();
          this.now = due;
          wakesHere = 0;
        }
        // One sleeper at a time, in the order they went to sleep, each settled before the next
        // wakes: what two of them do at the same instant never interleaves on the sockets, so the
        // order of their effects is the same in every run.
        const s = this.sleepers.take(this.now)!;
        if (++wakesHere > maxWakesAtOneInstant)
          throw new Error(`more than ${maxWakesAtOneInstant} wakes at ${new Date(this.now).toISOString()}: a loop of zero-length sleeps`);
        woken = this.now;
        s.wake();
      }
    } finally {
      this.running = false;
    }
  }

  /** Runs for `ms` of virtual time from now. */
  runFor(ms: number, options?: RunOptions): Promise<void> {
    return this.runUntil(this.now + ms, options);
  }

  /** Steps the clock without waking anyone, as an NTP correction does. */
  step(byMs: number): void {
    this.now += byMs;
  }
}
