/**
 * Runs the real daemon as its own process (`node --import tsx src/main.ts run`) against the demo
 * world (sandbox, MQTT broker, simulated Modbus tank, simulated go-e charger), all on one
 * accelerated timeline shared through WATTSHIFT_SIM_CLOCK. Used by the end-to-end test, the fault
 * suite and the benchmarks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { acceleratedClock } from '../../src/clock.js';
import { silentLogger, type Logger } from '../../src/log.js';
import type { Clock } from '../../src/ports.js';
import type { ConfigInput, DirectConfigInput } from '../../src/config/schema.js';
import { parseConfig } from '../../src/config/load.js';
import { createSparkClient, type SparkClient } from '../../src/spark/client.js';
import { openStore } from '../../src/store/index.js';
import { register } from '../../src/registration.js';
import type { Registration } from '../../src/identity.js';
import { goeTopic, localAt, startDemoEnvironment, type DemoEnvironment } from '../../src/demo/environment.js';
import { createGoeSim, type GoeSim, type GoeSimPlug } from '../../src/sandbox/devices/goe-sim.js';
import { createShellySim, type ShellySim } from '../../src/sandbox/devices/shelly-sim.js';
import type { EventRec } from '../../src/sandbox/state.js';
import type { IClientOptions } from 'mqtt';
import { startAedes, type TestBroker } from './aedes.js';
import { startMosquitto } from './mosquitto.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { unitEnvironment, unitNodeFlags } from '../../scripts/lib/systemd-unit.js';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const hourMs = 3_600_000;

export interface WorldOptions {
  /** Simulated start, UTC ms. */
  startMs: number;
  /** Clock speed factor (simulated ms per real ms). */
  speed: number;
  /** Directory for the config, the database and logs (created if missing). */
  dataDir: string;
  seed?: number;
  logger?: Logger;
  /** Lifetime of the sandbox's access tokens, simulated seconds (default one hour). */
  tokenTtlSeconds?: number;
  /**
   * Run the charger on a restartable broker of our own (world.broker): aedes in process, or a
   * real Mosquitto process with TLS and a password (the daemon and the simulators use both).
   */
  ownBroker?: boolean | 'mosquitto';
  /**
   * The tank the daemon drives: the Modbus simulator (default), or a Shelly Plus 1PM with the
   * add-on thermometer on our own broker (world.shelly; implies ownBroker), which falls back to
   * "heating allowed" on its own when a block lease (`toggle_after`) is not renewed; or the Modbus
   * simulator as a plain relay board without a release timer (`plain-relay`) and an SDM120.
   */
  tank?: 'modbus' | 'shelly' | 'plain-relay';
  /** When the car is plugged in (implies ownBroker); default: 17:30 to 07:30 on the first two evenings. */
  plugs?: GoeSimPlug[];
  /**
   * Simulation step of our own charger (and Shelly), ms of clock time (default 30 s). It
   * publishes after every step and the daemon meters a value at the time it arrives; within a
   * step the daemon interpolates, so a step in which the current changes shifts a little energy
   * across an hour boundary: use a few seconds (like a real go-e) where hourly kWh must be exact.
   */
  chargerStepMs?: number;
  /** Put a switchable HTTP proxy (world.proxy) between the daemon and the sandbox. */
  proxy?: boolean;
  /**
   * Real time (Date.now()) at which the clock reads `startMs` (default: now). Worlds started with
   * the same `startMs`, `speed` and origin share one timeline (several homes on one clock).
   */
  realOriginMs?: number;
}

export interface World {
  readonly startMs: number;
  readonly speed: number;
  /** Real time (Date.now()) at which the simulated clock read `startMs`. */
  readonly realOriginMs: number;
  readonly clock: Clock;
  readonly dataDir: string;
  readonly env: DemoEnvironment;
  /** The daemon's config as a document (edit it, then writeConfig). */
  config: DirectConfigInput;
  /** The charger the daemon talks to (env.charger, or ours on `broker`). */
  readonly charger: GoeSim;
  /** The Shelly tank, when the world was started with `tank: 'shelly'` (env.tank is then idle). */
  readonly shelly: ShellySim | undefined;
  readonly broker: TestBroker | undefined;
  readonly proxy: FaultProxy | undefined;
  /** Set by registerHome. */
  registration: Registration | undefined;
  /** A client straight to the sandbox (not through the proxy), for simulation calls. */
  readonly spark: SparkClient;
  /** Literal secrets of this world's config, for grepping output. */
  readonly secrets: string[];
  close(): Promise<void>;
}

