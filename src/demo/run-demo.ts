/**
 * `wattshift demo`: the real daemon on embedded defaults, on an accelerated clock, against the
 * sandbox and simulated devices speaking real Modbus TCP and MQTT. One line per simulated hour,
 * then a summary; the last line is the summary as JSON.
 */
import type { BillView } from '../view/model.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { acceleratedClock } from '../clock.js';
import { createLogger, type Logger } from '../log.js';
import { parseConfig } from '../config/load.js';
import { buildApp } from '../app.js';
import { createSparkClient } from '../spark/client.js';
import { openStore } from '../store/index.js';
import { register } from '../registration.js';
import { profileMDraws } from '../sandbox/devices/tank-physics.js';
import type { ControlSnapshot } from '../jobs/control-loop.js';
import type { Plan } from '../core/types.js';
import { localAt, startDemoEnvironment, type DemoEnvironment } from './environment.js';
import { capMark, naiveCharging, spreadByWeight, summarise, type DemoSummary, type HourRecord } from './summary.js';

const hourMs = 3_600_000;

export interface DemoOptions {
  /** Simulated start (default: a January day, 10:00 in Oslo). */
  startMs?: number;
  /** Simulated hours to run (default 40: two evenings, two nights, two daily curves). */
  hours?: number;
  /** Clock speed factor (default 1200: an hour in 3 s). */
  speed?: number;
  out: (line: string) => void;
  dataDir?: string;
  logger?: Logger;
  /** Whether the database and log stay after the demo (`--keep-data`): only then is the log's path worth printing. */
  keepData?: boolean;
}

export interface DemoResult {
  summary: DemoSummary;
  hours: HourRecord[];
  /** The daemon's own month bill at its main meter at the end (null: no hour priced). */
  bill: BillView | null;
  env: DemoEnvironment;
  dataDir: string;
}

function fmtLocal(ms: number): string {
  return new Intl.DateTimeFormat('sv-SE', { timeZone: 'Europe/Oslo', dateStyle: 'short', timeStyle: 'short' }).format(new Date(ms));
}

function slotOf(plan: Plan | null, ms: number): Plan['slots'][number] | undefined {
  return plan?.slots.find((s) => s.startMs <= ms && ms < s.endMs);
}

export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const startMs = options.startMs ?? localAt(Date.UTC(2026, 0, 14, 12), 0, 10);
  const totalHours = options.hours ?? 40;
  const speed = options.speed ?? 1200;
  const clock = acceleratedClock(startMs, speed);
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'wattshift-demo-'));
  const logFile = join(dataDir, 'wattshift.log');
  const logger = options.logger ?? createLogger({ level: 'info', destination: pino.destination({ dest: logFile, sync: false, mkdir: true }) });
  const out = options.out;

  const where = options.keepData ? `logs in ${logFile}` : 'its log and database are removed at the end (--keep-data keeps them)';
  out(`wattshift demo: ${totalHours} simulated hours from ${fmtLocal(startMs)} (Europe/Oslo); ${where}`);
  out("Each hour: the price the plan used (NOK/kWh, fees and VAT in) and its Δ, the incentive of the programme's price events");
  out("(negative: a reward for using power then), what the tank and the car took, the tank's temperature, and any cap.");
  const env = await startDemoEnvironment({ clock, startMs, dataDir, logger, mainMeter: true });
  try {
    return await runInEnvironment(env, { startMs, totalHours, clock, speed, dataDir, logger, out });
  } catch (err) {
    await env.close();
    throw err;
  }
}

