import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import { codeOf, isRetryable, loggedError } from '../errors.js';

export interface LoopHandle {
  /** Runs the next tick as soon as the current one (if any) finishes. */
  wake(): void;
  /** Stops after the current tick; resolves when the loop has ended. */
  stop(): Promise<void>;
}

/**
 * A loop that never overlaps itself: await the tick, then sleep on the injected clock. A tick that
 * throws is logged with its error code and the loop goes on; `wake()` cuts the sleep short.
 */
export function startLoop(options: {
  name: string;
  clock: Clock;
  logger: Logger;
  /** Returns the delay before the next tick, ms of clock time. */
  tick: (signal: AbortSignal) => Promise<number>;
  /** Delay after a failed tick. */
  errorDelayMs: number;
}): LoopHandle {
  const stopController = new AbortController();
  // Ends the current sleep early; aborted by wake() and by stop(). One per sleep.
  let sleeper: AbortController | null = null;
  let woken = false;

  // A failure is logged once when it starts (error, or warn when retryable) and once when the
  // loop recovers; repeats of the same code in between go to debug, so an outage does not flood.
  let failingCode: string | null = null;
  const done = (async () => {
    while (!stopController.signal.aborted) {
      let delay: number;
      try {
        woken = false;
        delay = await options.tick(stopController.signal);
        if (failingCode !== null) {
          options.logger.info({ loop: options.name, downSinceCode: failingCode }, `${options.name} recovered`);
          failingCode = null;
        }
      } catch (err) {
        if (stopController.signal.aborted) break;
        const code = codeOf(err);
        const level = code === failingCode ? 'debug' : isRetryable(err) ? 'warn' : 'error';
        options.logger[level]({ err: loggedError(err), code, loop: options.name }, `${options.name} tick failed`);
        failingCode = code;
        delay = options.errorDelayMs;
      }
      if (woken || stopController.signal.aborted) continue;
      sleeper = new AbortController();
      await options.clock.sleep(delay, sleeper.signal).catch(() => undefined);
      sleeper = null;
    }
  })();

  return {
    wake() {
      woken = true;
      sleeper?.abort();
    },
    async stop() {
      stopController.abort();
      sleeper?.abort();
      await done;
    },
  };
}
