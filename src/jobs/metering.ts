import { z } from 'zod';
import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { DeviceConfig, SiteConfig } from '../config/schema.js';
import type { DeviceReading } from '../devices/supervisor.js';
import type { Store, HourlyEnergyInput, EnergyQuality } from '../store/types.js';
import {
  HOUR_MS,
  accumulate,
  accumulatePower,
  closeHoursBefore,
  defaultMaxGapMs,
  initialMeteringState,
  openHour,
  type AccumulateResult,
  type HourEnergy,
  type MeteringOptions,
  type MeteringState,
} from '../core/metering.js';
import { codeOf } from '../errors.js';

/** One metered thing: a device (by resource/device subject) or the location's main meter. */
export interface MeteredSubject {
  subject: string;
  /** Counter when the device has a cumulative energy register, else integrated power. */
  method: 'counter' | 'power';
  options?: MeteringOptions;
}

/**
 * The metered subject of each device: `location` for the location's main meter, `device:<id>`
 * for every other device (hourly rows are stored under it).
 */
export function meterSubjectOf(devices: readonly DeviceConfig[]): (deviceId: string) => string {
  const mainMeterId = devices.find((d) => d.kind === 'meter' && d.model.main)?.id ?? null;
  return (id) => (id === mainMeterId ? 'location' : `device:${id}`);
}

/** What metering takes from one control-loop reading of a subject. */
export type MeterReading = Pick<DeviceReading, 'atMs' | 'energyKwh' | 'energyAtMs' | 'powerW'>;

const meteringStateSchema = z.strictObject({
  method: z.enum(['counter', 'power']),
  last: z.strictObject({ atMs: z.number(), value: z.number() }).nullable(),
  open: z
    .strictObject({
      hourStartMs: z.number(),
      kwh: z.number(),
      coveredMs: z.number(),
      discontinuities: z.number(),
      interpolated: z.boolean().optional(),
    })
    .nullable(),
});

const stateKey = (subject: string): string => `metering:${subject}`;

/** Headroom over a device's rated power before a counter rise counts as a glitch. */
const powerHeadroom = 1.5;

/**
 * Metering options of a device: its counter may not rise faster than the device can draw (a
 * garbled read or a meter swap would otherwise become energy). Sub-meters have no known limit.
 */
export function meteringOptionsFor(device: DeviceConfig, site: Pick<SiteConfig, 'locationLimitKw'>): MeteringOptions {
  const ratedKw =
    device.kind === 'hotWaterTank'
      ? device.model.elementKw
      : device.kind === 'heatPump'
        ? device.model.electricKw
        : device.kind === 'zone'
          ? device.model.powerKw
          : device.kind === 'evCharger'
            ? (device.model.phases * device.model.voltageV * device.model.maxCurrentA) / 1000
            : device.kind === 'solar'
              ? device.model.peakKwp
              : device.model.main
                ? site.locationLimitKw
                : undefined;
  return ratedKw === undefined ? {} : { maxPowerKw: ratedKw * powerHeadroom };
}

/**
 * The stored quality. `estimated` (integrated from power, or split over a restart or a long
 * interval) is reported like `measured`: the API carries no quality, and the total is real.
 * `partial` is reported as a lower bound, `gap` left out (see core/reports).
 */
function toRow(subject: string, h: HourEnergy): HourlyEnergyInput {
  const quality = h.quality === 'gap' ? 'gap' : h.quality === 'partial' ? 'partial' : h.estimated || h.interpolated ? 'estimated' : 'measured';
  return { subject, hourStartMs: h.hourStartMs, kwh: h.kwh, quality, samples: 0 };
}

const coverageRank: Record<EnergyQuality, number> = { gap: 0, partial: 1, estimated: 2, measured: 2 };

/**
 * Whether the stored row of an hour beats a newly closed one. They only meet after the clock
 * stepped back, each holding energy of one timeline: the better covered wins; of two partial rows
 * the larger (both are lower bounds); of two complete ones the newer (read on the corrected clock).
 */
