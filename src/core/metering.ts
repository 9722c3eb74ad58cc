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
 * - the counter rose faster than `maxPowerKw` allows (a glitch or a meter swap);
 * - the clock stepped back across it (see below).
 * An hour whose whole 3 600 000 ms is covered is `complete`; one with some coverage is `partial`
 * (its kWh is a lower bound); one with none is `gap` (kWh 0, meaning "unknown"). A complete hour
 * is also `interpolated` when an interval across a restart of the reader (`resumed`), or longer
 * than `maxReadIntervalMs` (a device away for minutes), was split at one of its boundaries: its
 * total is then an estimate, though the energy is real.
 *
 * Clock steps. A reading stamped before the last one means the clock stepped back (an NTP
 * correction). The counter difference across the step is true energy but its hour is unknown, so
 * it stays uncovered; the open hour is closed as it stands (it never mixes readings from both
 * sides of the step) and metering goes on at once on the new timeline, from the hour of the new
 * reading. Hours can therefore be emitted again after a step back; each emission holds energy of
 * one timeline only, and the caller keeps one of them per hour (the better covered), so no hour
 * ever holds energy counted twice. A step forward is a long interval: the hours it skips are gaps.
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
  /** Counter resets, wraps of implausible size, jumps and clock steps seen in this hour. */
  discontinuities: number;
  /** Part of its energy was placed by interpolating over a long interval (see the module comment). */
  interpolated: boolean;
}

export interface CounterSample {
  atMs: number;
  kwh: number;
  /** The reader restarted since the last sample: how the interval splits is an estimate. */
  resumed?: boolean;
}

export interface PowerSample {
  atMs: number;
  w: number;
  /** As for counters. */
  resumed?: boolean;
}

export interface MeteringOptions {
  /** Longest interval split across an hour boundary by interpolation. Default 15 min. */
  maxGapMs?: number;
  /** Counter modulus: a drop from near it is read as a wrap, not a reset. */
  wrapKwh?: number;
  /**
   * A counter rise implying more than this average power is a discontinuity. Over intervals
   * shorter than `maxGapMs` the rise allowed is `maxGapMs`' worth: a reading can arrive late or
   * bunched with the next (a stalled daemon, a slow broker, counter resolution) by as much as
   * metering trusts an interval. What this catches is garbage: a counter off by far more.
   */
  maxPowerKw?: number;
  /**
   * Longest interval between readings in normal operation, with room for a busy reader (on an
   * accelerated clock a CPU stall is minutes). A longer one (up to `maxGapMs`) split across an
   * hour boundary marks the hours on both sides `interpolated`. Default 5 min.
   */
  maxReadIntervalMs?: number;
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
  interpolated?: boolean;
}

export interface MeteringState {
  method: 'counter' | 'power';
  /** The last accepted reading: kWh for a counter, W for power. */
  last: { atMs: number; value: number } | null;
  /** The hour currently accumulating; every hour before it has been emitted. */
  open: OpenHour | null;
}

/** Why a reading was not continuous with the one before (for the caller to log). */
export type DiscontinuityKind = 'counter-down' | 'counter-jump' | 'clock-back';

export interface AccumulateResult {
  state: MeteringState;
  closedHours: HourEnergy[];
  /** Set when the reading was not used. */
  ignored?: 'invalid' | 'duplicate';
  /** Set when the reading was used but the interval before it was left uncovered. */
  discontinuity?: { kind: DiscontinuityKind; from: { atMs: number; value: number } };
}

export const defaultMaxGapMs = 15 * 60_000;
export const defaultMaxReadIntervalMs = 5 * 60_000;

export function initialMeteringState(method: 'counter' | 'power'): MeteringState {
  return { method, last: null, open: null };
}

export function floorHourMs(ms: number): number {
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
}

class Acc {
  readonly closed: HourEnergy[] = [];
  readonly state: MeteringState;

  constructor(
    state: MeteringState,
    private readonly options: MeteringOptions,
  ) {
    this.state = { method: state.method, last: state.last && { ...state.last }, open: state.open && { ...state.open } };
  }

  private emit(h: OpenHour): void {
    this.closed.push(hourEnergyOf(h, this.state.method));
  }

