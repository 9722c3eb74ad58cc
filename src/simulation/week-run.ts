/**
 * The week-long home (homes/week.ts) with the whole daemon (`buildApp`) in this process, on one
 * virtual clock: the broker, the simulators, the API sandbox and the daemon move together, and
 * time jumps only when all of them are idle. Returns what a test or `npm run sim` checks: the true
 * line currents every 20 s, each car's state of charge at each departure, the heat pump's states,
 * the reports the API accepted, the daemon's error lines, and the digest of its decisions.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
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
import { startCuttableLink, type CuttableLink } from './cuttable-link.js';
import { createDecisionLog } from './decision-log.js';
import type { FaultStep } from './explore/fault-schedule.js';
import { injectFaults } from './explore/inject.js';
import type { OutboxSummary } from '../store/types.js';
import { fuseA, startWeekWorld, type Departure, type Seasons } from './homes/week.js';
import type { BillView } from '../view/model.js';
import { postYearEvent } from './year-events.js';
import type { YearEvent } from './year-home.js';
import { watchQuiescence } from './quiescence.js';
import { preloadLazyModules } from './preload.js';
import { seedMathRandom } from './seeded-random.js';
import { SteppedClock } from './stepped-clock.js';
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
  /** The tank's water, °C, and whether its element is held off. */
  tankC: number;
  tankBlocked: boolean;
  /** The heat pump's water, °C. */
  pumpC: number;
  /** The home's import at the main meter, W. */
  importW: number;
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
  /** Each accepted report's event and the subjects of its payloads (type and resource name). */
  reportSubjects: { eventId: string; createdAtMs: number; subjects: string[] }[];
  events: EventRec[];
  /** Resource ids the registration gave each device and car. */
  resources: Record<string, string>;
  /** The daemon's log lines at `error` or worse. */
  errors: Record<string, unknown>[];
  /** Errors no handler caught while the home ran (process `uncaughtException`, `unhandledRejection`). */
  uncaught: string[];
  /** The daemon's report outbox as it stopped. */
  outbox: OutboxSummary;
  /** The store's files after the daemon stopped, bytes. */
  storeBytes: number;
  /** Restarts: from the old daemon's stop until the new one had read every device and ticked twice. */
  handovers: { fromMs: number; toMs: number }[];
  /** Whether the daemon stopped cleanly. */
  stopped: boolean;
  digest: string;
  decisions: Record<string, number>;
  decisionLines: string[];
  /** Each local month's bill as the daemon last showed it (hourly), in month order (runs with seasons). */
  bills: BillView[];
  /** The events the run posted, with each one's id at the API. */
  posted: (YearEvent & { id: string })[];
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
  /** Faults played against the home as it runs (the explorer's schedules). */
  faults?: readonly FaultStep[];
  /** The home round the year (year-home.ts): seasonal loads and draws, a capacity tariff. */
  seasons?: Seasons;
  /** Events a flexibility partner posts as the run goes (year-home.ts). */
  events?: readonly YearEvent[];
}

/** A pino logger that keeps every line at `error` or worse, and forwards all to `also`. */
export function capturingLogger(clock: VirtualClock, also: Logger | undefined): { logger: Logger; errors: Record<string, unknown>[] } {
  const errors: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of String(chunk).split('\n')) {
        if (!line) continue;
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (typeof entry['level'] === 'number' && entry['level'] >= 50) errors.push(entry);
        if (also) also[(entry['level'] as number) >= 50 ? 'error' : 'debug'](entry);
      }
      done();
    },
  });
  return { logger: pino({ level: 'info', timestamp: () => `,"time":${clock.nowMs()}` }, stream), errors };
}

/** Each payload's subject: its resource by name where it has one, else its location. */
function reportSubjects(r: AcceptedReport, resourceName: Map<string, string>): string[] {
  return r.payloads.map(
    (p) => `${p.payloadType} ${p.resourceId ? (resourceName.get(p.resourceId) ?? p.resourceId) : `location ${p.locationId ?? '?'}`}`,
  );
}

/** The size of the store's files (the database, its write-ahead log and shared memory), bytes. */
export function storeBytesIn(dir: string): number {
  return readdirSync(dir)
    .filter((f) => f.startsWith('wattshift.db'))
    .reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
}

