/**
 * Learning a room's model from its metered hours: recursive least squares with a forgetting factor
 * on the one-hour discretised model
 *
 *   ΔT = θ1·heat + θ2·(T − T_out) + θ3
 *
 * where, with a = exp(−UA·1h/C): θ1 = (1 − a)/UA per kWh of heat, θ2 = −(1 − a), θ3 = (1 − a)·G/UA
 * (G the mean free gains, kW). An observation of another length is scaled to an hour (ΔT and heat
 * per hour), which is exact for an hour and close for the half to two hours accepted. The state is
 * plain JSON, so the daemon stores it as it is. Pure.
 */
import type { RoomModelParams } from './types.js';

/** Forgetting factor per accepted hour: older hours weigh λ^age (about six weeks of memory). */
export const FORGETTING = 0.999;
/** Accepted hours before a learned model may replace the prior … */
export const MIN_HOURS = 72;
/** … among them this many with the heater on and this many with it off, so that heat and loss are told apart. */
export const MIN_HEATING_HOURS = 12;
export const MIN_OFF_HOURS = 12;
/** Largest relative standard error of the heat loss and of the heat capacity a learned model may have. */
export const MAX_RELATIVE_SE = 0.2;
/** A room warming or cooling faster than this is a sensor jump (or a window), not the model, K/h. */
export const MAX_RATE_K_PER_H = 4;
/** An hour further from the learned model's prediction than this many of its standard deviations is an outlier … */
export const OUTLIER_SIGMAS = 5;
/** … and than this (K), the sensor's resolution and then some. */
export const OUTLIER_MIN_K = 0.3;
/** After this many outliers in a row the room has changed (a new window, a closed door): they are learned. */
export const OUTLIERS_BEFORE_CHANGE = 6;
/** A learned model's prediction error is never taken below the sensor's resolution, K. */
export const MIN_ERROR_K = 0.05;
/** Plausible rooms: heat loss kW/K, heat capacity kWh/K, time constant C/UA h. */
const PLAUSIBLE = { ua: [0.003, 3], c: [0.05, 100], tau: [2, 2000] } as const;
/** Heat counted as "on" in an hour, kWh. */
const ON_KWH = 0.05;
/** Accepted hours before outliers are judged (the residual's spread must be known first). */
const OUTLIER_AFTER_HOURS = 48;
/** Initial covariance of the parameters: weak, so the prior only starts the recursion. */
const P0 = [100, 1, 10];

export type RejectReason = 'missing' | 'hours' | 'range' | 'heat' | 'jump' | 'outlier';

export interface RoomObservation {
  /** Room temperature at the start and end of the hour, °C. */
  startC: number;
  endC: number;
  /** Mean outdoor temperature over the hour, °C. */
  outdoorC: number;
  /** Heat the heater put into the room over the hour (electric energy × COP), kWh. */
  heatKwh: number;
  hours: number;
}

export interface RoomLearnerState {
  version: 1;
  /** θ1, θ2, θ3 of the one-hour model (see the file's head). */
  theta: number[];
  /** The recursion's covariance matrix (3×3, row by row); the parameters' covariance is σ²·p. */
  p: number[];
  /** Weighted count, squared residuals, sum and sum of squares of ΔT per hour (for σ and R²). */
  weight: number;
  sse: number;
  sumY: number;
  sumYY: number;
  /** Accepted hours, of which the heater was on / off. */
  hours: number;
  heatingHours: number;
  offHours: number;
  outliersInRow: number;
  rejected: Partial<Record<RejectReason, number>>;
  /** What became of the last observation. */
  last: { accepted: true } | { accepted: false; reason: RejectReason; message: string } | null;
}

/** A prior as the one-hour parameters, gains taken as none. */
function thetaOf(m: RoomModelParams): number[] {
  const retained = Math.exp(-m.heatLossKwPerK / m.heatCapacityKwhPerK);
  return [(1 - retained) / m.heatLossKwPerK, -(1 - retained), 0];
}

export const newRoomLearner = (prior: RoomModelParams): RoomLearnerState => startedAt(thetaOf(prior));

/** A learner that starts at `theta` with no hours. */
function startedAt(theta: number[], rejected: RoomLearnerState['rejected'] = {}): RoomLearnerState {
  return {
    version: 1,
    theta,
    p: [P0[0]!, 0, 0, 0, P0[1]!, 0, 0, 0, P0[2]!],
    weight: 0,
    sse: 0,
    sumY: 0,
    sumYY: 0,
    hours: 0,
    heatingHours: 0,
    offHours: 0,
    outliersInRow: 0,
    rejected,
    last: null,
  };
}

const dot = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => a.reduce((s, v, i) => s + v * (b[i] as number), 0);
const times = (p: ReadonlyArray<number>, x: ReadonlyArray<number>): number[] => [0, 1, 2].map((r) => dot(p.slice(3 * r, 3 * r + 3), x));
const variance = (s: RoomLearnerState): number => (s.weight > 3 ? s.sse / (s.weight - 3) : Infinity);