export interface DaemonLogLine {
  level?: string;
  msg?: string;
  code?: string;
  component?: string;
  [key: string]: unknown;
}

export interface DaemonProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Parsed JSON lines of stdout, in order. */
  readonly logs: DaemonLogLine[];
  /** Every line of stdout and stderr as text (JSON or not). */
  readonly rawOutput: string[];
  waitForLog(predicate: (line: DaemonLogLine) => boolean, timeoutMs?: number): Promise<DaemonLogLine>;
  kill(signal?: NodeJS.Signals): void;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const worlds = new Set<World>();
const daemons = new Set<DaemonProcess>();

function realSleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.max(0, ms)));
}

export async function startWorld(options: WorldOptions): Promise<World> {
  mkdirSync(options.dataDir, { recursive: true });
  const realOriginMs = options.realOriginMs ?? Date.now();
  const clock = acceleratedClock(options.startMs, options.speed, realOriginMs);
  const logger = options.logger ?? silentLogger();
  const env = await startDemoEnvironment({
    clock,
    startMs: options.startMs,
    dataDir: options.dataDir,
    logger,
    tankReleaseTimer: options.tank !== 'plain-relay',
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.tokenTtlSeconds !== undefined ? { tokenTtlSeconds: options.tokenTtlSeconds } : {}),
  });
  const config = structuredClone(env.config);
  config.log = { level: 'info' };

  let broker: TestBroker | undefined;
  let charger: GoeSim = env.charger;
  let shelly: ShellySim | undefined;
  const stopOwn: (() => Promise<void>)[] = [];
  const secrets = [String(env.config.spark.clientSecret)];
  if (options.ownBroker || options.plugs || options.tank === 'shelly') {
    const own: OwnBroker =
      options.ownBroker === 'mosquitto' ? await mosquittoWorldBroker() : { broker: await startAedes(), clientOptions: {}, mqtt: {} };
    broker = own.broker;
    config.mqtt = { ...(config.mqtt as object), url: broker.url, ...own.mqtt } as ConfigInput['mqtt'];
    if (own.mqtt.password) secrets.push(own.mqtt.password);
    const stepMs = options.chargerStepMs ?? 30_000;
    const follow = async (sim: GoeSim | ShellySim): Promise<void> => {
      await sim.start();
      const abort = new AbortController();
      const running = sim.run(clock, stepMs, abort.signal).catch(() => undefined);
      stopOwn.push(async () => {
        abort.abort();
        await running;
        await sim.close().catch(() => undefined);
      });
    };
    const startMs = options.startMs;
    const plugs =
      options.plugs ??
      [0, 1].map((day) => ({
        atMs: localAt(startMs, day, 17, 30),
        untilMs: localAt(startMs, day + 1, 7, 30),
        battery: { capacityKwh: 60, socPct: 35, targetSocPct: 100, efficiency: 0.9 },
      }));
    // The simulators start where the clock is now, so their hourly truth covers exactly what they metered.
    const clientOptions: IClientOptions = { reconnectPeriod: 200, ...own.clientOptions };
    charger = createGoeSim({
      url: broker.url,
      topicPrefix: goeTopic,
      startMs: clock.nowMs(),
      phases: 3,
      amp: 16,
      maxCurrentA: 16,
      plugs,
      clientOptions,
    });
    await follow(charger);
    if (options.tank === 'shelly') {
      shelly = createShellySim({
        url: broker.url,
        topicPrefix: shellyTankTopic,
        startMs: clock.nowMs(),
        heaterW: 2000,
        temperatureSensorId: 100,
        tank: { volumeL: 200, initialC: 58, thermostatC: 75 },
        clientOptions,
      });
      await follow(shelly);
      const source = { type: 'shelly' as const, topicPrefix: shellyTankTopic, temperatureSensorId: 100 };
      config.devices = config.devices?.map((d) => (d.kind === 'hotWaterTank' ? { ...d, switch: source, meter: source, thermometer: source } : d));
    }
  }

  let proxy: FaultProxy | undefined;
  if (options.proxy) {
    const origin = env.sandbox.authUrl;
    proxy = await startFaultProxy(origin);
    const swap = (u: string | undefined): string | undefined => (u === undefined ? u : u.replace(origin, proxy!.origin));
    config.spark = {
      ...config.spark,
      baseUrl: swap(config.spark.baseUrl),
      authUrl: swap(config.spark.authUrl),
      forecastUrl: swap(config.spark.forecastUrl),
    } as DirectConfigInput['spark'];
  }

  const { config: parsedDirect } = parseConfig(env.config);
  const spark = createSparkClient({ ...parsedDirect.spark, clock, logger });

  const world: World = {
    startMs: options.startMs,
    speed: options.speed,
    realOriginMs,
    clock,
    dataDir: options.dataDir,
    env,
    config,
    charger,
    shelly,
    broker,
    proxy,
    registration: undefined,
    spark,
    secrets,
    async close() {
      worlds.delete(world);
      await spark.close().catch(() => undefined);
      await proxy?.close().catch(() => undefined);
      for (const stop of stopOwn) await stop();
      await broker?.close().catch(() => undefined);
      await env.close();
    },
  };
  worlds.add(world);
  return world;
}

