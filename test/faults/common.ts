/** Shared setup of the fault scenarios: a world, a registered home, events, a config. */
import { expect } from 'vitest';
import { localAt } from '../../src/demo/environment.js';
import { openStore } from '../../src/store/index.js';
import type { HourlyEnergyRow, Store } from '../../src/store/types.js';
import {
  hourMs,
  localTime,
  registerHome,
  startWorld,
  waitUntilSim,
  type DaemonLogLine,
  type DaemonProcess,
  type World,
  type WorldOptions,
} from '../helpers/daemon-harness.js';
import { tempDir } from '../helpers/temp-dir.js';

/** A January Wednesday in Oslo. */
export const januaryDay = Date.UTC(2026, 0, 14, 12);
export const floorC = 45;

/**
 * Config overrides of every scenario: a 24 h horizon keeps planning runs short (their CPU time is
 * simulated time without readings), and 1 s API timeouts keep a hanging API from holding a job
 * for an hour of simulated time.
 */
export const faultOverrides = {
  planner: { horizonHours: 24 },
  spark: { requestTimeoutMs: 1000, tokenTimeoutMs: 1000 },
};

/** A started world with a registered home; its data dir, unless given, is removed when the test passes. */
export async function faultWorld(name: string, options: Partial<WorldOptions> & { startLocal?: [number, number] } = {}): Promise<World> {
  const [hh, mm] = options.startLocal ?? [10, 0];
  const startMs = options.startMs ?? localAt(januaryDay, 0, hh, mm);
  const dataDir = options.dataDir ?? tempDir(`wattshift-fault-${name}-`);
  const world = await startWorld({ speed: 400, ...options, startMs, dataDir });
  await registerHome(world);
  return world;
}

/** What an event is simulated on: the harness's world or a home on the simulation kernel. */
export type EventHome = Pick<World, 'registration' | 'spark' | 'startMs'>;

/** A price curve on the tank and the car for local hours `hours` of day 0, with `deltas`. */
export function priceCurve(world: EventHome, hours: number[], deltas: number[], day = 0): Promise<{ id: string; hoursMs: number[] }> {
  return priceCurveAt(
    world,
    hours.map((h) => localTime(world, day, h)),
    deltas,
  );
}

/** A price curve on the tank and the car for the hours starting at `hoursMs` (UTC ms), with `deltas`. */
export async function priceCurveAt(world: EventHome, hoursMs: number[], deltas: number[]): Promise<{ id: string; hoursMs: number[] }> {
  const reg = world.registration!;
  const ev = await world.spark.simulatePriceCurve({
    targets: ['tank', 'car'].map((d) => ({ resourceId: reg.resources[d]!, locationId: reg.locationId })),
    priceCurveDelta: {
      points: hoursMs.map((h, i) => ({ timestamp: new Date(h).toISOString(), price: deltas[i] ?? 0 })),
      currency: 'NOK',
      energyUnit: 'kWh',
      resolution: '01:00:00',
    },
    priceArea: 'NO4',
  });
  return { id: ev.id, hoursMs };
}

/** A 0 kW LPC on the tank for local hours `hours` of day 0. */
export function tankLpc(world: EventHome, hours: number[], day = 0): Promise<{ id: string; startMs: number; endMs: number }> {
  return tankLpcAt(
    world,
    hours.map((h) => localTime(world, day, h)),
  );
}

/** A 0 kW LPC on the tank for the hours starting at `hoursMs` (UTC ms). */
export async function tankLpcAt(world: EventHome, hoursMs: number[]): Promise<{ id: string; startMs: number; endMs: number }> {
  const reg = world.registration!;
  const ev = await world.spark.simulateResourceLpc({
    resources: [
      {
        resource: { resourceId: reg.resources['tank']!, locationId: reg.locationId },
        points: hoursMs.map((h) => ({ timestamp: new Date(h).toISOString(), maxPowerInKiloWatts: 0 })),
      },
    ],
  });
  return { id: ev.id, startMs: hoursMs[0]!, endMs: hoursMs.at(-1)! + hourMs };
}

