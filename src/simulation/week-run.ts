/**
 * The week-long home (homes/week.ts) with the whole daemon (`buildApp`) in this process, on one
 * virtual clock: the broker, the simulators, the API sandbox and the daemon move together, and
 * time jumps only when all of them are idle. Returns what a test or `npm run sim` checks: the true
 * line currents every 20 s, each car's state of charge at each departure, the heat pump's states,
 * the reports the API accepted, the daemon's error lines, and the digest of its decisions.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { buildApp, type App } from '../app.js';
import { parseConfig } from '../config/load.js';
import { localAt } from '../demo/environment.js';
import type { SgState } from '../core/heat-pump.js';
import type { Logger } from '../log.js';
import { register } from '../registration.js';
import type { AcceptedReport, EventRec } from '../sandbox/state.js';
import { createSparkClient } from '../spark/client.js';
import { openStore } from '../store/index.js';
import { loadModbusClient } from '../devices/modbus/bus.js';
import { loadCentralSystem } from '../devices/ocpp/start.js';
import { createDecisionLog } from './decision-log.js';
import { fuseA, startWeekWorld, type Departure } from './homes/week.js';
import { watchQuiescence } from './quiescence.js';
import { seedMathRandom } from './seeded-random.js';
import { VirtualClock } from './virtual-clock.js';

const H = 3_600_000;
/** Sunday 11 January 2026, 12:00 in Oslo: both cars at home, the week's trips from Monday on. */
export const weekStartMs = localAt(Date.UTC(2026, 0, 11, 12), 0, 12, 0);

export interface LineSample {
  atMs: number;
  linesA: number[];
  /** What drew it: the chargers', the tank's and the heat pump's power, W. */
  goeW: number;
  ocppW: number;
  tankW: number;
  pumpW: number;
}

export interface WeekRun {
  startMs: number;
  endMs: number;
  fuseA: number;
  /** Every 20 s from the daemon's first full read of the devices until it stops. */
  samples: LineSample[];
  departures: Departure[];
  pumpHistory: { atMs: number; operating: SgState }[];
  reports: AcceptedReport[];
  events: EventRec[];
  /** Resource ids the registration gave each device and car. */
  resources: Record<string, string>;
  /** The daemon's log lines at `error` or worse. */
  errors: Record<string, unknown>[];
  /** Whether the daemon stopped cleanly. */
  stopped: boolean;
  digest: string;
  decisions: Record<string, number>;
  decisionLines: string[];
  /** Instants run, and the settles between wakes (see quiescence.ts). */
  kernel: { instants: number; settles: number; turns: number; timerWaits: number };
}

export interface WeekRunOptions {
  days: number;
  /** The API sandbox's seed (its incentive curves and choices). */
  seed?: number;
  /** The daemon's control period, ms (default 10 s, as `wattshift run`). */
  controlTickMs?: number;
  /** Keeps the decision log's lines in the result (`decisionLines`). */
  keepDecisions?: boolean;
  /** Where the daemon's log lines go besides the run's own error list (default: nowhere). */
  logger?: Logger;
}

/** A pino logger that keeps every line at `error` or worse, and forwards all to `also`. */
function capturingLogger(clock: VirtualClock, also: Logger | undefined): { logger: Logger; errors: Record<string, unknown>[] } {
  const errors: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of String(chunk).split('\n')) {
        if (!line) continue;
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (typeof entry['level'] === 'number' && entry['level'] >= 50) errors.push(entry);
        if (also) also[entry['level'] as number >= 50 ? 'error' : 'debug'](entry);
      }
      done();
    },
  });
  return { logger: pino({ level: 'info', timestamp: () => `,"time":${clock.nowMs()}` }, stream), errors };
}

/**
 * Loads ahead what the daemon loads on first use: a module load is file and loader work the kernel
 * cannot see, so time would run on beneath it (a Modbus connect timing out while its client loads).
 */
async function preloadLazyModules(): Promise<void> {
  await loadModbusClient();
  await loadCentralSystem();
}