/** MQTT topic prefix of the Shelly tank (`tank: 'shelly'`). */
export const shellyTankTopic = 'shellyplus1pm-tank';

/** A world's own broker, with what the simulators and the daemon's config need to log in. */
interface OwnBroker {
  broker: TestBroker;
  clientOptions: IClientOptions;
  mqtt: { username?: string; password?: string; ca?: string };
}

/** A Mosquitto process as a restartable world broker. */
async function mosquittoWorldBroker(): Promise<OwnBroker> {
  const m = await startMosquitto();
  const broker: TestBroker = {
    port: m.port,
    url: m.url,
    stop: m.halt,
    start: m.resume,
    async restart() {
      await m.halt();
      await m.resume();
    },
    close: m.stop,
  };
  return {
    broker,
    clientOptions: { username: m.username, password: m.password, ca: readFileSync(m.caFile) },
    mqtt: { username: m.username, password: m.password, ca: m.caFile },
  };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `over` merged into `base`, objects key by key; arrays and other values replace. */
export function deepMerge(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(base[k], v);
  return out;
}

/** Writes world.config (deep-merged with `overrides`; arrays replace) as YAML; returns its path. */
export function writeConfig(world: World, overrides: Record<string, unknown> = {}, file = 'config.yaml'): string {
  const doc = deepMerge(world.config, overrides) as DirectConfigInput;
  const path = join(world.dataDir, file);
  writeFileSync(path, stringify(doc), { mode: 0o600 });
  return path;
}

/** Registers the home with the sandbox (as `wattshift register` would) into the daemon's database. */
export async function registerHome(world: World): Promise<Registration> {
  const { config } = parseConfig(world.env.config);
  const logger = silentLogger();
  const store = openStore({ path: String(world.config.storage?.path ?? config.storage.path), logger, clock: world.clock });
  try {
    const { registration } = await register(config, { spark: world.spark, store, logger, nowMs: world.clock.nowMs() });
    world.registration = registration;
    return registration;
  } finally {
    store.close();
  }
}

export interface SpawnOptions {
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Config file (default: writeConfig(world)). */
  configPath?: string;
  /** Shift the daemon's clock against the world's (an NTP step): + ahead, - behind. */
  clockOffsetMs?: number;
  /** Step the running daemon's clock by `stepMs` at real time `atRealMs` (an NTP step while it runs). */
  clockStep?: { atRealMs: number; stepMs: number };
  /** Run the built bundle in this folder (scripts/build.mjs), as the package ships it, instead of src/ through tsx. */
  bundleDir?: string;
}

/** Starts `wattshift run` as a child process on the world's timeline. */
export function spawnDaemon(world: World, options: SpawnOptions = {}): DaemonProcess {
  return launchDaemon(world, options.configPath ?? writeConfig(world), options);
}

/** The simulated clock a daemon shares with its world: `startMs` at real time `realOriginMs`, `speed`× from there. */
export type Timeline = Pick<World, 'startMs' | 'realOriginMs' | 'speed'>;

/** Starts `wattshift run` with a config file of the caller's own world, on its timeline. */
export function spawnDaemonOn(timeline: Timeline, configPath: string, options: Omit<SpawnOptions, 'configPath'> = {}): DaemonProcess {
  return launchDaemon(timeline, configPath, options);
}

export interface StandbyDaemon extends DaemonProcess {
  /** Resolves once the daemon's code is loaded (start() then costs only the daemon's own start-up). */
  readonly loaded: Promise<void>;
  /** Lets `wattshift run` begin (at once if loaded, else as soon as it is). */
  start(): void;
}

/**
 * A `wattshift run` process that loads its code now and starts only on `start()`: a restart right
 * after a kill, without the second of module loading that a fast clock turns into an hour.
 */
export function spawnStandbyDaemon(world: World, options: SpawnOptions = {}): StandbyDaemon {
  let markLoaded: () => void = () => undefined;
  const loadedLine = new Promise<void>((resolveLoaded) => (markLoaded = resolveLoaded));
  const daemon = launchDaemon(world, options.configPath ?? writeConfig(world), options, (line) => {
    if (line === standbyLoadedLine) markLoaded();
  });
  const loaded = Promise.race([
    loadedLine,
    daemon.exited.then(({ code, signal }) => Promise.reject(new Error(`standby daemon exited (code ${code}, signal ${signal}) before loading`))),
  ]);
  loaded.catch(() => undefined);
  return { ...daemon, loaded, start: () => daemon.child.stdin?.end('start\n') };
}

/** What test/helpers/standby-preload.ts writes on stderr once the code is loaded. */
const standbyLoadedLine = 'standby: loaded';

/** Spawns the daemon; with `onStandbyLine` it waits behind the standby preload, stdin open. */
function launchDaemon(
  world: Timeline,
  configPath: string,
  options: Omit<SpawnOptions, 'configPath'>,
  onStandbyLine?: (stderrLine: string) => void,
): DaemonProcess {
  const standby = onStandbyLine !== undefined;
  const simStart = world.startMs + (options.clockOffsetMs ?? 0);
  const preload = standby ? ['--import', join(repoRoot, 'test/helpers/standby-preload.ts')] : [];
  // With the service's node flags and environment: the tests run what systemd runs.
  const entry =
    options.bundleDir !== undefined ? [join(options.bundleDir, 'main.js')] : ['--import', 'tsx', ...preload, join(repoRoot, 'src/main.ts')];
  const child = spawn(process.execPath, [...unitNodeFlags(), ...entry, 'run', '--config', configPath], {
    cwd: repoRoot,
    env: {
      ...process.env,
      ...unitEnvironment(),
      WATTSHIFT_SIM_CLOCK: `${simStart},${world.realOriginMs},${world.speed}${options.clockStep ? `,${options.clockStep.atRealMs},${options.clockStep.stepMs}` : ''}`,
      ...options.env,
    },
    stdio: [standby ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  const logs: DaemonLogLine[] = [];
  const rawOutput: string[] = [];
  const waiters = new Set<{ predicate: (l: DaemonLogLine) => boolean; resolve: (l: DaemonLogLine) => void }>();
  const onLines = (stream: NodeJS.ReadableStream, json: boolean): void => {
    let buffer = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.length === 0) continue;
        rawOutput.push(line);
        if (!json) {
          onStandbyLine?.(line);
          continue;
        }
        let parsed: DaemonLogLine;
        try {
          parsed = JSON.parse(line) as DaemonLogLine;
        } catch {
          continue;
        }
        logs.push(parsed);
        for (const w of [...waiters]) {
          if (w.predicate(parsed)) {
            waiters.delete(w);
            w.resolve(parsed);
          }
        }
      }
    });
  };
  onLines(child.stdout!, true);
  onLines(child.stderr!, false);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) => {
    child.once('exit', (code, signal) => resolveExit({ code, signal }));
  });
  const daemon: DaemonProcess = {
    child,
    pid: child.pid ?? -1,
    logs,
    rawOutput,
    exited,
    waitForLog(predicate, timeoutMs = 30_000) {
      const found = logs.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolveLog, reject) => {
        const w = { predicate, resolve: (l: DaemonLogLine) => (clearTimeout(timer), resolveLog(l)) };
        const timer = setTimeout(() => {
          waiters.delete(w);
          reject(new Error(`no matching daemon log line within ${timeoutMs} ms; last lines:\n${rawOutput.slice(-15).join('\n')}`));
        }, timeoutMs);
        waiters.add(w);
        void exited.then(({ code, signal }) => {
          if (!waiters.has(w)) return;
          waiters.delete(w);
          clearTimeout(timer);
          reject(
            new Error(`daemon exited (code ${code}, signal ${signal}) before a matching log line; last lines:\n${rawOutput.slice(-15).join('\n')}`),
          );
        });
      });
    },
    kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
  daemons.add(daemon);
  void exited.then(() => daemons.delete(daemon));
  return daemon;
}