export function keepStoredHour(stored: Pick<HourlyEnergyInput, 'quality' | 'kwh'>, fresh: Pick<HourlyEnergyInput, 'quality' | 'kwh'>): boolean {
  const better = coverageRank[fresh.quality] - coverageRank[stored.quality];
  if (better !== 0) return better < 0;
  return stored.quality === 'partial' && stored.kwh > fresh.kwh;
}

export interface Metering {
  /** Feeds one reading; readings without the subject's quantity are skipped. */
  feed(subject: string, reading: MeterReading): void;
  /**
   * Closes hours no reading can still cover; writes closed hours at most once per `flushEveryMs`
   * and the accumulators alone at most once per `stateFlushEveryMs`.
   */
  tick(nowMs: number): void;
  /** Writes everything buffered now (clean stop). */
  flush(): void;
  /** The last value fed for a subject (a counter's kWh, or W), undefined before any. */
  lastValue(subject: string): number | undefined;
  /** The hour still accumulating, per subject (for status). */
  openHours(): Map<string, HourEnergy | null>;
  /** How many writes of closed hours have been committed since start: a change means the hourly rows did. */
  hourWrites(): number;
  health(): { ok: boolean; lastError: { code: string; message: string; atMs: number } | null; buffered: number };
}

/**
 * Hourly metering: readings go through the pure accumulator; closed hours and the accumulator
 * states are written together in one transaction, never half a flush. Closed hours are written
 * within a minute; the accumulators alone every 10 minutes, since every commit rewrites at least a
 * whole 4 KiB page (SD cards wear): at a minute that was 6 MB a day for a few hundred bytes of
 * state. A power cut loses no counter energy (the hour is split over the gap and marked
 * estimated), and at most 10 minutes of power-integrated energy.
 *
 * Counter glitches (a drop, a rise faster than the device can draw) are logged at most once an
 * hour per subject (METER_DISCONTINUITY); a clock step back once per step (CLOCK_JUMP).
 */
