/**
 * What the daemon's modules share: the config and dependencies `buildApp` was given, the metrics and
 * the store's health, and the parts each module makes when it starts (`parts`). A module reads the
 * parts of modules started before it with `part()`; a callback that may run before a later part
 * exists reads `parts` directly.
 */
import type { Config } from '../config/schema.js';
import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { Plan } from '../core/types.js';
import type { Store } from '../store/types.js';
import type { Upstream } from '../upstream/index.js';
import type { MqttConnection } from '../devices/mqtt/index.js';
import type { ModbusBus } from '../devices/modbus/bus.js';
import type { BuiltDevice } from '../devices/factory.js';
import type { CentralSystem } from '../devices/ocpp/central-system.js';
import type { SupervisedDevice } from '../devices/supervisor.js';
import type { SocTopic } from '../devices/mqtt/soc-topic.js';
import type { HaBridge } from '../ha/bridge.js';
import type { MeteredSubject, Metering } from '../jobs/metering.js';
import type { Wishes } from '../jobs/home-state.js';
import type { VehicleMetering } from '../jobs/vehicle-metering.js';
import type { HomeTracker } from '../jobs/home-tracker.js';
import type { startPriceRefresh } from '../jobs/price-refresh.js';
import type { Billing } from '../jobs/billing.js';
import type { startPlanning } from '../jobs/planning.js';
import type { ControlSnapshot, startControlLoop } from '../jobs/control-loop.js';
import type { startReportOutbox } from '../jobs/report-outbox.js';
import type { PlanReportQueue } from '../jobs/plan-reports.js';
import type { Identity } from '../spark/event-normalise.js';
import type { EventState } from './event-intake.js';
import type { StoreHealth } from './store-health.js';
import type { PartHealth } from '../lifecycle.js';
import { systemClock } from '../clock.js';
import { WattshiftError } from '../errors.js';
import { identityOf } from '../identity.js';
import { meterSubjectOf } from '../jobs/metering.js';
import { DaemonMetrics } from '../status/metrics.js';
import { packageVersion } from '../package-root.js';
import { createStoreHealth } from './store-health.js';

export interface AppDeps {
  logger: Logger;
  clock?: Clock;
  /** Directory relative device-profile paths resolve against. */
  configDir?: string;
  /** Control loop period, ms of clock time (default 10 s). */
  controlTickMs?: number;
  /** Called after every control tick (the demo prints from it). */
  onControlTick?: (snapshot: ControlSnapshot) => void;
  /**
   * Deadline of one device read or command, ms of clock time (default 5 s). On an accelerated clock
   * pass a value that is still a sane real-time budget (e.g. 2 s × speed).
   */
  deviceTimeoutMs?: number;
  /** Checks the credentials at start (default true): rejected ones stop the start with AUTH_REJECTED. */
  checkCredentials?: boolean;
  /** Plans on a worker thread, off the control loop's event loop (`run` and the demo do; default false). */
  planInWorker?: boolean;
}

/** The parts the modules make, by the module that makes them. */
export interface Parts {
  store: Store;
  /** When the store was opened (and quick-checked), clock ms. */
  storeOpenedMs: number;
  upstream: Upstream;
  mqtt: MqttConnection | null;
  buses: Map<string, ModbusBus>;
  ocpp: CentralSystem | null;
  built: Map<string, BuiltDevice>;
  supervised: Map<string, SupervisedDevice>;
  /** Each vehicle's own SoC topic, by vehicle id. */
  vehicleSoc: Map<string, SocTopic>;
  metering: Metering;
  subjects: MeteredSubject[];
  vehicleMetering: VehicleMetering;
  wishes: Wishes;
  tracker: HomeTracker;
  events: EventState;
  prices: ReturnType<typeof startPriceRefresh>;
  billing: Billing;
  /** The plan loaded from the store at start. */
  previousPlan: Plan | null;
  planning: ReturnType<typeof startPlanning>;
  control: ReturnType<typeof startControlLoop>;
  outbox: ReturnType<typeof startReportOutbox>;
  /** The plan report's record (direct upstream only): its one writer in the process, which keeps it in memory. */
  planReports: PlanReportQueue;
  ha: HaBridge;
}

export interface AppContext {
  readonly config: Config;
  readonly deps: AppDeps;
  readonly clock: Clock;
  /** The `app` component's logger. */
  readonly log: Logger;
  readonly slotMs: number;
  readonly counters: DaemonMetrics;
  readonly storeHealth: StoreHealth;
  /** The main meter's device id, if one is configured. */
  readonly mainMeterId: string | null;
  readonly subjectOfDevice: (deviceId: string) => string;
  /** The ids this home has at the API: read once when the store opens (a restart picks up a new registration). */
  me: Identity;
  readonly parts: Partial<Parts>;
  /** A part of a module started earlier; INTERNAL when there is none yet. */
  part<K extends keyof Parts>(name: K): Parts[K];
}

export function createAppContext(config: Config, deps: AppDeps): AppContext {
  const log = deps.logger.child({ component: 'app' });
  const clock = deps.clock ?? systemClock;
  const parts: Partial<Parts> = {};
  return {
    config,
    deps,
    clock,
    log,
    slotMs: config.site.slotMinutes * 60_000,
    counters: new DaemonMetrics({ version: packageVersion() }),
    storeHealth: createStoreHealth({ log, clock }),
    mainMeterId: config.devices.find((d) => d.kind === 'meter' && d.model.main)?.id ?? null,
    subjectOfDevice: meterSubjectOf(config.devices),
    me: identityOf(config, undefined),
    parts,
    part(name) {
      const p = parts[name];
      if (p === undefined) throw new WattshiftError('INTERNAL', `${name} used before start()`);
      return p as Parts[typeof name];
    },
  };
}

/** A job's health as the view lists it: `lastError` only when there is one. */
export function jobHealth(
  name: string,
  h: { ok: boolean; lastError?: { code: string; message: string; atMs: number } | null } | undefined,
): PartHealth {
  if (!h) return { name, ok: true };
  return { name, ok: h.ok, ...(h.lastError ? { lastError: h.lastError } : {}) };
}