/** Waits (in real time) until the world's clock reads at least `ms`. */
export async function waitUntilSim(world: World, ms: number): Promise<void> {
  for (;;) {
    const left = ms - world.clock.nowMs();
    if (left <= 0) return;
    await realSleep(left / world.speed + 1);
  }
}

/** Local (Europe/Oslo) time `hh:mm` of `day` days after the world's start day, UTC ms. */
export function localTime(world: Pick<World, 'startMs'>, day: number, hh: number, mm = 0): number {
  return localAt(world.startMs, day, hh, mm);
}

export interface TruthSample {
  atMs: number;
  tankC: number;
  tankPowerW: number;
  /** All the element's energy so far (the simulator's own integral, never reset), kWh. */
  tankEnergyKwh: number;
  tankBlocked: boolean;
  tankLeaseS: number;
  chargerPowerW: number;
}

/** Samples the simulators' truth every `everySimMs` of simulated time until stopped. */
export function sampleTruth(world: World, everySimMs = 60_000): { samples: TruthSample[]; stop(): void } {
  const samples: TruthSample[] = [];
  const timer = setInterval(
    () => {
      const atMs = world.clock.nowMs();
      const s = world.shelly;
      const tank = s
        ? // The Shelly's relay blocks when off (the default wiring); its lease is a pending toggle_after.
          {
            tankC: s.temperatureC,
            tankPowerW: s.powerW,
            tankEnergyKwh: s.energyWh / 1000,
            tankBlocked: !s.output,
            tankLeaseS: s.toggleAtMs === undefined ? 0 : (s.toggleAtMs - s.nowMs) / 1000,
          }
        : (({ tempC, powerW, trueEnergyKwh, blocked, leaseRemainingS }) => ({
            tankC: tempC,
            tankPowerW: powerW,
            tankEnergyKwh: trueEnergyKwh,
            tankBlocked: blocked,
            tankLeaseS: leaseRemainingS,
          }))(world.env.tank.state());
      samples.push({ atMs, ...tank, chargerPowerW: world.charger.powerW });
    },
    Math.max(5, everySimMs / world.speed),
  );
  return { samples, stop: () => clearInterval(timer) };
}

