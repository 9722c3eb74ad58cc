/**
 * A whole home with the daemon in this process (`buildApp`), for the tests that run one over an
 * afternoon or a night: the demo world (sandbox API, broker, Modbus tank, go-e charger) in a temp
 * dir, the home registered with the sandbox, the daemon on the same clock, and the plan in force
 * at each hour's start. The test adds its own simulators and config; `close` stops them in order.
 * (daemon-harness.ts runs the daemon as its own process instead.)
 *
 * Without a `speed` the home runs on the simulation kernel's virtual clock: time moves only when
 * the whole process is idle, and only while `until` runs it, so what the test sees does not depend
 * on the machine's load. With a `speed` it runs on a clock that many times real time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, type App } from '../../src/app.js';
import type { ControlSnapshot } from '../../src/jobs/control-loop.js';
import { acceleratedClock } from '../../src/clock.js';
import { preloadLazyModules } from '../../src/simulation/preload.js';
import { watchQuiescence } from '../../src/simulation/quiescence.js';
import { VirtualClock } from '../../src/simulation/virtual-clock.js';
import type { Config } from '../../src/config/schema.js';
import type { Plan } from '../../src/core/types.js';
import { startDemoEnvironment, type DemoEnvironment } from '../../src/demo/environment.js';
import type { Registration } from '../../src/identity.js';
import { silentLogger, type Logger } from '../../src/log.js';
import type { Clock } from '../../src/ports.js';
import { register } from '../../src/registration.js';
import { createSparkClient, type SparkClient } from '../../src/spark/client.js';
import { openStore } from '../../src/store/index.js';

/** What the test may choose of the demo world (the rest is the home's). */
export type WorldChoices = Omit<Parameters<typeof startDemoEnvironment>[0], 'clock' | 'startMs' | 'dataDir' | 'logger'>;

export interface DemoHome {
  readonly clock: Clock;
  /** The world's, the registration's and (unless the test gives its own) the daemon's logger. */
  readonly logger: Logger;
  /** Aborted when the home closes: the simulators' loops beside the daemon end with it. */
  readonly stopSims: AbortSignal;
  /** The plan in force at each hour's start (its current slot is frozen for the hour). */
  readonly planAtHour: Map<number, Plan>;
  /** The demo world, once started. */
  readonly env: DemoEnvironment;
  /** The daemon, once built. */
  readonly app: App;
  startWorld(choices?: WorldChoices): Promise<DemoEnvironment>;
  /** Registers the home as `wattshift register` would; `withSpark` may use the client before it closes. */
  register(config: Config, withSpark?: (spark: SparkClient, registration: Registration) => Promise<void>): Promise<Registration>;
  /** Builds and starts the daemon: a device deadline of 2 s of real time, `onControlTick` after the plan is noted. */
  startApp(config: Config, options: { controlTickMs: number; logger?: Logger; onControlTick?: (snap: ControlSnapshot) => void }): Promise<App>;
  /** Runs `step` every `everyMs` of the clock until the home closes. */
  every(everyMs: number, step: () => Promise<void>): void;
  /** Returns when the clock reads `ms` (on the virtual clock: runs it there). */
  until(ms: number): Promise<void>;
  /** Runs `work` to its end, the virtual clock moving while it waits on it (with a `speed`: just awaits it). */
  runWhile<T>(work: Promise<T>): Promise<T>;
  /** Counts the process busy while `busy` says so (a peer's own count of requests it holds); nothing with a `speed`. */
  alsoBusyWhile(busy: () => boolean): void;
  /** Stops the loops and the daemon, then `closeSims` (the test's simulators), the world, and removes the temp dir. */
  close(closeSims?: () => Promise<unknown>): Promise<void>;
}

/** Runs `work` to its end while the virtual clock moves (it may wait on the clock), or just awaits it. */
const withTime = async <T>(virtual: VirtualClock | null, work: Promise<T>): Promise<T> => {
  if (!virtual) return work;
  let done = false;
  const settled = work.finally(() => {
    done = true;
  });
  await virtual.runFor(10 * 60_000, { until: () => done });
  return settled;
};

/**
 * A home whose clock reads `startMs` now, on the virtual clock or (with `speed`) running that many
 * times real time; `name` names its temp dir.
 */
export function demoHome(options: { name: string; startMs: number; speed?: number }): DemoHome {
  const { startMs, speed } = options;
  const quiescence = speed === undefined ? watchQuiescence() : null;
  const virtual = quiescence ? new VirtualClock(startMs, quiescence) : null;
  const clock: Clock = virtual ?? acceleratedClock(startMs, speed!);
  const logger = silentLogger();
  const stop = new AbortController();
  const planAtHour = new Map<number, Plan>();
  let dir = '';
  let env: DemoEnvironment | undefined;
  let app: App | undefined;
  const started = <T>(part: T | undefined, what: string): T => {
    if (part === undefined) throw new Error(`the home's ${what} is not started`);
    return part;
  };

  return {
    clock,
    logger,
    stopSims: stop.signal,
    planAtHour,
    get env() {
      return started(env, 'world');
    },
    get app() {
      return started(app, 'daemon');
    },
    startWorld: async (choices = {}) => {
      if (virtual) await preloadLazyModules();
      dir = mkdtempSync(join(tmpdir(), `wattshift-${options.name}-`));
      env = await startDemoEnvironment({ ...choices, clock, startMs, dataDir: dir, logger });
      return env;
    },
    register: async (config, withSpark) => {
      const spark = createSparkClient({ ...config.spark, clock, logger });
      const store = openStore({ path: config.storage.path, clock });
      try {
        const { registration } = await register(config, { spark, store, logger, nowMs: clock.nowMs() });
        await withSpark?.(spark, registration);
        return registration;
      } finally {
        store.close();
        await spark.close();
      }
    },
    startApp: async (config, o) => {
      const built = buildApp(config, {
        logger: o.logger ?? logger,
        clock,
        controlTickMs: o.controlTickMs,
        ...(speed === undefined ? {} : { deviceTimeoutMs: 2_000 * speed }),
        onControlTick: (snap) => {
          const hour = Math.floor(snap.atMs / 3_600_000) * 3_600_000;
          const plan = built.currentPlan();
          if (plan && !planAtHour.has(hour)) planAtHour.set(hour, plan);
          o.onControlTick?.(snap);
        },
      });
      // On the virtual clock the daemon starts with time held (its start is work the kernel cannot
      // see), and its stop runs the clock on: a device's release write may wait on its timeout.
      const stop = built.stop.bind(built);
      app = virtual ? Object.assign(built, { stop: () => withTime(virtual, stop()) }) : built;
      await built.start();
      return app;
    },
    every: (everyMs, step) => {
      void (async () => {
        while (!stop.signal.aborted) {
          await clock.sleep(everyMs, stop.signal);
          await step();
        }
      })().catch(() => undefined);
    },
    until: (ms) => (virtual ? virtual.runUntil(ms) : clock.sleep(ms - clock.nowMs())),
    runWhile: (work) => withTime(virtual, work),
    alsoBusyWhile: (busy) => quiescence?.alsoBusyWhile(busy),
    close: async (closeSims) => {
      stop.abort();
      await app?.stop();
      await withTime(
        virtual,
        (async () => {
          await closeSims?.();
          await env?.close();
        })(),
      );
      quiescence?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