async function runInEnvironment(
  env: DemoEnvironment,
  o: {
    startMs: number;
    totalHours: number;
    clock: ReturnType<typeof acceleratedClock>;
    speed: number;
    dataDir: string;
    logger: Logger;
    out: (line: string) => void;
  },
): Promise<DemoResult> {
  const { startMs, totalHours, clock, speed, dataDir, logger, out } = o;
  const { config } = parseConfig(env.config);
  out(`sandbox ${env.sandbox.baseUrl} · broker ${env.broker.url} · tank on modbus tcp://${env.tank.host}:${env.tank.port}`);

  // Register the home (idempotent), as `wattshift register` would.
  const spark = createSparkClient({ ...config.spark, clock, logger });
  const regStore = openStore({ path: config.storage.path, logger, clock });
  const { registration, changes } = await register(config, { spark, store: regStore, logger, nowMs: clock.nowMs() });
  regStore.close();
  out(`registered: ${changes.join(', ') || 'nothing to do'}`);

  // One power-limitation event: the tank must stay off from 17:00 to 20:00 tomorrow.
  const lpcAtMs = localAt(startMs, 0, 14);
  const lpcHours = [17, 18, 19].map((h) => localAt(startMs, 1, h));
  const tankResource = registration.resources['tank']!;

  const records = new Map<number, HourRecord>();
  let floorViolations = 0;
  let capViolations = 0;
  let lastHour = Math.floor(startMs / hourMs) * hourMs;
  let plan: Plan | null = null;
  let lpcSent = false;
  // The price each hour was planned with, taken while the hour runs (later plans start after it).
  const hourPrices = new Map<number, { price: number; delta: number }>();
  // The caps the daemon held in each hour, as its view shows them (lowest cap per device).
  const hourCaps = new Map<number, Record<string, number>>();
  const names = Object.fromEntries(config.devices.map((d) => [d.id, d.name ?? d.id]));

  const printHour = (hourStartMs: number, snap: ControlSnapshot): void => {
    const tankTruth = env.tank.physics.hourlyTruthKwh().get(hourStartMs) ?? 0;
    const carTruth = env.charger.energyKwhByHour().get(hourStartMs) ?? 0;
    const slot = hourPrices.get(hourStartMs);
    const caps = hourCaps.get(hourStartMs);
    records.set(hourStartMs, {
      hourStartMs,
      price: slot?.price ?? null,
      delta: slot?.delta ?? 0,
      tankKwh: tankTruth,
      carKwh: carTruth,
      baselineKwh: 0,
      ...(caps ? { caps } : {}),
    });
    const tankC = snap.readings.get('tank')?.temperatureC;
    const ev = snap.readings.get('car')?.ev;
    const carState = ev === undefined ? '?' : ev.plugged ? (ev.charging ? 'charging' : 'plugged') : 'away';
    const price = slot ? `${slot.price.toFixed(2)} NOK/kWh Δ ${slot.delta >= 0 ? '+' : ''}${slot.delta.toFixed(2)}` : 'no plan yet';
    const avgKw = (tankTruth + carTruth).toFixed(1);
    out(
      `${fmtLocal(hourStartMs)}  ${price.padEnd(26)}  tank ${tankTruth > 0.01 ? 'heat' : 'idle'} ${tankTruth.toFixed(2)} kWh ` +
        `${tankC !== undefined ? tankC.toFixed(1) : '  ? '} °C  car ${carState} ${carTruth.toFixed(2)} kWh  devices ${avgKw} kW` +
        `${snap.capKw < config.site.locationLimitKw ? `  cap ${snap.capKw} kW` : ''}${capMark(caps)}`,
    );
  };

  const app = buildApp(config, {
    logger,
    clock,
    controlTickMs: 60_000,
    deviceTimeoutMs: 2_000 * speed,
    planInWorker: true,
    onControlTick: (snap) => {
      plan = app.currentPlan();
      const current = slotOf(plan, snap.atMs);
      const thisHour = Math.floor(snap.atMs / hourMs) * hourMs;
      if (current && !hourPrices.has(thisHour)) hourPrices.set(thisHour, { price: current.price, delta: current.delta });
      for (const l of app.view().limits.filter((x) => x.active)) {
        const caps = hourCaps.get(thisHour) ?? {};
        const who = l.deviceId === null ? 'home' : (names[l.deviceId] ?? l.deviceId);
        caps[who] = Math.min(caps[who] ?? Infinity, l.capKw);
        hourCaps.set(thisHour, caps);
      }
      const truth = env.tank.state();
      if (truth.tempC < 45 - 0.5) floorViolations++;
      if (lpcHours.some((h) => h <= snap.atMs && snap.atMs < h + hourMs) && truth.powerW > 0) capViolations++;
      const hour = Math.floor(snap.atMs / hourMs) * hourMs;
      if (hour !== lastHour) {
        printHour(lastHour, snap);
        lastHour = hour;
      }
      if (!lpcSent && snap.atMs >= lpcAtMs) {
        lpcSent = true;
        void spark
          .simulateResourceLpc({
            resources: [
              {
                resource: { resourceId: tankResource, locationId: registration.locationId },
                points: lpcHours.map((h) => ({ timestamp: new Date(h).toISOString(), maxPowerInKiloWatts: 0 })),
              },
            ],
          })
          .then(() => out(`-- power-limitation event sent: tank capped at 0 kW ${fmtLocal(lpcHours[0]!)}–${fmtLocal(lpcHours.at(-1)! + hourMs)}`))
          .catch((err: unknown) => out(`-- could not send the LPC event: ${String(err)}`));
      }
    },
  });
  await app.start();
  await clock.sleep(totalHours * hourMs - (clock.nowMs() - startMs));
  const bill = app.view().bill ?? null;
  await app.stop();

  const hours = [...records.values()].sort((a, b) => a.hourStartMs - b.hourStartMs);
  addBaseline(hours, env);
  const store = openStore({ path: config.storage.path, logger, clock });
  const rejected = store.listReports({ states: ['rejected'] }).length;
  store.close();
  const accepted = env.sandbox.acceptedReports(config.spark.clientId).length;
  const summary = summarise(hours, { reportsAccepted: accepted, reportsRejected: rejected, floorViolations, capViolations });
  await spark.close();
  return { summary, hours, bill, env, dataDir };
}

/** The baseline's hourly energy: the same energy, naive timing (tank right after each draw, car from its arrival). */
function addBaseline(hours: HourRecord[], env: DemoEnvironment): void {
  const tankTotal = hours.reduce((s, h) => s + h.tankKwh, 0);
  const drawWeights = hours.map((h) => {
    const minuteStart = (h.hourStartMs % 86_400_000) / 60_000;
    return profileMDraws.filter((d) => d.minuteOfDay >= minuteStart && d.minuteOfDay < minuteStart + 60).reduce((s, d) => s + d.kwh, 0);
  });
  const tank = spreadByWeight(tankTotal, drawWeights);
  const car = naiveCharging(hours, env.carSessions, env.chargerKw);
  hours.forEach((h, idx) => (h.baselineKwh = tank[idx]! + car[idx]!));
}
