/**
 * A fault scenario's home on the simulation kernel: the demo world (sandbox API, broker, Modbus
 * tank, go-e charger) and the daemon in this process on one virtual clock. The daemon is
 * `buildApp` run by `runDaemon`, as `wattshift run` runs it (its start, its log lines with the
 * config's secrets masked, its exit code on a stop), so what a scenario on the real process
 * checked can be checked here, exactly: time moves only when every part is idle, never under
 * a daemon that is still working.
 */
import { EventEmitter } from 'node:events';
import type { App } from '../../src/app.js';
import { buildApp } from '../../src/app.js';
import { runDaemon } from '../../src/cli/daemon.js';
import { parseConfig } from '../../src/config/load.js';
import type { Config, DirectConfigInput } from '../../src/config/schema.js';
import { localAt, type DemoEnvironment } from '../../src/demo/environment.js';
import type { Registration } from '../../src/identity.js';
import { createLogger, silentLogger } from '../../src/log.js';
import { createSparkClient, type SparkClient } from '../../src/spark/client.js';
import type { Clock } from '../../src/ports.js';
import { SteppedClock } from '../../src/simulation/stepped-clock.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { deepMerge, type CheckedHome, type DaemonLogLine, type TruthSample } from '../helpers/daemon-harness.js';
import { demoHome, type DemoHome, type WorldChoices } from '../helpers/demo-home.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { faultOverrides, januaryDay } from '../faults/common.js';

/** A daemon in this process: its log lines (each with `atMs`, the clock's time it was written) and its way to stop. */
export interface KernelDaemon {
  readonly app: App;
  /** Parsed log lines, in order; `atMs` is when the clock read when each was written. */
  readonly logs: (DaemonLogLine & { atMs: number })[];
  /** Every log line as written (secrets masked as the daemon masks them). */
  readonly rawOutput: string[];
  /** The exit code `wattshift run` would return, once the daemon has stopped (or failed to start). */
  readonly exited: Promise<number>;
  /** Whether it has come up (`runDaemon` said `running`). */
  readonly running: boolean;
  /** SIGTERM, then waits with time held until the daemon has stopped; returns its exit code. */
  stop(): Promise<number>;
}

export interface FaultHome extends CheckedHome {
  readonly home: DemoHome;
  readonly clock: Clock;
  readonly startMs: number;
  readonly env: DemoEnvironment;
  /** The daemon's config as a document (the demo's, with the fault scenarios' overrides). */
  config: DirectConfigInput;
  registration: Registration | undefined;
  readonly charger: DemoEnvironment['charger'];
  readonly shelly: undefined;
  /** The switchable proxy in front of the sandbox, when asked for. */
  readonly proxy: FaultProxy | undefined;
  /** Literal secrets of the config, for grepping output. */
  readonly secrets: string[];
  /** A client straight to the sandbox (not through the proxy), for simulation calls. */
  readonly spark: SparkClient;
  /** Local (Europe/Oslo) `hh:mm` of `day` days after the start day, UTC ms. */
  localTime(day: number, hh: number, mm?: number): number;
  /** Registers the home with the sandbox into the store of `config` (default: this home's). */
  register(config?: DirectConfigInput): Promise<Registration>;
  /**
   * Builds and starts a daemon on `config` (default: this home's); resolves once it runs or has
   * failed to start. `clockOffsetMs` sets its wall clock that far from the home's (an NTP step
   * between runs).
   */
  startDaemon(config?: DirectConfigInput, options?: { clockOffsetMs?: number }): Promise<KernelDaemon>;
  /** The simulators' truth every minute of the clock, from now until the home closes. */
  sampleTruth(): TruthSample[];
  /** Runs the clock to `ms`. */
  until(ms: number): Promise<void>;
  /** Runs the clock a minute at a time until `daemon` has logged a line `predicate` takes; fails after `withinMs` of the clock. */
  untilLog(daemon: KernelDaemon, predicate: (line: DaemonLogLine) => boolean, withinMs: number): Promise<DaemonLogLine & { atMs: number }>;
  /** Opens a store read-only (the daemon's, unless a path is given). */
  readStore<T>(fn: (store: Store) => T, path?: string): T;
  close(): Promise<void>;
}

/**
 * A request the proxy holds keeps the clock standing until the client's own real-time timeout
 * ends it, so the timeout takes no time of the home: the least the config allows only shortens
 * how long the run waits on it.
 */
const kernelOverrides = { spark: { requestTimeoutMs: 100, tokenTimeoutMs: 100 } };

/** Homes open in this file, closed by `closeFaultHomes` (an afterEach). */
const open = new Set<FaultHome>();

export async function closeFaultHomes(): Promise<void> {
  for (const h of [...open]) await h.close();
}

/**
 * The demo home at `startMs`, or on a January Wednesday in Oslo at local `startLocal` (10:00 by default), its world
 * started, the home registered; `proxy` puts the fault proxy between the daemon and the sandbox.
 */
