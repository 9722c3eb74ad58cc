/** Runs a long-lived command until SIGINT or SIGTERM aborts the signal it is given. */
import type { CliIo } from './types.js';

export async function untilSignal<T>(io: Pick<CliIo, 'signals'>, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  io.signals.on('SIGINT', onSignal);
  io.signals.on('SIGTERM', onSignal);
  try {
    return await run(stop.signal);
  } finally {
    io.signals.off('SIGINT', onSignal);
    io.signals.off('SIGTERM', onSignal);
  }
}