/**
 * Wall-clock seconds by which a busy machine may stamp a reading late: a reading is stamped when
 * its answer is handled. CI has shown 0.17 s at load 3.9. On a fast simulated clock that is
 * simulated minutes (0.4 s at 800× is five); in the field (1×) it is nothing.
 */
const stampLagWallS = 0.4;

/** What a `kw` load draws during that lag at the world's speed: how much energy a late stamp can move across an hour boundary. */
export function stampLagKwh(world: World, kw: number): number {
  return (kw * stampLagWallS * world.speed) / 3600;
}

/** What the report and truth checks read of a home: the harness's world, or a home on the simulation kernel. */
export type CheckedHome = Pick<World, 'registration' | 'config' | 'env' | 'charger' | 'shelly'>;

/** The tank's and the charger's hourly ground truth, kWh by UTC hour start. */
export function truthByHour(world: CheckedHome): { tank: Map<number, number>; car: Map<number, number> } {
  return { tank: world.shelly?.energyKwhByHour() ?? world.env.tank.physics.hourlyTruthKwh(), car: world.charger.energyKwhByHour() };
}

/** Kills every daemon still running (SIGKILL) and closes every world. */
export async function stopAll(): Promise<void> {
  for (const d of [...daemons]) {
    d.kill('SIGKILL');
    await Promise.race([d.exited, realSleep(5000)]);
  }
  for (const w of [...worlds]) await w.close().catch(() => undefined);
}

