/**
 * Hourly energy from meter readings — pure and incremental.
 *
 * Readings come one by one (`accumulate` for cumulative counters, `accumulatePower` for devices
 * that only report power). Between two consecutive readings a and b the energy is spread
 * linearly in time (for a counter: linear interpolation of the counter at hour boundaries; for
 * power: trapezoid rule). An hour is emitted ("closed") once a reading at or after its end has
 * been seen, or `closeHoursBefore` decides no reading can still cover it.
 *
 * Never invents energy: an interval is *uncovered* (its energy is not attributed to any hour) when
 * - it crosses an hour boundary and is longer than `maxGapMs` (how the energy splits is unknown);
 *   an interval inside one hour is always attributed, however long, since its energy is exact;
 * - the counter went down (reset / meter exchange) and it is not a wrap;
 * - the counter rose faster than `maxPowerKw` allows (a glitch or a meter swap).
 * An hour whose whole 3 600 000 ms is covered is `complete`; one with some coverage is `partial`
 * (its kWh is a lower bound); one with none is `gap` (kWh 0, meaning "unknown").
 *
 * The state is a plain JSON-serialisable object the metering job persists with its readings.
 * Hours are UTC-keyed by their start in epoch milliseconds.
 */

export const HOUR_MS = 3_600_000;

export type HourQuality = 'complete' | 'partial' | 'gap';

export interface HourEnergy {
  /** Start of the UTC hour, epoch ms. */
  hourStartMs: number;
  /** Energy attributed to the hour, kWh. A lower bound when `partial`; 0 and unknown when `gap`. */
  kwh: number;
  /** How much of the hour is covered by attributed intervals, ms (0..3 600 000). */
  coveredMs: number;
  quality: HourQuality;
  /** True when integrated from power readings rather than read from a counter. */
  estimated: boolean;
  /** Counter resets, wraps of implausible size and jumps seen in this hour. */
  discontinuities: number;
}

export interface CounterSample {
  atMs: number;
  kwh: number;
}

export interface PowerSample {
  atMs: number;
  w: number;
}

export interface MeteringOptions {
  /** Longest interval split across an hour boundary by interpolation. Default 15 min. */
  maxGapMs?: number;
  /** Counter modulus: a drop from near it is read as a wrap, not a reset. */
  wrapKwh?: number;
  /** A counter rise implying more than this average power is a discontinuity. */
  maxPowerKw?: number;
  /** Counter drops up to this size are read-out noise: treated as no change. Default 0. */
  jitterKwh?: number;
  /** At most this many gap hours are emitted at once (guards against clock jumps). Default 1 year. */
  maxGapHours?: number;
}

interface OpenHour {
  hourStartMs: number;
  kwh: number;
  coveredMs: number;
  discontinuities: number;
}

export interface MeteringState {
  method: 'counter' | 'power';
  /** The last accepted reading: kWh for a counter, W for power. */
  last: { atMs: number; value: number } | null;
  /** The hour currently accumulating; every hour before it has been emitted. */
  open: OpenHour | null;
}

export interface AccumulateResult {
  state: MeteringState;
  closedHours: HourEnergy[];
  /** Set when the reading was not used. */
  ignored?: 'invalid' | 'out-of-order';
}

export const defaultMaxGapMs = 15 * 60_000;

export function initialMeteringState(method: 'counter' | 'power'): MeteringState {
  return { method, last: null, open: null };
}

export function floorHourMs(ms: number): number {
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
}

class Acc {
  readonly closed: HourEnergy[] = [];
  readonly state: MeteringState;

  constructor(state: MeteringState, private readonly options: MeteringOptions) {
    this.state = { method: state.method, last: state.last && { ...state.last }, open: state.open && { ...state.open } };
  }

  private emit(h: OpenHour): void {
    this.closed.push({
      hourStartMs: h.hourStartMs,
      kwh: h.kwh,
      coveredMs: h.coveredMs,
      quality: h.coveredMs >= HOUR_MS ? 'complete' : h.coveredMs > 0 ? 'partial' : 'gap',
      estimated: this.state.method === 'power',
      discontinuities: h.discontinuities,
    });
  }

