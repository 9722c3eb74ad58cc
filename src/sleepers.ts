/**
 * The sleepers of a clock that moves only when told to (the unit tests' `ManualClock`, the
 * simulation kernel's `VirtualClock`): each waits for an instant, and they wake in time order,
 * those due at the same instant in the order they went to sleep. An aborted sleep leaves the
 * queue at once and rejects with its signal's reason.
 */
interface Sleeper {
  wakeMs: number;
  wake: () => void;
}

export class SleeperQueue {
  /** Sorted by wake time, then by when each went to sleep. */
  private sleepers: Sleeper[] = [];

  /** Resolves when `take` hands this sleeper out at `wakeMs`. */
  sleepUntil(wakeMs: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const i = this.sleepers.indexOf(sleeper);
        if (i >= 0) this.sleepers.splice(i, 1);
        reject(signal?.reason);
      };
      // The listener goes when the sleeper wakes: a long-lived signal shared by many sleeps
      // must not collect one listener per sleep.
      const sleeper: Sleeper = {
        wakeMs,
        wake: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.insert(sleeper);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Sleepers still waiting. */
  get size(): number {
    return this.sleepers.length;
  }

  /** When the next sleeper is due, if any. */
  nextDueMs(): number | undefined {
    return this.sleepers[0]?.wakeMs;
  }

  /** Takes the next sleeper due at or before `untilMs` out of the queue; the caller sets its time, then wakes it. */
  take(untilMs: number): Sleeper | undefined {
    const next = this.sleepers[0];
    if (!next || next.wakeMs > untilMs) return undefined;
    this.sleepers.shift();
    return next;
  }

  private insert(s: Sleeper): void {
    // Binary search for the first sleeper due later: those due at the same instant keep the order they went to sleep in.
    let lo = 0;
    let hi = this.sleepers.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.sleepers[mid]!.wakeMs <= s.wakeMs) lo = mid + 1;
      else hi = mid;
    }
    this.sleepers.splice(lo, 0, s);
  }
}
