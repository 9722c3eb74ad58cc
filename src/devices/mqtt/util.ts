import type { z } from 'zod';
import { WattshiftError, toWattshiftError } from '../../errors.js';
import type { Clock, EnergyMeter } from '../../ports.js';

/**
 * Runs `work` with a signal that aborts after `timeoutMs` of `clock` time or when `signal` aborts.
 * A timeout becomes DEVICE_TIMEOUT; an abort of the outer signal rethrows its reason.
 */
export async function withTimeout<T>(
  clock: Clock,
  timeoutMs: number,
  signal: AbortSignal,
  what: string,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  if (signal.aborted) throw signal.reason;
  const inner = new AbortController();
  const timer = new AbortController();
  const onOuterAbort = (): void => inner.abort(signal.reason);
  signal.addEventListener('abort', onOuterAbort, { once: true });
  const timeout = new WattshiftError('DEVICE_TIMEOUT', `${what}: no answer within ${timeoutMs} ms`, { details: { timeoutMs } });
  clock.sleep(timeoutMs, timer.signal).then(
    () => inner.abort(timeout),
    () => undefined,
  );
  try {
    return await work(inner.signal);
  } catch (err) {
    if (inner.signal.aborted && inner.signal.reason === timeout) throw timeout;
    throw err;
  } finally {
    timer.abort();
    signal.removeEventListener('abort', onOuterAbort);
  }
}

/** Parses a JSON payload; anything unparsable is DEVICE_BAD_VALUE. */
export function parseJson(payload: Buffer, what: string): unknown {
  const text = payload.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new WattshiftError('DEVICE_BAD_VALUE', `${what}: payload is not JSON: ${text.slice(0, 80)}`, { cause: err });
  }
}

/** Validates with a zod schema; a mismatch is DEVICE_BAD_VALUE with the first issue in the message. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid';
    throw new WattshiftError('DEVICE_BAD_VALUE', `${what}: unexpected payload (${where})`, { details: { issues: result.error.issues.length } });
  }
  return result.data;
}

/** Follows a dot path (`ENERGY.Total`, `nrg.11`) into parsed JSON; an empty path is the value itself. */
export function atPath(value: unknown, path: string): unknown {
  if (path === '') return value;
  let current: unknown = value;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** The physical bounds of metered values live in the pure core (one place for every reader). */
export { plausible, meteredBounds as limits } from '../../core/metered-bounds.js';

/** An energy meter over a pushed counter: `read` gives the last value with its arrival time. */
export function pushedEnergyMeter(
  read: (signal: AbortSignal) => Promise<{ value: unknown; atMs: number }>,
  toKwh: (value: unknown) => number,
): EnergyMeter {
  const readStampedEnergyKwh = async (signal: AbortSignal): Promise<{ kwh: number; atMs: number }> => {
    const { value, atMs } = await read(signal);
    return { kwh: toKwh(value), atMs };
  };
  return { readStampedEnergyKwh, readEnergyKwh: async (signal) => (await readStampedEnergyKwh(signal)).kwh };
}

/** Runs a handler body, turning anything it throws into a DEVICE_BAD_VALUE passed to `onBad`. */
export function guard(onBad: (err: WattshiftError) => void, body: () => void): void {
  try {
    body();
  } catch (err) {
    onBad(toWattshiftError(err, 'DEVICE_BAD_VALUE', 'bad payload'));
  }
}