export function createMetering(deps: {
  store: Pick<Store, 'transaction' | 'upsertHourly' | 'readHourly' | 'getState' | 'setState'>;
  subjects: readonly MeteredSubject[];
  clock: Clock;
  logger: Logger;
  flushEveryMs?: number;
  stateFlushEveryMs?: number;
}): Metering {
  const log = deps.logger.child({ component: 'metering' });
  const flushEveryMs = deps.flushEveryMs ?? 60_000;
  const stateFlushEveryMs = Math.max(flushEveryMs, deps.stateFlushEveryMs ?? 600_000);
  /** Per subject; `resumed` until the first reading after a saved state was loaded (a restart). */
  const states = new Map<string, { state: MeteringState; options: MeteringOptions; resumed: boolean; warnedAtMs?: number }>();
  for (const s of deps.subjects) {
    const saved = deps.store.getState(stateKey(s.subject), meteringStateSchema);
    const state = saved && saved.method === s.method ? saved : initialMeteringState(s.method);
    states.set(s.subject, { state, options: s.options ?? {}, resumed: state.last !== null });
  }
  let buffer: HourlyEnergyInput[] = [];
  let dirty = false;
  let hourWrites = 0;
  let lastFlushMs = deps.clock.nowMs();
  let lastError: { code: string; message: string; atMs: number } | null = null;
  /** When the last clock step was logged (on the new timeline): meters seeing one step log it once. */
  let clockStepLoggedAtMs: number | undefined;

  function take(subject: string, closed: HourEnergy[]): void {
    for (const h of closed) buffer.push(toRow(subject, h));
  }

  /** Rows to write: per hour the one that beats what is stored (see keepStoredHour). */
  function rowsToWrite(rows: readonly HourlyEnergyInput[]): HourlyEnergyInput[] {
    const chosen = new Map<string, HourlyEnergyInput>();
    for (const subject of new Set(rows.map((r) => r.subject))) {
      const hours = rows.filter((r) => r.subject === subject).map((r) => r.hourStartMs);
      const stored = deps.store.readHourly(subject, Math.min(...hours), Math.max(...hours) + HOUR_MS);
      const current = new Map<number, Pick<HourlyEnergyInput, 'quality' | 'kwh'>>(stored.map((r) => [r.hourStartMs, r]));
      for (const r of rows) {
        if (r.subject !== subject) continue;
        const before = current.get(r.hourStartMs);
        if (before && keepStoredHour(before, r)) continue;
        current.set(r.hourStartMs, r);
        chosen.set(`${subject}@${r.hourStartMs}`, r);
      }
    }
    return [...chosen.values()];
  }

  function flush(): void {
    if (!dirty && buffer.length === 0) return;
    const rows = buffer;
    try {
      deps.store.transaction(
        () => {
          if (rows.length > 0) deps.store.upsertHourly(rowsToWrite(rows));
          for (const [subject, { state }] of states) deps.store.setState(stateKey(subject), state);
          // Rows and states move together, so a power cut that undoes this commit loses a minute
          // of readings consistently; no fsync a minute spares the SD card.
        },
        { durable: false },
      );
      buffer = [];
      dirty = false;
      if (rows.length > 0) hourWrites++;
      lastError = null;
      lastFlushMs = deps.clock.nowMs();
    } catch (err) {
      // Keep the buffer: the next flush retries it (disk full, read-only...). Control goes on.
      const code = codeOf(err, 'STORE_FAILED');
      if (lastError === null) log.error({ code, err }, 'metering write failed; readings kept in memory');
      lastError = { code, message: err instanceof Error ? err.message : String(err), atMs: deps.clock.nowMs() };
    }
  }

  function report(
    subject: string,
    entry: { warnedAtMs?: number },
    atMs: number,
    d: NonNullable<AccumulateResult['discontinuity']>,
    value: number,
  ): void {
    const detail = { subject, from: { atMs: d.from.atMs, value: d.from.value }, to: { atMs, value } };
    if (d.kind === 'clock-back') {
      if (clockStepLoggedAtMs !== undefined && Math.abs(atMs - clockStepLoggedAtMs) <= defaultMaxGapMs) return;
      clockStepLoggedAtMs = atMs;
      log.warn(
        { code: 'CLOCK_JUMP', ...detail, backMs: d.from.atMs - atMs },
        'clock stepped back; metering goes on from the new time, the energy across the step is left out of the hours',
      );
      return;
    }
    if (entry.warnedAtMs !== undefined && Math.abs(atMs - entry.warnedAtMs) < HOUR_MS) return;
    entry.warnedAtMs = atMs;
    log.warn({ code: 'METER_DISCONTINUITY', kind: d.kind, ...detail }, 'meter counter not continuous; the interval is left out of the hourly energy');
  }

  return {
    feed(subject, reading) {
      const entry = states.get(subject);
      if (!entry) return;
      let r: AccumulateResult | null = null;
      let sample: { atMs: number; value: number } | null = null;
      const resumed = entry.resumed;
      if (entry.state.method === 'counter' && reading.energyKwh !== undefined) {
        sample = { atMs: reading.energyAtMs ?? reading.atMs, value: reading.energyKwh };
        r = accumulate(entry.state, { atMs: sample.atMs, kwh: sample.value, resumed }, entry.options);
      } else if (entry.state.method === 'power' && reading.powerW !== undefined) {
        sample = { atMs: reading.atMs, value: reading.powerW };
        r = accumulatePower(entry.state, { atMs: sample.atMs, w: sample.value, resumed }, entry.options);
      }
      if (!r || !sample) return;
      if (!r.ignored) entry.resumed = false;
      if (r.ignored) log.debug({ subject, ignored: r.ignored }, 'reading not used');
      if (r.discontinuity) report(subject, entry, sample.atMs, r.discontinuity, sample.value);
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
      const sinceMs = nowMs - lastFlushMs;
      if (sinceMs < 0 || sinceMs >= stateFlushEveryMs || (buffer.length > 0 && sinceMs >= flushEveryMs)) flush();
    },
    flush,
    lastValue: (subject) => states.get(subject)?.state.last?.value,
    openHours: () => new Map([...states].map(([s, e]) => [s, openHour(e.state)])),
    hourWrites: () => hourWrites,
    health: () => ({ ok: lastError === null, lastError, buffered: buffer.length }),
  };
}