export async function faultHome(
  name: string,
  options: { startLocal?: [number, number]; startMs?: number; proxy?: boolean; world?: WorldChoices } = {},
): Promise<FaultHome> {
  const [hh, mm] = options.startLocal ?? [10, 0];
  const startMs = options.startMs ?? localAt(januaryDay, 0, hh, mm);
  const home = demoHome({ name: `kernel-fault-${name}`, startMs });
  const env = await home.startWorld(options.world ?? {});
  // A request the sandbox is still answering is work in flight; so is one the proxy holds: its
  // client's own real-time timeout ends it while the clock stands.
  home.alsoBusyWhile(() => env.sandbox.requestsInFlight() > 0);
  let proxy: FaultProxy | undefined;
  let sparkDoc = env.config.spark;
  if (options.proxy) {
    const origin = env.sandbox.authUrl;
    const p = await startFaultProxy(origin, { clock: home.clock });
    proxy = p;
    home.alsoBusyWhile(() => p.holding() > 0);
    const swap = (u: string | undefined): string | undefined => u?.replace(origin, p.origin);
    sparkDoc = { ...sparkDoc, baseUrl: swap(sparkDoc.baseUrl)!, authUrl: swap(sparkDoc.authUrl), forecastUrl: swap(sparkDoc.forecastUrl) };
  }
  const config = deepMerge({ ...env.config, spark: sparkDoc }, deepMerge(faultOverrides, kernelOverrides)) as DirectConfigInput;
  const secrets = [String(env.config.spark.clientSecret)];
  const spark = createSparkClient({ ...parseConfig(env.config).config.spark, clock: home.clock, logger: silentLogger() });
  const daemons: KernelDaemon[] = [];
  let samplerStarted = false;
  const samples: TruthSample[] = [];

  const parsed = (doc: DirectConfigInput): Config => parseConfig(doc).config;

  const startDaemon = async (doc: DirectConfigInput = fh.config, o: { clockOffsetMs?: number } = {}): Promise<KernelDaemon> => {
    const cfg = parsed(doc);
    const clock = new SteppedClock(home.clock);
    clock.step(o.clockOffsetMs ?? 0);
    const logs: KernelDaemon['logs'] = [];
    const rawOutput: string[] = [];
    let markRunning: (running: boolean) => void = () => undefined;
    const running = new Promise<boolean>((resolve) => (markRunning = resolve));
    const logger = createLogger({
      level: cfg.log.level,
      secrets,
      destination: {
        write: (line: string) => {
          for (const l of line.split('\n')) {
            if (!l) continue;
            rawOutput.push(l);
            const entry = { ...(JSON.parse(l) as DaemonLogLine), atMs: home.clock.nowMs() };
            logs.push(entry);
            if (entry.component === 'main' && entry.msg === 'running') markRunning(true);
          }
        },
      },
    });
    const app = buildApp(cfg, { logger, clock, controlTickMs: 60_000, planInWorker: false });
    const signals = new EventEmitter();
    // The daemon starts with time held: its start is work the kernel cannot see.
    const exited = runDaemon(app, { logger, signals: signals as never });
    void exited.then(() => markRunning(false));
    const started = await running;
    let stopping: Promise<number> | undefined;
    const daemon: KernelDaemon = {
      app,
      logs,
      rawOutput,
      exited,
      running: started,
      stop: () => {
        if (!stopping) {
          // The stop, like the start, is work the kernel cannot see (a socket's close, a file's
          // flush): time is held until it ends. A stop that waited on the clock would meet
          // runDaemon's real-time deadline and exit with an error, not pass unseen.
          signals.emit('SIGTERM');
          stopping = exited;
        }
        return stopping;
      },
    };
    daemons.push(daemon);
    return daemon;
  };

  const fh: FaultHome = {
    home,
    clock: home.clock,
    startMs,
    env,
    config,
    registration: undefined,
    charger: env.charger,
    shelly: undefined,
    proxy,
    secrets,
    spark,
    localTime: (day, h, m = 0) => localAt(startMs, day, h, m),
    register: async (doc = fh.config) => {
      const registration = await home.runWhile(home.register(parsed(doc)));
      fh.registration = registration;
      return registration;
    },
    startDaemon,
    sampleTruth: () => {
      if (!samplerStarted) {
        samplerStarted = true;
        home.every(60_000, async () => {
          const { tempC, powerW, trueEnergyKwh, blocked, leaseRemainingS } = env.tank.state();
          samples.push({
            atMs: home.clock.nowMs(),
            tankC: tempC,
            tankPowerW: powerW,
            tankEnergyKwh: trueEnergyKwh,
            tankBlocked: blocked,
            tankLeaseS: leaseRemainingS,
            chargerPowerW: env.charger.powerW,
          });
        });
      }
      return samples;
    },
    until: (ms) => home.until(ms),
    untilLog: async (daemon, predicate, withinMs) => {
      const deadline = home.clock.nowMs() + withinMs;
      for (;;) {
        const found = daemon.logs.find(predicate);
        if (found) return found;
        if (home.clock.nowMs() >= deadline)
          throw new Error(`no matching daemon log line within ${withinMs / 60_000} minutes; last lines:\n${daemon.rawOutput.slice(-15).join('\n')}`);
        await home.until(Math.min(deadline, home.clock.nowMs() + 60_000));
      }
    },
    readStore: (fn, path = String(fh.config.storage!.path)) => {
      const store = openStore({ path, readOnly: true });
      try {
        return fn(store);
      } finally {
        store.close();
      }
    },
    close: async () => {
      open.delete(fh);
      for (const d of daemons) await d.stop().catch(() => undefined);
      await home.close(async () => {
        await spark.close();
        await proxy?.close();
      });
    },
  };
  open.add(fh);
  await fh.register();
  return fh;
}