export { hourMs };

export interface ReportCheck {
  /** Human-readable problems: kWh off truth, hours missing, duplicates. */
  problems: string[];
  /** Accepted usage reports (EnergyUsage payloads) per event id. */
  usageByEvent: Map<string, number>;
  /** Accepted LPC acknowledgements per event id, with when they were accepted. */
  acksByEvent: Map<string, number[]>;
  /** Usage points compared with truth. */
  pointsCompared: number;
}

/**
 * Compares every report the sandbox accepted for this world's partner with the simulators' ground
 * truth: each EnergyUsage point within 0.1 % of the hour's truth plus half a Wh (the reports round
 * to the Wh), every hour the event names with consumption present (unless listed in
 * `gapHours`), and no event with two usage reports.
 */
export function checkReports(
  world: CheckedHome,
  options: {
    /** Hours the daemon could not read in full (gap/partial): reported kWh may only be lower. */
    gapHours?: ReadonlySet<number>;
    /** Hours not compared at all (e.g. interpolated across a restart): only duplicates are checked. */
    skipHours?: ReadonlySet<number>;
    relTol?: number;
    /**
     * Absolute per-hour tolerance by device id, kWh (default half a Wh, the reports' resolution).
     * A pushed (MQTT) counter is metered when the daemon takes its message in; on a fast clock a
     * CPU stall of the daemon delays that by simulated seconds, so an hour boundary can move
     * energy by power × stall between two hours; the sum over the event can then only be off by
     * that at its two outer boundaries.
     */
    absTolKwh?: Record<string, number>;
    /**
     * Allow an LPC acknowledgement accepted more than once, as long as every copy says the same:
     * one sent again after a crash cut off the API's answer (the API keeps each copy and offers no
     * way to ask what it holds, so at-least-once delivery cannot avoid it).
     */
    repeatedAcks?: boolean;
  } = {},
): ReportCheck {
  const reg = world.registration;
  if (!reg) throw new Error('registerHome first');
  const relTol = options.relTol ?? 0.001;
  const byResource = new Map(Object.entries(reg.resources).map(([device, res]) => [res, device]));
  const truth = truthByHour(world);
  const events = new Map(world.env.sandbox.events(String(world.config.spark.clientId)).map((e) => [e.id, e]));
  const problems: string[] = [];
  const usageByEvent = new Map<string, number>();
  const acksByEvent = new Map<string, number[]>();
  const ackContents = new Map<string, Set<string>>();
  let pointsCompared = 0;
  for (const r of world.env.sandbox.acceptedReports(String(world.config.spark.clientId))) {
    const usage = r.payloads.filter((p) => p.payloadType === 'EnergyUsage' || p.payloadType === 'LocationEnergyUsage');
    if (r.payloads.some((p) => p.payloadType.endsWith('LPCAcknowledgement'))) {
      acksByEvent.set(r.eventId, [...(acksByEvent.get(r.eventId) ?? []), r.createdAtMs]);
      ackContents.set(r.eventId, (ackContents.get(r.eventId) ?? new Set()).add(JSON.stringify(r.payloads.map((p) => p.raw))));
    }
    if (usage.length === 0) continue;
    usageByEvent.set(r.eventId, (usageByEvent.get(r.eventId) ?? 0) + 1);
    const ev = events.get(r.eventId);
    for (const p of usage) {
      const device = p.resourceId ? byResource.get(p.resourceId) : undefined;
      if (device !== 'tank' && device !== 'car') {
        problems.push(`event ${r.eventId}: usage for unknown resource ${String(p.resourceId)}`);
        continue;
      }
      const hours = device === 'tank' ? truth.tank : truth.car;
      const seen = new Set<number>();
      let reportedSum = 0;
      for (const pt of p.points) {
        pointsCompared++;
        if (seen.has(pt.timestampMs)) problems.push(`event ${r.eventId} ${device}: hour ${new Date(pt.timestampMs).toISOString()} twice`);
        seen.add(pt.timestampMs);
        const t = hours.get(pt.timestampMs) ?? 0;
        // The metered hour may be off the truth by the relative tolerance, and the report rounds it to the Wh.
        const tol = relTol * t + (options.absTolKwh?.[device] ?? 0.0005);
        if (options.skipHours?.has(pt.timestampMs)) continue;
        if (options.gapHours?.has(pt.timestampMs)) {
          // An hour the daemon could not read in full: a lower bound.
          if (pt.kiloWattHours > t + tol)
            problems.push(
              `event ${r.eventId} ${device} ${new Date(pt.timestampMs).toISOString()}: partial hour reported ${pt.kiloWattHours} kWh, above truth ${t.toFixed(5)}`,
            );
          continue;
        }
        reportedSum += pt.kiloWattHours;
        if (Math.abs(pt.kiloWattHours - t) > tol) {
          problems.push(
            `event ${r.eventId} ${device} ${new Date(pt.timestampMs).toISOString()}: reported ${pt.kiloWattHours} kWh, truth ${t.toFixed(5)}`,
          );
        }
      }
      if (ev) {
        const evHours = eventHoursOf(ev);
        let truthSum = 0;
        for (const [h, kwh] of hours) if (evHours.has(h) && !options.gapHours?.has(h) && !options.skipHours?.has(h)) truthSum += kwh;
        // Only the outer boundaries of each run of event hours can move energy in or out of the sum.
        const runs = [...evHours].filter((h) => !evHours.has(h - hourMs)).length;
        const edgeTol = 2 * runs * (options.absTolKwh?.[device] ?? 0.0005) + 0.0005 * p.points.length;
        if (Math.abs(reportedSum - truthSum) > Math.max(relTol * truthSum, edgeTol)) {
          problems.push(`event ${r.eventId} ${device}: ${reportedSum.toFixed(4)} kWh reported over the event, truth ${truthSum.toFixed(4)}`);
        }
        for (const [h, kwh] of hours) {
          if (!evHours.has(h) || kwh < 0.0005 || seen.has(h) || options.gapHours?.has(h) || options.skipHours?.has(h)) continue;
          problems.push(`event ${r.eventId} ${device}: hour ${new Date(h).toISOString()} with ${kwh.toFixed(4)} kWh missing from the report`);
        }
      }
    }
  }
  for (const [eventId, n] of usageByEvent) if (n > 1) problems.push(`event ${eventId}: ${n} usage reports accepted`);
  for (const [eventId, at] of acksByEvent) {
    const copies = options.repeatedAcks ? ackContents.get(eventId)!.size : at.length;
    if (copies > 1) problems.push(`event ${eventId}: ${copies} ${options.repeatedAcks ? 'different ' : ''}LPC acknowledgements accepted`);
  }
  return { problems, usageByEvent, acksByEvent, pointsCompared };
}

/**
 * The hours an event's points name (a price curve's deltas, an LPC's caps): its report covers
 * these, not every hour of its span (a daily curve names only its cheap and dear hours).
 */
function eventHoursOf(ev: EventRec): Set<number> {
  const payload = ev.payload as { priceCurveDelta?: { points?: { timestamp: string }[] }; targets?: { points?: { timestamp: string }[] }[] };
  const points = [...(payload.priceCurveDelta?.points ?? []), ...(payload.targets ?? []).flatMap((t) => t.points ?? [])];
  return new Set(points.map((pt) => Date.parse(pt.timestamp)).filter((h) => h % hourMs === 0 && h >= ev.coverFromMs && h < ev.coverToMs));
}

/** Lines of everything a daemon wrote that contain one of the world's secrets. */
export function secretLeaks(
  world: Pick<World, 'secrets'>,
  daemonsToCheck: readonly Pick<DaemonProcess, 'rawOutput'>[],
  extra: readonly string[] = [],
): string[] {
  const secrets = [...world.secrets, ...extra].filter((s) => s.length >= 4);
  return daemonsToCheck.flatMap((d) => d.rawOutput.filter((line) => secrets.some((s) => line.includes(s))));
}