  /** Moves the open hour forward to `hourStartMs`, emitting it and any gap hours in between. */
  advanceTo(hourStartMs: number): void {
    const fresh = (h: number): OpenHour => ({ hourStartMs: h, kwh: 0, coveredMs: 0, discontinuities: 0 });
    const open = this.state.open;
    if (open === null) {
      this.state.open = fresh(hourStartMs);
      return;
    }
    if (open.hourStartMs >= hourStartMs) return;
    this.emit(open);
    const maxGapHours = this.options.maxGapHours ?? 24 * 366;
    const firstGap = Math.max(open.hourStartMs + HOUR_MS, hourStartMs - maxGapHours * HOUR_MS);
    for (let h = firstGap; h < hourStartMs; h += HOUR_MS) this.emit(fresh(h));
    this.state.open = fresh(hourStartMs);
  }

  /** Attributes the interval [a, b] hour by hour; `valueAt` is the cumulative energy curve (kWh). */
  attribute(a: number, b: number, energy: (t0: number, t1: number) => number): void {
    let t = a;
    while (t < b) {
      const h = floorHourMs(t);
      const end = Math.min(b, h + HOUR_MS);
      const open = this.state.open;
      if (open === null || h >= open.hourStartMs) {
        this.advanceTo(h);
        const o = this.state.open as OpenHour;
        o.kwh += energy(t, end);
        o.coveredMs += end - t;
      }
      t = end;
    }
  }

  markDiscontinuity(atMs: number): void {
    const h = floorHourMs(atMs);
    if (this.state.open !== null && h < this.state.open.hourStartMs) return;
    this.advanceTo(h);
    (this.state.open as OpenHour).discontinuities += 1;
  }
}

function crossesBoundary(a: number, b: number): boolean {
  return floorHourMs(a) + HOUR_MS < b;
}

/** Beyond this a timestamp is not a date (and hour arithmetic stops moving). */
const maxAbsTimeMs = 8.64e15;
/** No meter counts this high; larger values are corrupt reads whose differences overflow. */
const maxCounterKwh = 1e12;

function precheck(state: MeteringState, atMs: number, value: number, counter: boolean): AccumulateResult | null {
  const insane = Math.abs(atMs) > maxAbsTimeMs || (counter && value > maxCounterKwh) || (!counter && Math.abs(value) > 1e9);
  if (!Number.isFinite(atMs) || !Number.isFinite(value) || (counter && value < 0) || insane) {
    return { state, closedHours: [], ignored: 'invalid' };
  }
  if (state.last !== null && atMs <= state.last.atMs) return { state, closedHours: [], ignored: 'out-of-order' };
  return null;
}

/** Feeds one cumulative counter reading. */
export function accumulate(state: MeteringState, sample: CounterSample, options: MeteringOptions = {}): AccumulateResult {
  const skip = precheck(state, sample.atMs, sample.kwh, true);
  if (skip) return skip;
  const acc = new Acc(state, options);
  const last = acc.state.last;
  const b = sample.atMs;
  let newValue = sample.kwh;
  if (last !== null) {
    const a = last.atMs;
    let delta = sample.kwh - last.value;
    let continuous = true;
    if (delta < 0) {
      const wrapped = options.wrapKwh !== undefined ? options.wrapKwh - last.value + sample.kwh : Number.NaN;
      if (-delta <= (options.jitterKwh ?? 0)) {
        delta = 0;
        newValue = last.value;
      } else if (options.wrapKwh !== undefined && wrapped >= 0 && wrapped < options.wrapKwh / 2) {
        delta = wrapped;
      } else {
        continuous = false;
      }
    }
    if (continuous && options.maxPowerKw !== undefined && delta / ((b - a) / HOUR_MS) > options.maxPowerKw) {
      continuous = false;
    }
    if (!continuous) {
      acc.markDiscontinuity(b - 1);
    } else if (!(b - a > (options.maxGapMs ?? defaultMaxGapMs) && crossesBoundary(a, b))) {
      const curve = (t: number): number => (t >= b ? delta : (delta * (t - a)) / (b - a));
      acc.attribute(a, b, (t0, t1) => curve(t1) - curve(t0));
    }
  }
  acc.advanceTo(floorHourMs(b));
  acc.state.last = { atMs: b, value: newValue };
  return { state: acc.state, closedHours: acc.closed };
}

