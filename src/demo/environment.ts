/**
 * The world the demo daemon lives in: the API sandbox, an embedded MQTT broker, a simulated hot
 * water tank on Modbus TCP and a simulated go-e charger with a car on MQTT, all on one clock; for
 * the demo also a main meter (an AMS reader on the HAN port) counting the house and both devices.
 * The same environment serves the end-to-end tests.
 */
import { join } from 'node:path';
import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { DirectConfigInput } from '../config/schema.js';
import { startSandbox, type Sandbox } from '../sandbox/server.js';
import { startSimulatedTank, type SimulatedTank } from '../sandbox/devices/modbus-tank.js';
import { createGoeSim, type GoeSim, type GoeSimPlug } from '../sandbox/devices/goe-sim.js';
import { createAmsReaderSim, type AmsReaderSim } from '../sandbox/devices/amsreader-sim.js';
import { localParts, localTimeToUtcMs } from '../core/zoned-time.js';
import { startEmbeddedBroker, type EmbeddedBroker } from './broker.js';

export const demoTimezone = 'Europe/Oslo';
/** A point inside the sandbox's first test area (Longyearbyen). */
export const demoCoordinates = { latitude: 78.22094, longitude: 15.61946 };
export const demoMeterPointId = '707057500000000001';
export const goeTopic = 'go-eCharger/demo01';
export const amsTopic = 'ams/demo01';

/** The house's own draw by local hour, W: low at night, the morning and the evening peaks. */
export function houseLoadW(atMs: number): number {
  const hour = localParts(atMs, demoTimezone).hour;
  if (hour < 6) return 350;
  if (hour < 9) return 1400;
  if (hour < 16) return 600;
  if (hour < 21) return 1800;
  return 800;
}

export interface DemoEnvironment {
  sandbox: Sandbox;
  broker: EmbeddedBroker;
  tank: SimulatedTank;
  charger: GoeSim;
  /** The main meter, when asked for: the house ({@link houseLoadW}) plus the tank and the charger. */
  mainMeter: AmsReaderSim | null;
  /** When the car is plugged in: each evening's arrival and the next morning's departure. */
  carSessions: { fromMs: number; untilMs: number }[];
  /** The charger's full power, kW (what a naive home charges at from arrival). */
  chargerKw: number;
  /** The daemon's config (to be parsed), pointing at this environment. */
  config: DirectConfigInput;
  close(): Promise<void>;
}

/** Local wall-clock time of `day` (0 = the start day) as UTC ms. */
export function localAt(startMs: number, day: number, hh: number, mm = 0): number {
  const p = localParts(startMs, demoTimezone);
  return localTimeToUtcMs(p.year, p.month, p.day + day, hh, demoTimezone, mm);
}

