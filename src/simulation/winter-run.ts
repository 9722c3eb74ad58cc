/**
 * The winter home (homes/winter.ts) with the whole daemon (`buildApp`) in this process, on the
 * simulation kernel's virtual clock, as the week-long home runs (week-run.ts). Every minute it
 * samples the truth: each room's air temperature and relay, and the home's import. On the coldest
 * weekday evening of the run a flexibility partner caps the whole home for three hours (posted at
 * 10:00 that day). Returns what a test or `npm run sim -- --home winter` checks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, type App } from '../app.js';
import { parseConfig } from '../config/load.js';
import { localAt } from '../demo/environment.js';
import type { BillView } from '../view/model.js';
import type { Logger } from '../log.js';
import { register } from '../registration.js';
import { createSparkClient } from '../spark/client.js';
import { openStore } from '../store/index.js';
import { createDecisionLog } from './decision-log.js';
import { capEvening, capHours, capKw, startWinterWorld, type WinterZone } from './homes/winter.js';
import type { Departure } from './homes/week.js';
import { watchQuiescence } from './quiescence.js';
import { preloadLazyModules } from './preload.js';
import { seedMathRandom } from './seeded-random.js';
import { VirtualClock } from './virtual-clock.js';
import { capturingLogger, weekStartMs } from './week-run.js';

const sampleMs = 60_000;

export interface RoomSample {
  tempC: number;
  relayOn: boolean;
  /** Whether the heater draws power (relay on and its own thermostat calling). */
  heating: boolean;
  /** The model error the plan in force states for the zone, K (absent: no plan for it). */
  errorK?: number;
  /** What the plan in force asks of the zone in the slot now: its energy and the room's temperature at the slot's end. */
  planned?: { energyKwh: number; endTempC: number; slotEndMs: number };
}

export interface WinterSample {
  atMs: number;
  importW: number;
  outdoorC: number;
  /** The tank's and the charger's power now, W. */
  tankW: number;
  carW: number;
  rooms: Record<string, RoomSample>;
  /** The most energy the plan in force lets the home take in this hour (it holds the hour to the month's capacity step), kWh. */
  hourAllowanceKwh?: number;
}

export interface WinterCap {
  fromMs: number;
  toMs: number;
  maxKw: number;
  /** The daemon's answer the sandbox accepted for the cap's target. */
  answer: 'acknowledged' | 'declined' | 'none';
}

export interface WinterRun {
  zones: 'planned' | 'thermostats';
  startMs: number;
  endMs: number;
  /** From the daemon's first full read of the devices until it stops, every minute. */
  samples: WinterSample[];
  /** Each room's relay energy over the run (the heaters' metered energy), kWh. */
  zoneKwh: Record<string, number>;
  /** What the run leaves in store: the tank's temperature and the car's state of charge at its end (a bill is only comparable with them). */
  end: { tankC: number; carSocPct: number };
  zoneDefs: readonly WinterZone[];
  departures: Departure[];
  cap: WinterCap;
  /** The month's bill at the main meter as the daemon priced it, at the run's end. */
  bill: BillView | null;
  errors: Record<string, unknown>[];
  uncaught: string[];
  stopped: boolean;
  digest: string;
  decisions: Record<string, number>;
  kernel: { instants: number; settles: number; turns: number; timerWaits: number };
}

export interface WinterRunOptions {
  days: number;
  seed: number;
  /** `planned` (the rooms are wattshift's zones) or `thermostats` (the heaters' own thermostats alone). */
  zones: 'planned' | 'thermostats';
  controlTickMs?: number;
  logger?: Logger;
}

