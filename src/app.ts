/**
 * Composition root: the daemon as modules (src/app/), each with one lifecycle (src/lifecycle.ts).
 * Each module is given what it needs and its start returns what it provides, so the start order is
 * the order of the dependencies and the types check it; modules stop in reverse. The few callbacks
 * to a module started later go over the event bus (src/app/event-bus.ts). The daemon's adapters are built here; the
 * commands that talk to devices or the API on their own (`probe`, `register`) build theirs.
 */
import type { Config } from './config/schema.js';
import type { Plan } from './core/types.js';
import type { HomeView } from './view/model.js';
import type { Store } from './store/types.js';
import { assemble, assembleStoppingTogether, type PartHealth } from './lifecycle.js';
import { WattshiftError } from './errors.js';
import { homeView } from './app-view.js';
import { createAppContext, type AppDeps } from './app/context.js';
import { storeModule } from './app/store.js';
import { upstreamModule } from './app/upstream.js';
import { modbusModule, mqttModule, ocppModule } from './app/connections.js';
import { devicesModule, heartbeatsModule } from './app/devices.js';
import { homeModule } from './app/home.js';
import { eventIntakeModule, eventsModule, type EventState } from './app/event-intake.js';
import { billingModule, pricesModule } from './app/pricing.js';
import { weatherModule } from './app/weather.js';
import { planningModule, type Planning } from './app/planning.js';
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
  const { clock, log } = ctx;
  // What the app itself hands out (the view, the plan, the store), once the modules that make it have started.
  let store: Store | undefined;
  let events: EventState | undefined;
  let planning: Planning | undefined;
  let view: (() => HomeView) | undefined;

  const modules = assemble(
    async (use) => {
      const { store: s, openedMs, me } = await use(storeModule(ctx));
      store = s;
      const upstream = await use(upstreamModule(ctx));
      const mqtt = await use(mqttModule(ctx));
      const buses = await use(modbusModule(ctx));
      const ocpp = await use(ocppModule(ctx));
      const devices = await use(devicesModule(ctx, { store: s, mqtt, buses, ocpp }));
      const home = await use(homeModule(ctx, { store: s, ...devices }));
      const { tracker } = home;
      const eventState = await use(eventIntakeModule(ctx, { store: s, upstream, me, tracker, devices }));
      events = eventState;
      // Every loop is told to stop at once, so none starts new work (a plan, a report) while
      // another is still finishing its tick; devices are released only after all ticks have ended.
      const jobs = await use(
        assembleStoppingTogether(
          'jobs',
          async (useJob) => {
            await useJob(heartbeatsModule(ctx, devices));
            const prices = await useJob(pricesModule(ctx, { upstream, tracker }));
            // The outdoor forecast (`outdoorForecast()`), for the zones' plan inputs and the load forecast.
            const weather = await useJob(weatherModule(ctx, { store: s }));
            const billing = await useJob(billingModule(ctx, { store: s, me, prices, ...home }));
            const plans = await useJob(
              planningModule(ctx, { store: s, tracker, loadForecast: home.loadForecast, weather, prices, events: eventState, me }),
            );
            const control = await useJob(
              controlModule(ctx, { ...plans, ...home, supervised: devices.supervised, prices, weather, events: eventState, me }),
            );
            const reports = await useJob(reportsModule(ctx, { store: s, upstream, planning: plans.planning, tracker, me }));
            await useJob(eventsModule(ctx, { store: s, upstream, events: eventState, prices }));
            await useJob(eventScanModule(ctx, { events: eventState }));
            await useJob(nightlyCheckModule(ctx, { store: s, openedMs }));
            return { billing, planning: plans.planning, control, planReports: reports.planReports };
          },
          { logger: log },
        ),
      );
      planning = jobs.planning;

      const viewNow = (): HomeView =>
        homeView({
          config,
          nowMs: clock.nowMs(),
          plan: jobs.planning.current(),
          control: jobs.control.last(),
          devices: devices.supervised,
          wishes: (id) => home.wishes.get(id),
          jobs: modules.health().sort((a, b) => listedAt(a) - listedAt(b)),
          outbox: s.outboxSummary(),
          locationId: me.locationId ?? 'home',
          events: eventState.activeEvents(),
          resources: me.resources,
          vehicleAt: (id) => tracker.vehicleAt(id),
          bill: jobs.billing.summary(),
          // The reports module's queue (it keeps the record in memory); none in fleet mode.
          planReport: jobs.planReports?.read() ?? null,
        });
      view = viewNow;
      await use(homeAssistantModule(ctx, { mqtt, planning: jobs.planning, control: jobs.control, tracker, wishes: home.wishes, view: viewNow }));
      await use(statusModule(ctx, { store: s, view: viewNow }));
    },
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
    view: () => {
      if (!view) throw new WattshiftError('INTERNAL', 'view used before start()');
      return view();
    },
    currentPlan: () => planning?.current() ?? null,
    get store() {
      if (!store) throw new WattshiftError('INTERNAL', 'store used before start()');
      return store;
    },
    scanEvents: () => events?.scan(),
  };
}