/** Opens the daemon's database read-only (beside a running daemon too: SQLite in WAL mode). */
export function readStore<T>(world: World, fn: (store: Store) => T): T {
  const store = openStore({ path: String(world.config.storage!.path), readOnly: true });
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

export function errorLines(daemons: readonly Pick<DaemonProcess, 'logs'>[]): DaemonLogLine[] {
  return daemons.flatMap((d) => d.logs.filter((l) => l.level === 'error' || l.level === 'fatal'));
}

export function logsWith(daemons: readonly Pick<DaemonProcess, 'logs'>[], predicate: (l: DaemonLogLine) => boolean): DaemonLogLine[] {
  return daemons.flatMap((d) => d.logs.filter(predicate));
}

/** Real seconds since `t0` (for the scenario's wall time in its report line). */
export function wallSeconds(t0: number): string {
  return ((Date.now() - t0) / 1000).toFixed(1);
}

/** The world's simulated time at which a daemon wrote a log line (its `time` is real time). */
export function simTimeOf(world: World, line: DaemonLogLine): number {
  return world.startMs + (Date.parse(String(line['time'])) - world.realOriginMs) * world.speed;
}

/**
 * A device's supervisor transitions (down with its code, recovered) in a stretch of a daemon's log:
 * one the test marked by what the daemon said, not by the clock.
 */
export function transitionsIn(lines: readonly DaemonLogLine[], device: string): { down: string[]; recovered: number } {
  const own = lines.filter((l) => l['device'] === device);
  return {
    down: own.filter((l) => l.msg === 'device down; putting it in its safe state').map((l) => String(l.code)),
    recovered: own.filter((l) => l.msg === 'device recovered').length,
  };
}

/** Hours the daemon read in full: exactly (`measured`) or split over a long interval (`estimated`). */
export function readInFull(row: HourlyEnergyRow | undefined): boolean {
  return row?.quality === 'measured' || row?.quality === 'estimated';
}

/**
 * A stored hour against the simulator's truth: a `measured` hour within 0.1 % (or `absTolKwh`);
 * an `estimated` one within `estimatedTolKwh`, since it was split over a long interval by
 * interpolation (on a fast clock, a CPU stall at the boundary in which a thermostat may switch);
 * any other (partial, gap) never above the truth: its kWh is a lower bound.
 */
export function expectHourVsTruth(row: HourlyEnergyRow, truthKwh: number, tolerances: { absTolKwh: number; estimatedTolKwh: number }): void {
  const what = `${row.subject} ${new Date(row.hourStartMs).toISOString()} ${row.quality} ${row.kwh} vs truth ${truthKwh}`;
  const exact = Math.max(0.001 * truthKwh, tolerances.absTolKwh);
  if (row.quality === 'measured') expect(Math.abs(row.kwh - truthKwh), what).toBeLessThanOrEqual(exact);
  else if (row.quality === 'estimated') expect(Math.abs(row.kwh - truthKwh), what).toBeLessThanOrEqual(Math.max(exact, tolerances.estimatedTolKwh));
  else expect(row.kwh, what).toBeLessThanOrEqual(truthKwh + exact);
}

/**
 * Polls `check` until it gives a value: a wait on state. `guardMs` of real time only bounds a hang,
 * so that the test fails with `what` (what it waited for and what it saw) instead of its timeout.
 */
export async function until<T>(check: () => Promise<T | undefined> | T | undefined, what: string | (() => string), guardMs: number): Promise<T> {
  const deadline = Date.now() + guardMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${typeof what === 'string' ? what : what()}: not within ${guardMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A device's answer in the acknowledgement the sandbox accepted for `eventId`, once it is there. */
export async function targetAnswer(world: World, eventId: string, deviceId: string): Promise<'acknowledged' | 'declined'> {
  const resourceId = world.registration!.resources[deviceId]!;
  for (;;) {
    for (const r of world.env.sandbox.acceptedReports(String(world.config.spark.clientId))) {
      if (r.eventId !== eventId) continue;
      for (const p of r.payloads) {
        const raw = p.raw as { acknowledgedTargets?: { resourceId?: string }[]; declinedTargets?: { resourceId?: string }[] };
        if (raw.acknowledgedTargets?.some((t) => t.resourceId === resourceId)) return 'acknowledged';
        if (raw.declinedTargets?.some((t) => t.resourceId === resourceId)) return 'declined';
      }
    }
    await waitUntilSim(world, world.clock.nowMs() + 60_000);
  }
}
