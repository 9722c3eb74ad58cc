/**
 * A seeded schedule of faults over a simulated run: which part of the home fails, when and for how
 * long. The same seed and span give the same schedule, so a failing seed is its own reproduction.
 *
 * Every fault here fails at once (a refused connection, a process gone), never by silence: a
 * silent peer is noticed through a library's own real-time timeout (modbus-serial's request
 * timeout, mqtt.js's reconnect period), which the virtual clock does not drive.
 */
import { rng } from '../../core/prng.js';

export const faultKinds = ['api-down', 'tank-down', 'pump-down', 'daemon-restart', 'clock-step'] as const;
export type FaultKind = (typeof faultKinds)[number];

export interface FaultStep {
  kind: FaultKind;
  atMs: number;
  /** How long an outage lasts, or how far the gateway's clock steps (negative: back), ms; 0 for a restart. */
  spanMs: number;
}

export interface ScheduleOptions {
  seed: number;
  fromMs: number;
  toMs: number;
  /** Quiet time after the start (the daemon's first reads and plan) and before the end (reports catch up), ms. */
  quietStartMs?: number;
  quietEndMs?: number;
}

const MIN = 60_000;

/** Outages of 1 to 90 minutes; clock steps of 1 to 20 minutes either way, as NTP corrects a gateway that drifted or booted without a real-time clock. */
const span = (kind: FaultKind, draw: () => number): number => {
  if (kind === 'daemon-restart') return 0;
  if (kind === 'clock-step') return (draw() < 0.5 ? -1 : 1) * Math.round((1 + draw() * 19) * MIN);
  return Math.round((1 + draw() * 89) * MIN);
};

/** Two to eight faults at times drawn over the span, in time order. */
export function faultSchedule(options: ScheduleOptions): FaultStep[] {
  const draw = rng(options.seed);
  const from = options.fromMs + (options.quietStartMs ?? 30 * MIN);
  const to = options.toMs - (options.quietEndMs ?? 3 * 60 * MIN);
  if (to <= from) return [];
  const count = 2 + Math.floor(draw() * 7);
  const steps: FaultStep[] = [];
  for (let i = 0; i < count; i++) {
    const kind = faultKinds[Math.floor(draw() * faultKinds.length)]!;
    // Whole seconds: a fault lands between the home's own wakes as often as on them.
    const atMs = from + Math.floor((draw() * (to - from)) / 1000) * 1000;
    steps.push({ kind, atMs, spanMs: span(kind, draw) });
  }
  return steps.sort((a, b) => a.atMs - b.atMs);
}

/** One line per step, for the explorer's output. */
export function describeSchedule(steps: readonly FaultStep[], startMs: number): string[] {
  const at = (ms: number): string => `+${((ms - startMs) / 3_600_000).toFixed(2)} h`;
  return steps.map((s) =>
    s.kind === 'daemon-restart'
      ? `${at(s.atMs)} daemon-restart`
      : `${at(s.atMs)} ${s.kind} ${s.kind === 'clock-step' && s.spanMs > 0 ? '+' : ''}${Math.round(s.spanMs / MIN)} min`,
  );
}