/** The same URL through a link on 127.0.0.1. */
const through = (url: string, link: CuttableLink | null): string => {
  if (!link) return url;
  const { hostname, port } = new URL(url);
  return url.replace(`${hostname}:${port}`, `${hostname}:${link.port}`);
};

export async function runWeekHome(options: WeekRunOptions): Promise<WeekRun> {
  const startMs = weekStartMs;
  const endMs = startMs + options.days * 24 * H;
  const restoreRandom = seedMathRandom(options.seed ?? 11);
  const quiescence = watchQuiescence();
  const clock = new VirtualClock(startMs, quiescence);
  const { logger, errors } = capturingLogger(clock, options.logger);
  const uncaught: string[] = [];
  const onUncaught = (err: unknown): void => {
    uncaught.push(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  };
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
  await preloadLazyModules();
  const dir = mkdtempSync(join(tmpdir(), 'wattshift-sim-week-'));
  const log = createDecisionLog({ keepLines: options.keepDecisions === true });
  let world: Awaited<ReturnType<typeof startWeekWorld>> | undefined;
  /** In front of the API sandbox (one origin for the API, its token endpoint and the forecast) when the run has faults. */
  let apiLink: CuttableLink | null = null;
  /** The flexibility partner that posts the run's events. */
  let partner: ReturnType<typeof createSparkClient> | undefined;
  let app: App | undefined;
  let stopped = false;
  try {
    world = await startWeekWorld({
      clock,
      startMs,
      dataDir: dir,
      logger,
      ...(options.seed !== undefined ? { seed: options.seed } : {}),
      ...(options.seasons ? { seasons: options.seasons } : {}),
    });
    const w = world;
    quiescence.alsoBusyWhile(() => w.sandbox.requestsInFlight() > 0);
    if (options.faults?.length) apiLink = await startCuttableLink(Number(new URL(w.sandbox.baseUrl).port));
    const spark = {
      ...w.config.spark!,
      baseUrl: through(w.sandbox.baseUrl, apiLink),
      authUrl: through(w.sandbox.authUrl, apiLink),
      forecastUrl: through(w.sandbox.forecastUrl, apiLink),
    };
    const config = parseConfig({ ...w.config, spark }).config;
    const registrar = createSparkClient({ ...config.spark, clock, logger });
    const registrationStore = openStore({ path: config.storage.path, clock });
    const resources = (await register(config, { spark: registrar, store: registrationStore, logger, nowMs: clock.nowMs() })).registration.resources;
    registrationStore.close();
    await registrar.close();
    if (options.events?.length) partner = createSparkClient({ ...config.spark, clock, logger });

    // The gateway's own clock: NTP may step it while the home's time flows on.
    const gatewayClock = new SteppedClock(clock);
    const newDaemon = (): App => {
      const d = buildApp(config, {
        logger,
        clock: gatewayClock,
        planInWorker: false,
        ...(options.controlTickMs ? { controlTickMs: options.controlTickMs } : {}),
        onControlTick: (snapshot) => {
          log.tick(snapshot);
          log.plan(d.currentPlan());
        },
      });
      return d;
    };
    let daemon = newDaemon();
    app = daemon;
    const samples: LineSample[] = [];
    const sampling = new AbortController();
    let started: unknown;
    // The daemon starts with time held: its start loads modules and plans, work the kernel cannot
    // see, and a start takes no time in the home's world.
    await daemon.start();
    // Until the daemon has read every device and ticked, the devices are on their own (the charger
    // at its own 16 A, the tank heating): the fuse is the daemon's from a tick after that.
    const inControl = async (): Promise<void> => {
      while (daemon.view().devices.some((d) => d.notReadYet === true)) await clock.sleep(10_000);
      await clock.sleep(2 * 60_000);
    };
    const handovers: WeekRun['handovers'] = [];
    // A restart's stop and start hold time as the first start does: they load, plan, close and
    // flush, work the kernel cannot see, and time moving beneath it would make the run depend on
    // how fast the machine is.
    // So does the charge point's way back: it reconnects on ocpp-rpc's own real-time backoff.
    let starting = false;
    let chargePointAway = false;
    quiescence.alsoBusyWhile(() => {
      if (chargePointAway && w.ocpp.connected) chargePointAway = false;
      return starting || chargePointAway;
    });
    const bills = new Map<string, BillView>();
    const posted: WeekRun['posted'] = [];
    const script = (async () => {
      await w.startChargePoint();
      await inControl();
      let billHour = -1;
      while (!sampling.signal.aborted) {
        const tank = w.tank.state();
        const pump = w.pump.state();
        // The month's bill as the daemon shows it, once an hour (its view is the work of a status request).
        if (options.seasons && Math.floor(clock.nowMs() / H) !== billHour) {
          billHour = Math.floor(clock.nowMs() / H);
          const bill = daemon.view().bill;
          if (bill) bills.set(bill.month, bill);
        }
        samples.push({
          atMs: clock.nowMs(),
          linesA: w.lineCurrentsA(clock.nowMs()),
          goeW: w.goe.powerW,
          ocppW: w.ocpp.powerW,
          tankW: tank.powerW,
          pumpW: pump.powerW,
          tankC: tank.tempC,
          tankBlocked: tank.blocked,
          pumpC: pump.tempC,
          importW: w.importW(clock.nowMs()),
        });
        await clock.sleep(20_000, sampling.signal);
      }
    })().catch((err: unknown) => {
      started = err;
    });
    const faults = injectFaults(
      options.faults ?? [],
      {
        outages: {
          'api-down': { begin: () => apiLink!.cutNow(), end: () => apiLink!.restore() },
          'tank-down': { begin: () => w.tank.stopServer(), end: () => w.tank.startServer() },
          'pump-down': { begin: () => w.pump.stopServer(), end: () => w.pump.startServer() },
        },
        async restartDaemon() {
          const handover = { fromMs: clock.nowMs(), toMs: Number.POSITIVE_INFINITY };
          handovers.push(handover);
          // The stop holds time as the start does: it closes sockets and flushes the store, work
          // the kernel cannot see, and the clock moving beneath it would make the instant the new
          // daemon starts at depend on the machine's speed.
          starting = true;
          try {
            await daemon.stop();
            daemon = newDaemon();
            app = daemon;
            await daemon.start();
          } finally {
            starting = false;
            chargePointAway = !w.ocpp.connected;
          }
          // A restart within the handover of the last one ends it: this one's covers the rest.
          void inControl().then(
            () => {
              handover.toMs = clock.nowMs();
            },
            () => undefined,
          );
        },
        stepClock: (byMs) => gatewayClock.step(byMs),
      },
      clock,
      sampling.signal,
    ).catch((err: unknown) => {
      started = err;
    });
    const posting = (async () => {
      for (const e of options.events ?? []) {
        if (e.postMs > clock.nowMs()) await clock.sleep(e.postMs - clock.nowMs(), sampling.signal);
        posted.push({ ...e, id: await postYearEvent(partner!, config, resources, e) });
      }
    })().catch((err: unknown) => {
      if (!sampling.signal.aborted) started = err;
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
    await faults;
    await posting;
    if (options.seasons) {
      const bill = daemon.view().bill;
      if (bill) bills.set(bill.month, bill);
    }
    const outbox = daemon.store.outboxSummary();
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
      startMs,
      endMs,
      fuseA,
      samples,
      departures: w.departures,
      pumpHistory: w.pump.history(),
      reports,
      events,
      resources,
      errors,
      uncaught,
      outbox,
      handovers,
      storeBytes: storeBytesIn(dir),
      stopped,
      digest: log.digest(),
      decisions: log.counts(),
      decisionLines: log.lines(),
      reportSubjects: reports.map((r) => ({ eventId: r.eventId, createdAtMs: r.createdAtMs, subjects: reportSubjects(r, resourceName) })),
      bills: [...bills.values()],
      posted,
      kernel: { instants, ...quiescence.stats() },
    };
  } finally {
    if (app && !stopped) await Promise.race([app.stop().catch(() => undefined), clock.runFor(60_000).catch(() => undefined)]);
    await apiLink?.close();
    await partner?.close();
    await world?.close();
    quiescence.close();
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onUncaught);
    restoreRandom();
    rmSync(dir, { recursive: true, force: true });
  }
}
