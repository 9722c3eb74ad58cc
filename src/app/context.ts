/**
 * What every module of the daemon is given: the config and dependencies `buildApp` was given, the
 * metrics, the store's health and the event bus. The parts a module makes at its start are not here:
 * each module's start returns them, and `buildApp` hands them to the modules that need them.
 */
import type { Config } from '../config/schema.js';
import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { ControlSnapshot } from '../jobs/control-loop.js';
import type { PartHealth } from '../lifecycle.js';
import { systemClock } from '../clock.js';
import { meterSubjectOf } from '../jobs/metering.js';
import { DaemonMetrics } from '../status/metrics.js';
import { packageVersion } from '../package-root.js';
import { createStoreHealth, type StoreHealth } from './store-health.js';
import { createEventBus, type EventBus } from './event-bus.js';

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
  /** The late callbacks between modules (src/app/event-bus.ts). */
  readonly bus: EventBus;
}

export function createAppContext(config: Config, deps: AppDeps): AppContext {
  const log = deps.logger.child({ component: 'app' });
  const clock = deps.clock ?? systemClock;
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
    bus: createEventBus({ logger: log }),
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