  /** Closes the open hour as it stands and opens `hourStartMs`, whether later or earlier. */
  restartAt(hourStartMs: number): void {
    if (this.state.open !== null) this.emit(this.state.open);
    this.state.open = { hourStartMs, kwh: 0, coveredMs: 0, discontinuities: 1 };
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

  /**
   * Attributes the interval [a, b] hour by hour; `energy` gives the energy of a sub-interval, kWh.
   * `interpolated` marks the hours the interval is split across.
   */
  attribute(a: number, b: number, energy: (t0: number, t1: number) => number, interpolated: boolean): void {
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
        if (interpolated) o.interpolated = true;
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

function hourEnergyOf(h: OpenHour, method: MeteringState['method']): HourEnergy {
  return {
    hourStartMs: h.hourStartMs,
    kwh: h.kwh,
    coveredMs: h.coveredMs,
    quality: h.coveredMs >= HOUR_MS ? 'complete' : h.coveredMs > 0 ? 'partial' : 'gap',
    estimated: method === 'power',
    discontinuities: h.discontinuities,
    interpolated: h.interpolated === true,
  };
}

function crossesBoundary(a: number, b: number): boolean {
  return floorHourMs(a) + HOUR_MS < b;
}

/** How the interval [a, b] may be split across hour boundaries: not at all, exactly, or by interpolation. */
function splitOf(a: number, b: number, resumed: boolean, options: MeteringOptions): 'none' | 'exact' | 'interpolated' {
  if (!crossesBoundary(a, b)) return 'exact';
  if (b - a > (options.maxGapMs ?? defaultMaxGapMs)) return 'none';
  return resumed || b - a > (options.maxReadIntervalMs ?? defaultMaxReadIntervalMs) ? 'interpolated' : 'exact';
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
  if (state.last !== null && atMs === state.last.atMs) return { state, closedHours: [], ignored: 'duplicate' };
  return null;
}

/** A reading older than the last one: the clock stepped back. Re-anchors on the new timeline. */
function stepBack(state: MeteringState, atMs: number, value: number): AccumulateResult | null {
  const last = state.last;
  if (last === null || atMs > last.atMs) return null;
  const acc = new Acc(state, {});
  acc.restartAt(floorHourMs(atMs));
  acc.state.last = { atMs, value };
  return { state: acc.state, closedHours: acc.closed, discontinuity: { kind: 'clock-back', from: last } };
}

/** Feeds one cumulative counter reading. */
export function accumulate(state: MeteringState, sample: CounterSample, options: MeteringOptions = {}): AccumulateResult {
  const settled = precheck(state, sample.atMs, sample.kwh, true) ?? stepBack(state, sample.atMs, sample.kwh);
  if (settled) return settled;
  const acc = new Acc(state, options);
  const last = acc.state.last;
  const b = sample.atMs;
  let newValue = sample.kwh;
  let discontinuity: DiscontinuityKind | undefined;
  if (last !== null) {
    const a = last.atMs;
    let delta = sample.kwh - last.value;
    if (delta < 0) {
      const wrapped = options.wrapKwh !== undefined ? options.wrapKwh - last.value + sample.kwh : Number.NaN;
      if (-delta <= (options.jitterKwh ?? 0)) {
        delta = 0;
        newValue = last.value;
      } else if (options.wrapKwh !== undefined && wrapped >= 0 && wrapped < options.wrapKwh / 2) {
        delta = wrapped;
      } else {
        discontinuity = 'counter-down';
      }
    }
    const maxGapMs = options.maxGapMs ?? defaultMaxGapMs;
    if (discontinuity === undefined && options.maxPowerKw !== undefined && delta > options.maxPowerKw * (Math.max(b - a, maxGapMs) / HOUR_MS)) {
      discontinuity = 'counter-jump';
    }
    const split = splitOf(a, b, sample.resumed === true, options);
    if (discontinuity !== undefined) {
      acc.markDiscontinuity(b - 1);
    } else if (split !== 'none') {
      const curve = (t: number): number => (t >= b ? delta : (delta * (t - a)) / (b - a));
      acc.attribute(a, b, (t0, t1) => curve(t1) - curve(t0), split === 'interpolated');
    }
  }
  acc.advanceTo(floorHourMs(b));
  const from = acc.state.last;
  acc.state.last = { atMs: b, value: newValue };
  return { state: acc.state, closedHours: acc.closed, ...(discontinuity && from ? { discontinuity: { kind: discontinuity, from } } : {}) };
}

/** Feeds one power reading (W); energy is integrated by the trapezoid rule and marked estimated. */
export function accumulatePower(state: MeteringState, sample: PowerSample, options: MeteringOptions = {}): AccumulateResult {
  const settled = precheck(state, sample.atMs, sample.w, false) ?? stepBack(state, sample.atMs, sample.w);
  if (settled) return settled;
  const acc = new Acc(state, options);
  const last = acc.state.last;
  const b = sample.atMs;
  const split = last === null ? 'none' : splitOf(last.atMs, b, sample.resumed === true, options);
  if (last !== null && split !== 'none') {
    const a = last.atMs;
    const pa = last.value;
    const p = (t: number): number => pa + ((sample.w - pa) * (t - a)) / (b - a);
    acc.attribute(a, b, (t0, t1) => ((p(t0) + p(t1)) / 2) * ((t1 - t0) / 3_600_000_000), split === 'interpolated');
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
  return state.open === null ? null : hourEnergyOf(state.open, state.method);
}