export async function runWeekHome(options: WeekRunOptions): Promise<WeekRun> {
  const startMs = weekStartMs;
  const endMs = startMs + options.days * 24 * H;
  const restoreRandom = seedMathRandom(options.seed ?? 11);
  const quiescence = watchQuiescence();
  const clock = new VirtualClock(startMs, quiescence);
  const { logger, errors } = capturingLogger(clock, options.logger);
  await preloadLazyModules();
  const dir = mkdtempSync(join(tmpdir(), 'wattshift-sim-week-'));
  const log = createDecisionLog({ keepLines: options.keepDecisions === true });
  let world: Awaited<ReturnType<typeof startWeekWorld>> | undefined;
  let app: App | undefined;
  let stopped = false;
  try {
    world = await startWeekWorld({ clock, startMs, dataDir: dir, logger, ...(options.seed !== undefined ? { seed: options.seed } : {}) });
    const w = world;
    quiescence.alsoBusyWhile(() => w.sandbox.requestsInFlight() > 0);
    const config = parseConfig(w.config).config;
    const spark = createSparkClient({ ...config.spark, clock, logger });
    const store = openStore({ path: config.storage.path, clock });
    const resources = (await register(config, { spark, store, logger, nowMs: clock.nowMs() })).registration.resources;
    store.close();
    await spark.close();

    const daemon = buildApp(config, {
      logger, clock, planInWorker: false, ...(options.controlTickMs ? { controlTickMs: options.controlTickMs } : {}),
      onControlTick: (snapshot) => {
        log.tick(snapshot);
        log.plan(daemon.currentPlan());
      },
    });
    app = daemon;
    const samples: LineSample[] = [];
    const sampling = new AbortController();
    let started: unknown;
    // The daemon starts with time held: its start loads modules and plans, work the kernel cannot
    // see, and a start takes no time in the home's world.
    await daemon.start();
    const script = (async () => {
      await w.startChargePoint();
      // Until the daemon has read every device and ticked, the devices are on their own (the charger
      // at its own 16 A, the tank heating): the fuse is the daemon's from a tick after that.
      while (daemon.view().devices.some((d) => d.notReadYet === true)) await clock.sleep(10_000);
      await clock.sleep(2 * 60_000);
      while (!sampling.signal.aborted) {
        samples.push({
          atMs: clock.nowMs(), linesA: w.lineCurrentsA(clock.nowMs()), goeW: w.goe.powerW, ocppW: w.ocpp.powerW,
          tankW: w.tank.state().powerW, pumpW: w.pump.state().powerW,
        });
        await clock.sleep(20_000, sampling.signal);
      }
    })().catch((err: unknown) => {
      started = err;
    });
    let instants = 0;
    await clock.runUntil(endMs, {
      afterInstant: () => {
        instants++;
      },
      until: () => started !== undefined,
    });
    if (started !== undefined) throw started;
    sampling.abort();
    await script;
    // Stopping may wait on the clock (a device's release write under its timeout): time runs on.
    const stopping = daemon.stop().then(() => {
      stopped = true;
    });
    await clock.runFor(5 * 60_000, { until: () => stopped });
    await stopping;
    for (const h of w.pump.history()) log.note('pump', h.atMs, h.operating);
    const events = w.sandbox.events();
    const eventLabel = new Map(events.map((e) => [e.id, `${e.notificationType} ${e.coverFromMs}-${e.coverToMs}`]));
    const reports = w.sandbox.acceptedReports();
    const resourceName = new Map(Object.entries(resources).map(([name, id]) => [id, name]));
    for (const r of reports) {
      const payloads = r.payloads.map((p) => ({ ...p, resourceId: resourceName.get(p.resourceId ?? '') ?? p.resourceId }));
      log.note('report', r.createdAtMs, { event: eventLabel.get(r.eventId) ?? 'unknown', payloads });
    }
    return {
      startMs, endMs, fuseA, samples, departures: w.departures, pumpHistory: w.pump.history(), reports, events, resources, errors, stopped,
      digest: log.digest(), decisions: log.counts(), decisionLines: log.lines(), kernel: { instants, ...quiescence.stats() },
    };
  } finally {
    if (app && !stopped) await Promise.race([app.stop().catch(() => undefined), clock.runFor(60_000).catch(() => undefined)]);
    await world?.close();
    quiescence.close();
    restoreRandom();
    rmSync(dir, { recursive: true, force: true });
  }
}