/** Feeds one power reading (W); energy is integrated by the trapezoid rule and marked estimated. */
export function accumulatePower(state: MeteringState, sample: PowerSample, options: MeteringOptions = {}): AccumulateResult {
  const skip = precheck(state, sample.atMs, sample.w, false);
  if (skip) return skip;
  const acc = new Acc(state, options);
  const last = acc.state.last;
  const b = sample.atMs;
  if (last !== null && !(b - last.atMs > (options.maxGapMs ?? defaultMaxGapMs) && crossesBoundary(last.atMs, b))) {
    const a = last.atMs;
    const pa = last.value;
    const p = (t: number): number => pa + ((sample.w - pa) * (t - a)) / (b - a);
    acc.attribute(a, b, (t0, t1) => ((p(t0) + p(t1)) / 2) * ((t1 - t0) / 3_600_000_000));
  }
  acc.advanceTo(floorHourMs(b));
  acc.state.last = { atMs: b, value: sample.w };
  return { state: acc.state, closedHours: acc.closed };
}

/**
 * Closes every hour that no future reading (taken at or after `nowMs`) can still cover, e.g.
 * while the device is unreachable. Call it with the time of each read attempt.
 */
export function closeHoursBefore(state: MeteringState, nowMs: number, options: MeteringOptions = {}): AccumulateResult {
  if (state.last === null || state.open === null) return { state, closedHours: [] };
  const target = floorHourMs(nowMs - (options.maxGapMs ?? defaultMaxGapMs) - 1);
  if (target <= state.open.hourStartMs || state.last.atMs >= target) return { state, closedHours: [] };
  const acc = new Acc(state, options);
  acc.advanceTo(target);
  return { state: acc.state, closedHours: acc.closed };
}

/** The hour still accumulating, as it stands (never `complete`). */
export function openHour(state: MeteringState): HourEnergy | null {
  const h = state.open;
  if (h === null) return null;
  return {
    hourStartMs: h.hourStartMs, kwh: h.kwh, coveredMs: h.coveredMs,
    quality: h.coveredMs >= HOUR_MS ? 'complete' : h.coveredMs > 0 ? 'partial' : 'gap',
    estimated: state.method === 'power', discontinuities: h.discontinuities,
  };
}

/** Batch helper: hourly energy of a time-ordered series of counter readings. */
export function hourlyFromCounter(
  samples: readonly CounterSample[],
  options: MeteringOptions & { includeOpen?: boolean } = {},
): HourEnergy[] {
  let state = initialMeteringState('counter');
  const out: HourEnergy[] = [];
  for (const s of samples) {
    const r = accumulate(state, s, options);
    state = r.state;
    out.push(...r.closedHours);
  }
  const open = options.includeOpen ? openHour(state) : null;
  return open ? [...out, open] : out;
}

/** Batch helper: hourly energy integrated from a time-ordered series of power readings. */
export function hourlyFromPower(
  samples: readonly PowerSample[],
  options: MeteringOptions & { includeOpen?: boolean } = {},
): HourEnergy[] {
  let state = initialMeteringState('power');
  const out: HourEnergy[] = [];
  for (const s of samples) {
    const r = accumulatePower(state, s, options);
    state = r.state;
    out.push(...r.closedHours);
  }
  const open = options.includeOpen ? openHour(state) : null;
  return open ? [...out, open] : out;
}
