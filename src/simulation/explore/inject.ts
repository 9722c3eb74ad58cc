/**
 * Plays a fault schedule against a running simulated home, on its virtual clock: each outage
 * starts at its instant and ends after its span (outages of different parts may overlap), a
 * restart stops the daemon and starts a new one on the same store, a clock step moves time
 * without waking anyone.
 */
import type { Clock } from '../../ports.js';
import type { FaultKind, FaultStep } from './fault-schedule.js';

/** A part of the home that can be taken away and brought back. */
export interface Outage {
  begin(): Promise<void>;
  end(): Promise<void>;
}

export interface FaultTargets {
  outages: Record<Exclude<FaultKind, 'daemon-restart' | 'clock-step'>, Outage>;
  restartDaemon(): Promise<void>;
  stepClock(byMs: number): void;
}

/** Runs the schedule to its end (the last outage over); `signal` ends it early, with every outage ended. */
export async function injectFaults(steps: readonly FaultStep[], targets: FaultTargets, clock: Clock, signal: AbortSignal): Promise<void> {
  const running: Promise<void>[] = [];
  /** Outages in force per part: overlapping ones end when the last of them does. */
  const depth = new Map<string, number>();
  const outage = async (kind: keyof FaultTargets['outages'], spanMs: number): Promise<void> => {
    const part = targets.outages[kind];
    depth.set(kind, (depth.get(kind) ?? 0) + 1);
    if (depth.get(kind) === 1) await part.begin();
    await clock.sleep(spanMs, signal).catch(() => undefined);
    depth.set(kind, depth.get(kind)! - 1);
    if (depth.get(kind) === 0) await part.end();
  };
  try {
    for (const step of steps) {
      await clock.sleep(Math.max(0, step.atMs - clock.nowMs()), signal);
      if (step.kind === 'daemon-restart') await targets.restartDaemon();
      else if (step.kind === 'clock-step') targets.stepClock(step.spanMs);
      else running.push(outage(step.kind, step.spanMs));
    }
  } catch (err) {
    if (!signal.aborted) throw err;
  } finally {
    await Promise.all(running);
  }
}
