/**
 * The gateway's wall clock as NTP can step it: the same flow of time as the home around it, read
 * with an offset that a step changes at once. Sleeps are not moved by a step, as Node's timers run
 * on the monotonic clock; only what `nowMs()` says jumps.
 */
import type { Clock } from '../ports.js';

export class SteppedClock implements Clock {
  private offsetMs = 0;

  constructor(private readonly world: Clock) {}

  nowMs(): number {
    return this.world.nowMs() + this.offsetMs;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.world.sleep(ms, signal);
  }

  /** Steps the wall clock by `byMs` (either way). */
  step(byMs: number): void {
    this.offsetMs += byMs;
  }
}
