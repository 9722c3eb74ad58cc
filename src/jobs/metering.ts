import { z } from 'zod';
import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { Store, HourlyEnergyInput } from '../store/types.js';
import {
  accumulate, accumulatePower, closeHoursBefore, initialMeteringState, openHour,
  type HourEnergy, type MeteringOptions, type MeteringState,
} from '../core/metering.js';
import { isWattshiftError } from '../errors.js';

/** One metered thing: a device (by resource/device subject) or the location's main meter. */
export interface MeteredSubject {
  subject: string;
  /** Counter when the device has a cumulative energy register, else integrated power. */
  method: 'counter' | 'power';
  options?: MeteringOptions;
}

const meteringStateSchema = z.strictObject({
  method: z.enum(['counter', 'power']),
  last: z.strictObject({ atMs: z.number(), value: z.number() }).nullable(),
  open: z.strictObject({ hourStartMs: z.number(), kwh: z.number(), coveredMs: z.number(), discontinuities: z.number() }).nullable(),
});

const stateKey = (subject: string): string => `metering:${subject}`;

function toRow(subject: string, h: HourEnergy): HourlyEnergyInput {
  const quality = h.quality === 'gap' ? 'gap' : h.quality === 'partial' ? 'partial' : h.estimated ? 'estimated' : 'measured';
  return { subject, hourStartMs: h.hourStartMs, kwh: h.kwh, quality, samples: 0 };
}

export interface Metering {
  /** Feeds one reading; readings without the subject's quantity are skipped. */
  feed(subject: string, reading: { atMs: number; energyKwh?: number; powerW?: number }): void;
  /** Closes hours no reading can still cover and writes at most once per `flushEveryMs`. */
  tick(nowMs: number): void;
  /** Writes everything buffered now (clean stop). */
  flush(): void;
  /** The hour still accumulating, per subject (for status). */
  openHours(): Map<string, HourEnergy | null>;
  health(): { ok: boolean; lastError: { code: string; message: string; atMs: number } | null; buffered: number };
}

/**
 * Hourly metering: readings go through the pure accumulator; closed hours and the accumulator
 * states are written together in one transaction at most once a minute (SD cards wear), so a
 * power cut loses at most a minute of readings and never half a flush.
 */
export function createMetering(deps: {
  store: Pick<Store, 'transaction' | 'upsertHourly' | 'getState' | 'setState'>;
  subjects: readonly MeteredSubject[];
  clock: Clock;
  logger: Logger;
  flushEveryMs?: number;
}): Metering {
  const log = deps.logger.child({ component: 'metering' });
  const flushEveryMs = deps.flushEveryMs ?? 60_000;
  const states = new Map<string, { state: MeteringState; options: MeteringOptions }>();
  for (const s of deps.subjects) {
    const saved = deps.store.getState(stateKey(s.subject), meteringStateSchema);
    const state = saved && saved.method === s.method ? saved : initialMeteringState(s.method);
    states.set(s.subject, { state, options: s.options ?? {} });
  }
  let buffer: HourlyEnergyInput[] = [];
  let dirty = false;
  let lastFlushMs = deps.clock.nowMs();
  let lastError: { code: string; message: string; atMs: number } | null = null;

  function take(subject: string, closed: HourEnergy[]): void {
    for (const h of closed) buffer.push(toRow(subject, h));
  }

  function flush(): void {
    if (!dirty && buffer.length === 0) return;
    const rows = buffer;
    try {
      deps.store.transaction(() => {
        if (rows.length > 0) deps.store.upsertHourly(rows);
        for (const [subject, { state }] of states) deps.store.setState(stateKey(subject), state);
        // Rows and states move together, so a power cut that undoes this commit loses a minute
        // of readings consistently; no fsync a minute spares the SD card.
      }, { durable: false });
      buffer = [];
      dirty = false;
      lastError = null;
      lastFlushMs = deps.clock.nowMs();
    } catch (err) {
      // Keep the buffer: the next flush retries it (disk full, read-only...). Control goes on.
      const code = isWattshiftError(err) ? err.code : 'STORE_FAILED';
      if (lastError === null) log.error({ code, err }, 'metering write failed; readings kept in memory');
      lastError = { code, message: err instanceof Error ? err.message : String(err), atMs: deps.clock.nowMs() };
    }
  }

  return {
    feed(subject, reading) {
      const entry = states.get(subject);
      if (!entry) return;
      const r =
        entry.state.method === 'counter'
          ? reading.energyKwh === undefined ? null : accumulate(entry.state, { atMs: reading.atMs, kwh: reading.energyKwh }, entry.options)
          : reading.powerW === undefined ? null : accumulatePower(entry.state, { atMs: reading.atMs, w: reading.powerW }, entry.options);
      if (!r) return;
      if (r.ignored) log.debug({ subject, ignored: r.ignored }, 'reading not used');
      entry.state = r.state;
      dirty = true;
      take(subject, r.closedHours);
    },
    tick(nowMs) {
      for (const [subject, entry] of states) {
        const r = closeHoursBefore(entry.state, nowMs, entry.options);
        if (r.closedHours.length > 0) {
          entry.state = r.state;
          dirty = true;
          take(subject, r.closedHours);
        }
      }
      if (nowMs - lastFlushMs >= flushEveryMs || nowMs < lastFlushMs) flush();
    },
    flush,
    openHours: () => new Map([...states].map(([s, e]) => [s, openHour(e.state)])),
    health: () => ({ ok: lastError === null, lastError, buffered: buffer.length }),
  };
}
