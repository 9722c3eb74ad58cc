/**
 * Composition root: the daemon as a list of modules (src/app/), each with one lifecycle, started
 * in order and stopped in reverse (src/lifecycle.ts). The daemon's adapters are built here; the
 * commands that talk to devices or the API on their own (`probe`, `register`) build theirs.
 */
import type { Config } from './config/schema.js';
import type { Plan } from './core/types.js';
import type { HomeView } from './view/model.js';
import type { Store } from './store/types.js';
import { runModules, stopTogether, type PartHealth } from './lifecycle.js';
import { homeView } from './app-view.js';
import { planReportQueue } from './jobs/plan-reports.js';
import { createAppContext, type AppDeps } from './app/context.js';
import { storeModule } from './app/store.js';
import { upstreamModule } from './app/upstream.js';
import { modbusModule, mqttModule, ocppModule } from './app/connections.js';
import { devicesModule, heartbeatsModule } from './app/devices.js';
import { homeModule } from './app/home.js';
import { eventIntakeModule, eventsModule } from './app/event-intake.js';
import { billingModule, pricesModule } from './app/pricing.js';
import { planningModule } from './app/planning.js';
import { controlModule } from './app/control.js';
import { reportsModule } from './app/reports.js';
import { eventScanModule, nightlyCheckModule } from './app/maintenance.js';
import { homeAssistantModule } from './app/home-assistant.js';
import { statusModule } from './app/status.js';

export type { AppDeps } from './app/context.js';

export interface App {
  start(): Promise<void>;
  stop(): Promise<void>;
  view(): HomeView;
  currentPlan(): Plan | null;
  readonly store: Store;
  /** Runs the event scan now (tests). */
  scanEvents(): void;
}

/** The order the view has always listed the jobs in (the MQTT health payload is an array); devices last. */
const jobOrder = ['events', 'prices', 'planner', 'reports', 'metering', 'billing', 'store'];
const listedAt = (h: PartHealth): number => {
  const i = jobOrder.indexOf(h.name);
  return i < 0 ? jobOrder.length : i;
};

/** Builds the daemon. Nothing connects before `start()`. */
export function buildApp(config: Config, deps: AppDeps): App {
  const ctx = createAppContext(config, deps);
  const { clock, log, parts } = ctx;

  function view(): HomeView {
    const s = ctx.part('store');
    return homeView({
      config,
      nowMs: clock.nowMs(),
      plan: parts.planning?.current() ?? null,
      control: parts.control?.last() ?? null,
      devices: parts.supervised ?? new Map(),
      wishes: (id) => ctx.part('wishes').get(id),
      jobs: modules.health().sort((a, b) => listedAt(a) - listedAt(b)),
      outbox: s.outboxSummary(),
      locationId: ctx.me.locationId ?? 'home',
      events: parts.events?.activeEvents() ?? [],
      resources: ctx.me.resources,
      vehicleAt: (id) => parts.tracker?.vehicleAt(id) ?? null,
      bill: parts.billing?.summary() ?? null,
      // The reports module's queue once it runs (it keeps the record in memory); before, the store's.
      planReport: config.upstream.mode === 'fleet' ? null : (parts.planReports ?? planReportQueue(s)).read(),
    });
  }

  // In start order; each module uses the parts of those before it, and stops before them.
  const modules = runModules(
    [
      storeModule(ctx),
      upstreamModule(ctx),
      mqttModule(ctx),
      modbusModule(ctx),
      ocppModule(ctx),
      devicesModule(ctx),
      homeModule(ctx),
      eventIntakeModule(ctx),
      // Every loop is told to stop at once, so none starts new work (a plan, a report) while
      // another is still finishing its tick; devices are released only after all ticks have ended.
      stopTogether(
        'jobs',
        [
          heartbeatsModule(ctx),
          pricesModule(ctx),
          billingModule(ctx),
          planningModule(ctx),
          controlModule(ctx),
          reportsModule(ctx),
          eventsModule(ctx),
          eventScanModule(ctx),
          nightlyCheckModule(ctx),
        ],
        { logger: log },
      ),
      homeAssistantModule(ctx, view),
      statusModule(ctx, view),
    ],
    { logger: log },
  );

  return {
    async start() {
      await modules.start();
      log.info({ devices: config.devices.length, slotMinutes: config.site.slotMinutes }, 'wattshift started');
    },
    async stop() {
      await modules.stop();
      log.info('wattshift stopped');
    },
    view,
    currentPlan: () => parts.planning?.current() ?? null,
    get store() {
      return ctx.part('store');
    },
    scanEvents: () => parts.events?.scan(),
  };
}
