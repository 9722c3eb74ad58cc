/**
 * The last value of each quantity an MQTT device pushed, with its arrival time. MQTT devices push;
 * a read returns the last value only while it is younger than `staleAfterMs`, otherwise it fails
 * with DEVICE_STALE: a stale value is treated as missing, never as current.
 *
 * With `deviceLiveness`, age is the device's silence, not the value's: a device that publishes a
 * key only when it changes (go-e API v2) keeps an unchanged value current as long as it is heard
 * from at all (`heard()`, e.g. its periodic uptime key); a value unchanged for a minute counts as
 * read when the device was last heard from.
 */
import { WattshiftError } from '../../errors.js';
import type { Clock } from '../../ports.js';
import { withTimeout } from './util.js';

interface Slot {
  value?: unknown;
  atMs?: number;
  seq: number;
  error?: WattshiftError;
  errorSeq: number;
}

export interface LatestValuesOptions {
  device: string;
  clock: Clock;
  staleAfterMs: number;
  /** Whether the broker connection is up; reads fail with MQTT_UNAVAILABLE while it is not. */
  isConnected: () => boolean;
  /** Staleness is the device's silence (see `heard`) rather than each value's age. */
  deviceLiveness?: boolean;
  /**
   * With device liveness, whether a value unchanged for a while counts as read at the device's
   * last word (default true: the device publishes a key as soon as it changes). False where some
   * values come only at intervals (a counter in a once-a-minute status): their arrival time is the
   * only true stamp.
   */
  quietValuesHold?: boolean;
}

/** How long a device-liveness value must stay unchanged before it counts as read at the last word. */
const quietForMs = 60_000;

export class LatestValues {
  private readonly slots = new Map<string, Slot>();
  private readonly waiters = new Set<{ name: string; afterSeq: number; resolve: () => void }>();
  private seq = 0;
  private offline: WattshiftError | undefined;
  private lastHeardMs: number | undefined;

  constructor(private readonly options: LatestValuesOptions) {}

  private slot(name: string): Slot {
    let s = this.slots.get(name);
    if (!s) {
      s = { seq: 0, errorSeq: 0 };
      this.slots.set(name, s);
    }
    return s;
  }

  /** Records that the device published something, whatever it was. */
  heard(): void {
    this.lastHeardMs = this.options.clock.nowMs();
  }

  /** Whether the device was heard from within `staleAfterMs` (always false before it was). */
  alive(): boolean {
    return this.lastHeardMs !== undefined && this.options.clock.nowMs() - this.lastHeardMs <= this.options.staleAfterMs;
  }

  /** Records a good value. */
  put(name: string, value: unknown): void {
    const s = this.slot(name);
    s.value = value;
    s.atMs = this.options.clock.nowMs();
    this.lastHeardMs = s.atMs;
    s.seq = ++this.seq;
    for (const w of this.waiters) {
      if (w.name === name && s.seq > w.afterSeq) {
        this.waiters.delete(w);
        w.resolve();
      }
    }
  }

  /** Records that the latest payload for `name` was unusable; reads fail until a good one comes. */
  bad(name: string, error: WattshiftError): void {
    const s = this.slot(name);
    s.error = error;
    s.errorSeq = ++this.seq;
  }

  /** Marks the device offline (its LWT/availability topic said so) or back online (undefined). */
  setOffline(error: WattshiftError | undefined): void {
    this.offline = error;
  }

  /** The sequence number of the latest good value (0 when none). */
  version(name: string): number {
    return this.slots.get(name)?.seq ?? 0;
  }

  /** The last value regardless of age, for internal decisions (e.g. "already set"). */
  peek(name: string): unknown {
    return this.slots.get(name)?.value;
  }

  /** The current value, or throws MQTT_UNAVAILABLE / DEVICE_UNREACHABLE / DEVICE_BAD_VALUE / DEVICE_STALE. */
  get(name: string): unknown {
    return this.getStamped(name).value;
  }

