/**
 * Runs an app until SIGTERM/SIGINT: the first signal starts a graceful stop raced against a
 * deadline; a second signal returns at once with 128 + signal number.
 */
import { errorCodes, type ErrorCode } from '../errors.js';
import type { Logger } from '../log.js';
import { exitCodeFor, exitCodes, signalExitCode } from './exit-codes.js';

export interface Daemon {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface DaemonOptions {
  logger: Logger;
  signals: Pick<NodeJS.Process, 'on' | 'off'>;
  /** Graceful stop deadline, ms (default 10 s). */
  deadlineMs?: number;
  /** Called once the app has started (e.g. to tell systemd). */
  onStarted?: () => void;
}

type Sig = 'SIGINT' | 'SIGTERM';

/** Resolves with the process exit code. */
export async function runDaemon(app: Daemon, options: DaemonOptions): Promise<number> {
  const log = options.logger.child({ component: 'main' });
  const deadlineMs = options.deadlineMs ?? 10_000;
  let firstSignal: ((s: Sig) => void) | undefined;
  let secondSignal: ((s: Sig) => void) | undefined;
  const signalled = new Promise<Sig>((resolve) => (firstSignal = resolve));
  const forced = new Promise<Sig>((resolve) => (secondSignal = resolve));
  let count = 0;
  const handler = (signal: Sig): void => {
    count += 1;
    if (count === 1) {
      log.info({ signal }, 'stopping');
      firstSignal?.(signal);
    } else {
      log.warn({ signal }, 'second signal: exiting at once');
      secondSignal?.(signal);
    }
  };
  const onTerm = (): void => handler('SIGTERM');
  const onInt = (): void => handler('SIGINT');
  options.signals.on('SIGTERM', onTerm);
  options.signals.on('SIGINT', onInt);
  let timer: NodeJS.Timeout | undefined;
  // Signal listeners do not keep Node alive; this does, until the daemon has stopped.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  try {
    const started = app.start().then(
      () => ({ ok: true as const }),
      (err: unknown) => ({ ok: false as const, err }),
    );
    const first = await Promise.race([started, signalled.then((signal) => ({ signal }))]);
    let startError: unknown;
    if ('ok' in first) {
      if (first.ok) {
        log.info('running');
        options.onStarted?.();
        await signalled;
      } else {
        startError = first.err;
        logError(log, startError, 'start failed');
      }
    }
    // Stop: after start settles (a signal may arrive while starting), under the deadline.
    const stopping = started
      .then(() => app.stop())
      .then(
        () => (startError === undefined ? exitCodes.ok : exitCodeFor(startError)),
        (err: unknown) => {
          logError(log, err, 'stop failed');
          return startError === undefined ? exitCodes.failure : exitCodeFor(startError);
        },
      );
    const deadline = new Promise<number>((resolve) => {
      timer = setTimeout(() => {
        log.error({ code: 'INTERNAL', deadlineMs }, 'graceful stop missed its deadline; exiting');
        resolve(exitCodes.failure);
      }, deadlineMs);
    });
    const code = await Promise.race([stopping, deadline, forced.then(signalExitCode)]);
    if (code === exitCodes.ok) log.info('stopped');
    return code;
  } finally {
    if (timer) clearTimeout(timer);
    clearInterval(keepAlive);
    options.signals.off('SIGTERM', onTerm);
    options.signals.off('SIGINT', onInt);
  }
}

/** One line a person can act on: what failed and why, with the code and, for wattshift's codes, what to do. */
export function logError(log: Logger, err: unknown, what: string): void {
  const raw = (err as { code?: unknown } | null)?.code;
  const code = typeof raw === 'string' ? raw : 'INTERNAL';
  const hint = code in errorCodes ? errorCodes[code as ErrorCode].hint : undefined;
  log.error({ err, code, ...(hint ? { hint } : {}) }, `${what}: ${err instanceof Error ? err.message : String(err)}`);
}