export async function startDemoEnvironment(options: {
  clock: Clock;
  startMs: number;
  dataDir: string;
  logger: Logger;
  seed?: number;
  /** The tank's relay board has a release timer (default); false: a plain board, no device lease. */
  tankReleaseTimer?: boolean;
  /** Lifetime of the sandbox's access tokens, seconds of the clock (default one hour, as the API's). */
  tokenTtlSeconds?: number;
  /** Adds the main meter (default false: the end-to-end tests meter the devices only). */
  mainMeter?: boolean;
  /** The go-e charger's plug-ins (default: one car home each evening of two nights, leaving at 07:30). */
  carPlugs?: (GoeSimPlug & { untilMs: number })[];
}): Promise<DemoEnvironment> {
  const { clock, startMs } = options;
  const sandbox = await startSandbox({
    clock,
    seed: options.seed ?? 7,
    logger: options.logger.child({ component: 'sandbox' }),
    ...(options.tokenTtlSeconds !== undefined ? { tokenTtlSeconds: options.tokenTtlSeconds } : {}),
  });
  const broker = await startEmbeddedBroker();
  const plainRelay = options.tankReleaseTimer === false;
  const tank = await startSimulatedTank({
    clock,
    startMs,
    initialC: 58,
    params: { volumeL: 200, elementKw: 2, thermostatC: 75 },
    releaseTimer: !plainRelay,
  });
  // The car comes home in the evening and leaves in the morning, both nights.
  const plugs =
    options.carPlugs ??
    [0, 1].map((day) => ({
      atMs: localAt(startMs, day, 17, 30),
      untilMs: localAt(startMs, day + 1, 7, 30),
      battery: { capacityKwh: 60, socPct: 35, targetSocPct: 100, efficiency: 0.9 },
    }));
  const charger = createGoeSim({ url: broker.url, topicPrefix: goeTopic, startMs, phases: 3, amp: 16, maxCurrentA: 16, plugs });
  await charger.start();
  const stopCharger = new AbortController();
  const chargerRun = charger.run(clock, 30_000, stopCharger.signal).catch(() => undefined);
  const mainMeter = options.mainMeter
    ? createAmsReaderSim({
        url: broker.url,
        topic: amsTopic,
        startMs,
        importKwh: 18_250,
        load: (atMs) => ({ importW: houseLoadW(atMs) + tank.state().powerW + charger.powerW }),
      })
    : null;
  await mainMeter?.start();
  const meterRun = mainMeter?.run(clock, 10_000, stopCharger.signal).catch(() => undefined);

  const credentials = sandbox.credentials[0]!;
  const config: DirectConfigInput = {
    version: 1,
    site: {
      timezone: demoTimezone,
      priceArea: 'NO4',
      currency: 'NOK',
      locationLimitKw: 17,
      gridFeePerKwh: 0.3,
      taxPerKwh: 0.1,
      vatPct: 25,
      exchangeRates: { EUR: 11.5 },
    },
    spark: {
      baseUrl: sandbox.baseUrl,
      forecastUrl: sandbox.forecastUrl,
      authUrl: sandbox.authUrl,
      clientId: credentials.clientId,
      clientSecret: credentials.clientSecret,
      userId: 'demo-user',
      locationId: 'demo-home',
      meterPointIds: [demoMeterPointId],
      coordinates: demoCoordinates,
    },
    events: { pollIntervalS: 300 },
    mqtt: { url: broker.url, baseTopic: 'wattshift', clientId: 'wattshift-demo' },
    modbus: { sim: { type: 'tcp', host: tank.host, port: tank.port, timeoutMs: 2000 } },
    devices: [
      {
        id: 'tank',
        name: 'Hot water tank',
        kind: 'hotWaterTank',
        staleAfterS: 900,
        // A plain board is a Waveshare-style relay (coil 0, no timer) with an SDM120 on the element.
        switch: { type: 'modbus', bus: 'sim', unitId: 1, profile: plainRelay ? 'generic-relay' : 'wattshift-sim-tank' },
        meter: { type: 'modbus', bus: 'sim', unitId: 1, profile: plainRelay ? 'eastron-sdm120' : 'wattshift-sim-tank' },
        thermometer: { type: 'modbus', bus: 'sim', unitId: 1, profile: 'wattshift-sim-tank' },
        model: { volumeL: 200, elementKw: 2, floorC: 45, maxC: 75, legionella: { enabled: true, tempC: 60, intervalDays: 7 } },
      },
      {
        id: 'car',
        name: 'EV charger',
        kind: 'evCharger',
        staleAfterS: 900,
        charger: { type: 'goe', topicPrefix: goeTopic },
        safeCurrentA: 6,
        model: { capacityKwh: 60, targetEnergyKwh: 25, departure: '07:00', minCurrentA: 6, maxCurrentA: 16, phases: 3 },
      },
      ...(mainMeter
        ? [
            {
              id: 'home',
              name: 'Main meter',
              kind: 'meter' as const,
              staleAfterS: 900,
              meter: { type: 'amsreader' as const, topic: amsTopic },
              model: { main: true },
            },
          ]
        : []),
    ],
    storage: { path: join(options.dataDir, 'wattshift.db') },
    http: { enabled: false },
    log: { level: 'info' },
  };

  return {
    sandbox,
    broker,
    tank,
    charger,
    mainMeter,
    carSessions: plugs.map((p) => ({ fromMs: p.atMs, untilMs: p.untilMs })),
    chargerKw: (3 * 230 * 16) / 1000,
    config,
    async close() {
      stopCharger.abort();
      await chargerRun;
      await meterRun;
      await mainMeter?.close().catch(() => undefined);
      await charger.close().catch(() => undefined);
      await tank.close().catch(() => undefined);
      await broker.close().catch(() => undefined);
      await sandbox.close().catch(() => undefined);
    },
  };
}