  /** Like `get`, with the clock time the value arrived. */
  getStamped(name: string): { value: unknown; atMs: number } {
    const { device } = this.options;
    if (!this.options.isConnected()) {
      throw new WattshiftError('MQTT_UNAVAILABLE', `${device}: MQTT broker not connected`, { details: { device } });
    }
    if (this.offline) throw this.offline;
    if (this.options.deviceLiveness && this.lastHeardMs !== undefined && !this.alive()) {
      const ageMs = this.options.clock.nowMs() - this.lastHeardMs;
      throw new WattshiftError('DEVICE_STALE', `${device}: silent for ${Math.round(ageMs / 1000)} s`, {
        details: { device, value: name, ageMs, staleAfterMs: this.options.staleAfterMs },
      });
    }
    const s = this.slots.get(name);
    if (s?.error && s.errorSeq > s.seq) throw s.error;
    if (s?.atMs === undefined) {
      throw new WattshiftError('DEVICE_STALE', `${device}: no ${name} received yet`, { details: { device, value: name } });
    }
    if (this.options.deviceLiveness && this.options.quietValuesHold === false) return { value: s.value, atMs: s.atMs };
    if (this.options.deviceLiveness) {
      // A value unchanged for a while is still the device's value as of its last word; a recent one
      // keeps its arrival time, or a counter published less often than the heartbeat would seem to
      // jump (its increment squeezed into the time since the heartbeat).
      const heard = this.lastHeardMs ?? s.atMs;
      return { value: s.value, atMs: heard - s.atMs > quietForMs ? heard : s.atMs };
    }
    const ageMs = this.options.clock.nowMs() - s.atMs;
    if (ageMs > this.options.staleAfterMs) {
      throw new WattshiftError('DEVICE_STALE', `${device}: ${name} is ${Math.round(ageMs / 1000)} s old`, {
        details: { device, value: name, ageMs, staleAfterMs: this.options.staleAfterMs },
      });
    }
    return { value: s.value, atMs: s.atMs };
  }

  /** Resolves when a value newer than `afterSeq` arrives for `name`; aborts with the signal. */
  waitNewer(name: string, afterSeq: number, signal: AbortSignal): Promise<void> {
    if (this.version(name) > afterSeq) return Promise.resolve();
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        name,
        afterSeq,
        resolve: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        this.waiters.delete(waiter);
        reject(signal.reason);
      };
      this.waiters.add(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/**
 * Sends a request (`send`) and waits, up to `timeoutMs` of clock time, for the next value of `key`
 * (the device's answer). DEVICE_TIMEOUT when none comes.
 */
export function requestAnswer(
  values: LatestValues,
  key: string,
  clock: Clock,
  timeoutMs: number,
  what: string,
  send: () => Promise<void>,
  signal: AbortSignal,
): Promise<void> {
  const seen = values.version(key);
  return withTimeout(clock, timeoutMs, signal, what, async (s) => {
    await send();
    await values.waitNewer(key, seen, s);
  });
}

/**
 * Reads through `values`, asking the device for its state when a value fails with one of `codes`
 * (missing, stale or bad): `ask` is sent once however many readers find that out together, and a
 * failed or unanswered ask leaves the reader with the first error.
 */
export function askingReader(
  values: LatestValues,
  codes: readonly string[],
  ask: (signal: AbortSignal) => Promise<void>,
  onAskFailed: (err: unknown) => void,
): (name: string, signal: AbortSignal) => Promise<{ value: unknown; atMs: number }> {
  let asking: Promise<void> | undefined;
  return async (name, signal) => {
    try {
      return values.getStamped(name);
    } catch (err) {
      if (!(err instanceof WattshiftError) || !codes.includes(err.code)) throw err;
      try {
        asking ??= ask(signal).finally(() => {
          asking = undefined;
        });
        await asking;
      } catch (askErr) {
        onAskFailed(askErr);
        throw err;
      }
      return values.getStamped(name);
    }
  };
}