export async function runWinterHome(options: WinterRunOptions): Promise<WinterRun> {
  const startMs = weekStartMs;
  const endMs = startMs + options.days * 24 * 3_600_000;
  const restoreRandom = seedMathRandom(options.seed);
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
  const dir = mkdtempSync(join(tmpdir(), 'wattshift-sim-winter-'));
  const log = createDecisionLog({ keepLines: false });
  let world: Awaited<ReturnType<typeof startWinterWorld>> | undefined;
  let app: App | undefined;
  let partner: ReturnType<typeof createSparkClient> | undefined;
  let stopped = false;
  try {
    world = await startWinterWorld({ clock, startMs, days: options.days, dataDir: dir, logger, seed: options.seed, zones: options.zones });
    const w = world;
    quiescence.alsoBusyWhile(() => w.sandbox.requestsInFlight() > 0);
    const config = parseConfig(w.config).config;
    partner = createSparkClient({ ...config.spark, clock, logger });
    const registrationStore = openStore({ path: config.storage.path, clock });
    await register(config, { spark: partner, store: registrationStore, logger, nowMs: clock.nowMs() });
    registrationStore.close();

    const daemon = buildApp(config, {
      logger,
      clock,
      planInWorker: false,
      ...(options.controlTickMs ? { controlTickMs: options.controlTickMs } : {}),
      onControlTick: (snapshot) => {
        log.tick(snapshot);
        log.plan(daemon.currentPlan());
      },
    });
    app = daemon;
    // The daemon starts with time held, as in the week-long home (its start is work the kernel cannot see).
    await daemon.start();

    const day = capEvening(startMs, options.days, options.seed);
    const cap: WinterCap = { fromMs: localAt(startMs, day, capHours.from), toMs: localAt(startMs, day, capHours.to), maxKw: capKw, answer: 'none' };
    let capEventId: string | undefined;
    const samples: WinterSample[] = [];
    const sampling = new AbortController();
    let failed: unknown;
    const script = (async () => {
      await w.startChargePoint();
      while (daemon.view().devices.some((d) => d.notReadYet === true)) await clock.sleep(10_000);
      await clock.sleep(2 * 60_000);
      while (!sampling.signal.aborted) {
        const now = clock.nowMs();
        if (capEventId === undefined && now >= localAt(startMs, day, 10) && now < cap.fromMs) {
          const points = Array.from({ length: capHours.to - capHours.from }, (_, h) => ({
            timestamp: new Date(cap.fromMs + h * 3_600_000).toISOString(),
            maxPowerInKiloWatts: capKw,
          }));
          const location = { locationId: config.spark.locationId!, meterPointId: config.spark.meterPointIds[0]! };
          capEventId = (await partner!.simulateLocationLpc({ locations: [{ location, points }] })).id;
        }
        const plan = daemon.currentPlan();
        const rooms: Record<string, RoomSample> = {};
        for (const r of w.rooms) {
          const errorK = plan?.zones?.[r.zone.id]?.model.errorK;
          const slot = plan?.slots.find((p) => p.startMs <= now && now < p.endMs);
          const z = slot?.zones?.[r.zone.id];
          rooms[r.zone.id] = {
            tempC: r.sim.tempC,
            relayOn: r.sim.relay.output,
            heating: r.sim.heating,
            ...(errorK !== undefined ? { errorK } : {}),
            ...(slot && z ? { planned: { energyKwh: z.energyKwh, endTempC: z.endTempC, slotEndMs: slot.endMs } } : {}),
          };
        }
        const allowance = plan?.slots.find((p) => p.startMs <= now && now < p.endMs)?.hourAllowanceKwh;
        samples.push({
          atMs: now,
          importW: w.importW(now),
          outdoorC: w.rooms[0]!.sim.outdoorC,
          tankW: w.tank.state().powerW,
          carW: w.ocpp.powerW,
          rooms,
          ...(allowance !== undefined ? { hourAllowanceKwh: allowance } : {}),
        });
        await clock.sleep(sampleMs, sampling.signal);
      }
    })().catch((err: unknown) => {
      if (!sampling.signal.aborted) failed = err;
    });
    let instants = 0;
    await clock.runUntil(endMs, {
      afterInstant: () => {
        instants++;
      },
      until: () => failed !== undefined,
    });
    if (failed !== undefined) throw failed;
    sampling.abort();
    await script;
    const end = { tankC: w.tank.state().tempC, carSocPct: w.battery.socPct };
    // The bill of the hours up to the end: read once billing has priced the last of them (a few
    // minutes on, the current hour is not yet part of it); read at the end itself, an hour whose
    // metering is still being written may be left out.
    const settled = (): boolean => {
      const b = daemon.view().bill;
      return b !== null && b !== undefined && b.hoursUnpriced === 0 && b.hoursPriced >= Math.floor((endMs - startMs) / 3_600_000);
    };
    await clock.runFor(5 * 60_000, { until: settled });
    const bill = daemon.view().bill ?? null;
    const stopping = daemon.stop().then(() => {
      stopped = true;
    });
    await clock.runFor(5 * 60_000, { until: () => stopped });
    await stopping;
    for (const r of w.sandbox.acceptedReports().filter((rep) => rep.eventId === capEventId)) {
      for (const p of r.payloads) {
        const raw = p.raw as { acknowledgedTargets?: unknown[]; declinedTargets?: unknown[] };
        if (raw.acknowledgedTargets?.length) cap.answer = 'acknowledged';
        else if (raw.declinedTargets?.length) cap.answer = 'declined';
      }
    }
    return {
      zones: options.zones,
      startMs,
      endMs,
      samples,
      zoneKwh: Object.fromEntries(w.rooms.map((r) => [r.zone.id, r.sim.relay.energyWh / 1000])),
      end,
      zoneDefs: w.rooms.map((r) => r.zone),
      departures: w.departures,
      cap,
      bill,
      errors,
      uncaught,
      stopped,
      digest: log.digest(),
      decisions: log.counts(),
      kernel: { instants, ...quiescence.stats() },
    };
  } finally {
    if (app && !stopped) await Promise.race([app.stop().catch(() => undefined), clock.runFor(60_000).catch(() => undefined)]);
    await partner?.close();
    await world?.close();
    quiescence.close();
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onUncaught);
    restoreRandom();
    rmSync(dir, { recursive: true, force: true });
  }
}
