/**
 * Checks of the tank's hourly energy and of the reports after a run with many restarts (the
 * SIGKILL scenario): what each restart may blur, and what must still hold exactly.
 */
import { hourMs, type TruthSample, type World } from '../helpers/daemon-harness.js';
import { isRunningLine, simTimeOf, type RestartingDaemon } from '../helpers/restarting-daemon.js';
import type { AcceptedReport } from '../../src/sandbox/state.js';
import type { HourlyEnergyRow } from '../../src/store/types.js';
import { defaultMaxGapMs } from '../../src/core/metering.js';

const minuteMs = 60_000;

/**
 * A reading is stamped when the control tick starts its reads; the counter itself may be read a
 * little later (a queue of Modbus requests, two busy processes), and at 5000× on a loaded machine
 * that is minutes of simulated time. An hour boundary then moves that much of the element's energy
 * between the two hours.
 */
export const readSkewMs = 5 * minuteMs;

/**
 * The same skew just after a restart is larger: the fresh process compiles its code and plans
 * cold while its first reads are in flight, a stall of 100–200 ms, which at 5000× is 8–17 minutes
 * between a counter's read and its stamp. Energy then moves between the hours after a restart.
 */
const startupSkewMs = 20 * minuteMs;

export interface Restart {
  /** The kill, and when the next process ran (simulated ms). */
  killMs: number;
  ranMs: number;
  /**
   * The span whose hour boundaries may see more than ordinary readings: the metering splits an
   * interval across a kill only if it is at most `defaultMaxGapMs` long (so within that of the kill), and
   * the next process's first reading may be stamped before it is taken (until it ran, plus skew).
   */
  fromMs: number;
  toMs: number;
}

export function restartsOf(world: World, daemon: RestartingDaemon): Restart[] {
  return daemon.kills.map((k) => {
    const ranMs = simTimeOf(world, daemon.incarnations[k.incarnation + 1]!.logs.find(isRunningLine)!);
    return { killMs: k.atMs, ranMs, fromMs: k.atMs - defaultMaxGapMs, toMs: Math.max(k.atMs + defaultMaxGapMs, ranMs + startupSkewMs) };
  });
}

export const isComplete = (r: HourlyEnergyRow): boolean => r.quality === 'measured' || r.quality === 'estimated';

/**
 * The longest interval metering splits across an hour boundary by interpolation (its `maxGapMs`).
 * A stall that long makes the hours on both sides `estimated`: energy may move between them, and
 * the counter read that closes the interval may itself be late by the read skew.
 */
const interpolatedMs = defaultMaxGapMs + readSkewMs;

/**
 * The most energy a shift of up to `windowMs` can move across boundary `b`: what the element truly
 * drew within `windowMs` of it. Taken from the simulator's energy integral between the samples
 * that bracket the window, so a stalled sampler widens the window rather than missing a burst
 * between two samples of the element's power.
 */
function energyNearKwh(samples: readonly TruthSample[], b: number, windowMs: number): number {
  const before = samples.findLast((x) => x.atMs <= b - windowMs);
  const after = samples.find((x) => x.atMs >= b + windowMs);
  // Unbracketed (the week's last boundary): anything may have moved.
  return before && after ? after.tankEnergyKwh - before.tankEnergyKwh : Number.POSITIVE_INFINITY;
}

/**
 * Compares the tank's hours with the truth. Away from restarts an hour read in full equals it and
 * any other holds no more, give or take the read skew where the element drew power at a boundary
 * (`skewed`: elsewhere to the Wh); an `estimated` hour, split by interpolation over a stall,
 * give or take one interpolated interval's worth. Around restarts energy may move between hours but
 * never be counted twice: each run of such hours (`runs`) holds no more than the truth, give or
 * take one interpolated interval's worth at its two outer boundaries.
 */
export function checkHours(
  rows: readonly HourlyEnergyRow[],
  truth: ReadonlyMap<number, number>,
  samples: readonly TruthSample[],
  nearRestart: (h: number) => boolean,
): { problems: string[]; runs: number[][]; skewed: Set<number> } {
  const problems: string[] = [];
  const truthOf = (h: number): number => truth.get(h) ?? 0;
  const label = (h: number): string => new Date(h).toISOString();
  const runs: number[][] = [];
  const skewed = new Set<number>();
  for (const r of rows) {
    const h = r.hourStartMs;
    const t = truthOf(h);
    const window = r.quality === 'estimated' ? interpolatedMs : readSkewMs;
    const skew = energyNearKwh(samples, h, window) + energyNearKwh(samples, h + hourMs, window);
    if (skew > 0) skewed.add(h);
    const tol = Math.max(0.001 * t, 0.0005 + skew);
    if (nearRestart(h)) {
      const run = runs.at(-1);
      if (run && run.at(-1)! + hourMs === h) run.push(h);
      else runs.push([h]);
    } else if (isComplete(r) ? Math.abs(r.kwh - t) > tol : r.kwh > t + tol) {
      problems.push(`${label(h)} (${r.quality}): ${r.kwh.toFixed(4)} kWh, truth ${t.toFixed(4)}`);
    }
  }
  const kwhOf = new Map(rows.map((r) => [r.hourStartMs, r.kwh]));
  const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
  for (const run of runs) {
    const metered = sum(run.map((h) => kwhOf.get(h)!));
    const t = sum(run.map(truthOf));
    const tol = 0.0005 + energyNearKwh(samples, run[0]!, interpolatedMs) + energyNearKwh(samples, run.at(-1)! + hourMs, interpolatedMs);
    if (metered > t + tol)
      problems.push(`${label(run[0]!)} to ${label(run.at(-1)!)} (restarts or estimates): ${metered.toFixed(4)} kWh, truth ${t.toFixed(4)}`);
  }
  return { problems, runs, skewed };
}

/** Report points of `resourceId` that differ from the hour the daemon stored (beyond rounding). */
export function pointsOffRows(reports: readonly AcceptedReport[], resourceId: string, rows: readonly HourlyEnergyRow[]): string[] {
  const kwhOf = new Map(rows.map((r) => [r.hourStartMs, r.kwh]));
  return reports.flatMap((r) =>
    r.payloads
      .filter((p) => p.resourceId === resourceId)
      .flatMap((p) => p.points.filter((pt) => kwhOf.has(pt.timestampMs) && Math.abs(pt.kiloWattHours - kwhOf.get(pt.timestampMs)!) > 0.0005))
      .map(
        (pt) => `event ${r.eventId} ${new Date(pt.timestampMs).toISOString()}: reported ${pt.kiloWattHours} kWh, stored ${kwhOf.get(pt.timestampMs)}`,
      ),
  );
}

/** The keys (`<eventId>:usage` / `:lpcAck`, as in the outbox) of the reports the API holds. */
export function reportKeys(reports: readonly AcceptedReport[]): string[] {
  const kind = (r: AcceptedReport): string => (r.payloads.some((p) => p.payloadType.endsWith('LPCAcknowledgement')) ? 'lpcAck' : 'usage');
  return [...new Set(reports.map((r) => `${r.eventId}:${kind(r)}`))].sort();
}