/** Why an observation cannot be used, or null. */
function invalid(o: RoomObservation): { reason: RejectReason; message: string } | null {
  const values = [o.startC, o.endC, o.outdoorC, o.heatKwh, o.hours];
  if (!values.every((v) => typeof v === 'number' && Number.isFinite(v)))
    return { reason: 'missing', message: 'a reading is missing or not a number' };
  if (o.hours < 0.5 || o.hours > 2) return { reason: 'hours', message: `the observation spans ${o.hours} h (0.5–2 h are used)` };
  const roomOk = (c: number): boolean => c >= -30 && c <= 50;
  if (!roomOk(o.startC) || !roomOk(o.endC) || o.outdoorC < -60 || o.outdoorC > 50)
    return { reason: 'range', message: `a temperature is out of range (room ${o.startC}→${o.endC} °C, outdoor ${o.outdoorC} °C)` };
  if (o.heatKwh < 0 || o.heatKwh / o.hours > 50) return { reason: 'heat', message: `the heat ${o.heatKwh} kWh in ${o.hours} h is not plausible` };
  const rate = Math.abs(o.endC - o.startC) / o.hours;
  if (rate > MAX_RATE_K_PER_H)
    return { reason: 'jump', message: `the room moved ${rate.toFixed(1)} K/h (more than ${MAX_RATE_K_PER_H}): a sensor jump or an open window` };
  return null;
}

const rejectedWith = (
  s: RoomLearnerState,
  why: { reason: RejectReason; message: string },
  extra: Partial<RoomLearnerState> = {},
): RoomLearnerState => ({
  ...s,
  ...extra,
  rejected: { ...s.rejected, [why.reason]: (s.rejected[why.reason] ?? 0) + 1 },
  last: { accepted: false, ...why },
});

/** The state after one observation: learned from, or rejected with the reason in `last`. */
export function learnRoomHour(s: RoomLearnerState, o: RoomObservation): RoomLearnerState {
  const bad = invalid(o);
  if (bad) return rejectedWith(s, bad);
  const y = (o.endC - o.startC) / o.hours;
  const phi = [o.heatKwh / o.hours, o.startC - o.outdoorC, 1];
  const e = y - dot(phi, s.theta);
  const pPhi = times(s.p, phi);
  const gain = dot(phi, pPhi);
  const sigma2 = variance(s);
  if (s.hours >= OUTLIER_AFTER_HOURS) {
    const limit = Math.max(OUTLIER_MIN_K, OUTLIER_SIGMAS * Math.sqrt(sigma2 * (1 + gain)));
    if (Math.abs(e) > limit && s.outliersInRow < OUTLIERS_BEFORE_CHANGE)
      return rejectedWith(
        s,
        { reason: 'outlier', message: `the room moved ${e.toFixed(2)} K from the model's prediction (more than ${limit.toFixed(2)} K)` },
        { outliersInRow: s.outliersInRow + 1 },
      );
    // The room has changed: learning starts again from the current estimate, the prior's
    // uncertainty and no hours, so the plan uses the prior until the new room is known.
    if (Math.abs(e) > limit) return learnRoomHour(startedAt(s.theta, s.rejected), o);
  }
  // Forgetting only while the parameters are better known than at the start, so that long hours
  // without heat (summer) do not blow the covariance up.
  const trace = (s.p[0] as number) + (s.p[4] as number) + (s.p[8] as number);
  const lambda = trace < P0[0]! + P0[1]! + P0[2]! ? FORGETTING : 1;
  const denom = lambda + gain;
  const k = pPhi.map((v) => v / denom);
  const theta = s.theta.map((v, i) => v + (k[i] as number) * e);
  const p = s.p.map((v, idx) => (v - (k[Math.floor(idx / 3)] as number) * (pPhi[idx % 3] as number)) / lambda);
  // Symmetric by construction; kept so against rounding.
  for (const [i, j] of [
    [1, 3],
    [2, 6],
    [5, 7],
  ] as const)
    p[i] = p[j] = ((p[i] as number) + (p[j] as number)) / 2;
  const post = (e * lambda) / denom;
  const on = o.heatKwh > ON_KWH * o.hours;
  return {
    ...s,
    theta,
    p,
    weight: FORGETTING * s.weight + 1,
    sse: FORGETTING * s.sse + post * post,
    sumY: FORGETTING * s.sumY + y,
    sumYY: FORGETTING * s.sumYY + y * y,
    hours: s.hours + 1,
    heatingHours: s.heatingHours + (on ? 1 : 0),
    offHours: s.offHours + (on ? 0 : 1),
    outliersInRow: 0,
    last: { accepted: true },
  };
}

/** The learned fit, for display. */
export interface RoomFit {
  hours: number;
  heatingHours: number;
  offHours: number;
  /** Standard deviation of the one-hour prediction's residual, K. */
  rmseK: number;
  /** Share of the hours' temperature changes the model explains. */
  r2: number;
  heatLossKwPerK: number;
  heatLossSeKwPerK: number;
  heatCapacityKwhPerK: number;
  heatCapacitySeKwhPerK: number;
  /** Mean free gains, kW. */
  gainsKw: number;
}

/** UA, C and G of the one-hour parameters (NaN where they mean no physical room). */
function physical(theta: ReadonlyArray<number>): { ua: number; c: number; g: number } {
  const [t1, t2, t3] = theta as [number, number, number];
  const ua = -t2 / t1;
  const c = ua / -Math.log(1 + t2);
  return { ua, c, g: (t3 * ua) / -t2 };
}

/** Standard error of f(θ) by the delta method, the gradient by central differences. */
function deltaSe(f: (th: number[]) => number, theta: ReadonlyArray<number>, cov: ReadonlyArray<number>): number {
  const grad = [0, 1, 2].map((i) => {
    const h = 1e-6 * Math.max(1e-6, Math.abs(theta[i] as number));
    const up = theta.slice();
    const down = theta.slice();
    up[i] = (up[i] as number) + h;
    down[i] = (down[i] as number) - h;
    return (f(up) - f(down)) / (2 * h);
  });
  return Math.sqrt(Math.max(0, dot(grad, times(cov, grad))));
}

/**
 * The model the plan should use: the learned one when there is enough data (`MIN_HOURS`, heater on
 * and off among them), the parameters mean a physical room and both are known to `MAX_RELATIVE_SE`;
 * else the prior, with `notLearned` saying why. `fit` is the learned fit whenever it can be computed.
 */
export function roomModelOf(s: RoomLearnerState, prior: RoomModelParams): { model: RoomModelParams; fit: RoomFit | null; notLearned: string | null } {
  const sigma2 = variance(s);
  const { ua, c, g } = physical(s.theta);
  const cov = s.p.map((v) => v * sigma2);
  const fit: RoomFit | null =
    Number.isFinite(sigma2) && Number.isFinite(ua) && Number.isFinite(c)
      ? {
          hours: s.hours,
          heatingHours: s.heatingHours,
          offHours: s.offHours,
          rmseK: Math.sqrt(sigma2),
          r2: 1 - s.sse / Math.max(1e-12, s.sumYY - (s.sumY * s.sumY) / s.weight),
          heatLossKwPerK: ua,
          heatLossSeKwPerK: deltaSe((th) => physical(th).ua, s.theta, cov),
          heatCapacityKwhPerK: c,
          heatCapacitySeKwhPerK: deltaSe((th) => physical(th).c, s.theta, cov),
          gainsKw: g,
        }
      : null;
  const why = notLearned(s, fit);
  if (why !== null || !fit) return { model: prior, fit, notLearned: why ?? 'no fit yet' };
  return {
    model: { heatCapacityKwhPerK: c, heatLossKwPerK: ua, errorK: Math.max(MIN_ERROR_K, fit.rmseK), source: 'learned' },
    fit,
    notLearned: null,
  };
}

function notLearned(s: RoomLearnerState, fit: RoomFit | null): string | null {
  if (s.hours < MIN_HOURS) return `${s.hours} of ${MIN_HOURS} hours learned`;
  if (s.heatingHours < MIN_HEATING_HOURS) return `${s.heatingHours} of ${MIN_HEATING_HOURS} hours with the heater on`;
  if (s.offHours < MIN_OFF_HOURS) return `${s.offHours} of ${MIN_OFF_HOURS} hours with the heater off`;
  if (!fit) return 'the fit is not a physical room';
  const inside = (v: number, [lo, hi]: readonly [number, number]): boolean => v >= lo && v <= hi;
  const tau = fit.heatCapacityKwhPerK / fit.heatLossKwPerK;
  if (!inside(fit.heatLossKwPerK, PLAUSIBLE.ua) || !inside(fit.heatCapacityKwhPerK, PLAUSIBLE.c) || !inside(tau, PLAUSIBLE.tau))
    return `the fit is not a plausible room (UA ${fit.heatLossKwPerK.toFixed(4)} kW/K, C ${fit.heatCapacityKwhPerK.toFixed(2)} kWh/K)`;
  const rel = Math.max(fit.heatLossSeKwPerK / fit.heatLossKwPerK, fit.heatCapacitySeKwhPerK / fit.heatCapacityKwhPerK);
  if (!(rel <= MAX_RELATIVE_SE))
    return `the fit is uncertain (relative standard error ${(100 * rel).toFixed(0)} %, at most ${100 * MAX_RELATIVE_SE} %)`;
  return null;
}
