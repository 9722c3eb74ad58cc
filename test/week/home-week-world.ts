/**
 * The week-long home of issue 17's done-when test, every part a real peer on one accelerated clock:
 * the API sandbox; an MQTT broker; a go-e charger (MQTT) and an OCPP 1.6J charge point; two cars
 * that come and go on weekday schedules, each telling its state of charge over MQTT as TeslaMate
 * does; a hot water tank on Modbus TCP; an AMS reader on the HAN port of the main meter; a
 * 3×230 V IT supply behind a 25 A main fuse.
 *
 * The cars are followed over the whole week (one battery each across plug-ins): the road empties
 * them, the chargers fill them, and their state of charge at each departure is the ground truth.
 */
import { join } from 'node:path';
import type { DirectConfigInput } from '../../src/config/schema.js';
import { localParts } from '../../src/core/zoned-time.js';
import { startEmbeddedBroker, type EmbeddedBroker } from '../../src/demo/broker.js';
import { demoCoordinates, demoMeterPointId, demoTimezone, localAt } from '../../src/demo/environment.js';
import type { Logger } from '../../src/log.js';
import type { Clock } from '../../src/ports.js';
import { createAmsReaderSim, type AmsReaderSim } from '../../src/sandbox/devices/amsreader-sim.js';
import { EvBattery } from '../../src/sandbox/devices/ev-battery.js';
import { createGoeSim, type GoeSim, type GoeSimPlug } from '../../src/sandbox/devices/goe-sim.js';
import { findFreePort, startSimulatedTank, type SimulatedTank } from '../../src/sandbox/devices/modbus-tank.js';
import { createOcppChargePointSim, type OcppChargePointSim } from '../../src/sandbox/devices/ocpp-charge-point-sim.js';
import { createTeslaMateSim, type TeslaMateSim } from '../../src/sandbox/devices/teslamate-sim.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';

export const fuseA = 25;
/** Line-to-line voltage of the IT supply, V. */
export const lineV = 230;
const itW = Math.sqrt(3) * lineV;
/** Most a 3-phase IT supply carries at the fuse, kW (√3·U·I ≈ 9.96 kW). */
export const fuseKw = (itW * fuseA) / 1000;
export const goeTopic = 'go-eCharger/week01';
export const amsTopic = 'ams/week01';
export const ocppPassword = 'week-charge-point-secret';

/** A car's week (day 0 is the Sunday the run starts on): where it charges, its target and weekday departures, and what each trip uses. */
export interface CarPlan {
  id: string;
  teslamateId: number;
  capacityKwh: number;
  startSocPct: number;
  targetSocPct: number;
  /** Cron of its departures (the deadlines its target holds for). */
  departureCron: string;
  /** Local trips of the week: leave (day, hh, mm), back (day, hh, mm), battery energy used, kWh. */
  trips: { leave: [number, number, number]; back: [number, number, number]; kwh: number; deadline: boolean }[];
}

/** Weekday commuter on the go-e charger: leaves 07:30 Monday to Friday, back 17:00; a Saturday outing. */
function commuter(): CarPlan {
  const weekdays = [1, 2, 3, 4, 5].map((d) => ({ leave: [d, 7, 30] as [number, number, number], back: [d, 17, 0] as [number, number, number], kwh: 13, deadline: true }));
  return {
    id: 'car-a', teslamateId: 1, capacityKwh: 60, startSocPct: 30, targetSocPct: 80, departureCron: '30 7 * * 1-5',
    trips: [...weekdays, { leave: [6, 10, 0], back: [6, 15, 0], kwh: 18, deadline: false }],
  };
}

/** Part-time car on the OCPP charge point: leaves 08:15 on Monday, Wednesday and Friday, back 16:00. */
function partTimer(): CarPlan {
  return {
    id: 'car-b', teslamateId: 2, capacityKwh: 40, startSocPct: 45, targetSocPct: 90, departureCron: '15 8 * * 1,3,5',
    trips: [1, 3, 5].map((d) => ({ leave: [d, 8, 15] as [number, number, number], back: [d, 16, 0] as [number, number, number], kwh: 12, deadline: true })),
  };
}

export interface Departure {
  car: string;
  atMs: number;
  targetSocPct: number;
  /** The car's state of charge as it left, %. */
  socPct?: number;
}

export interface WeekWorld {
  clock: Clock;
  sandbox: Sandbox;
  broker: EmbeddedBroker;
  tank: SimulatedTank;
  goe: GoeSim;
  ocpp: OcppChargePointSim;
  han: AmsReaderSim;
  cars: { plan: CarPlan; battery: EvBattery; logger: TeslaMateSim }[];
  departures: Departure[];
  /** Current on each line now, A, from every load's true draw. */
  lineCurrentsA(atMs: number): number[];
  /** Connects the OCPP charge point (after the daemon started). */
  startChargePoint(): Promise<void>;
  config: DirectConfigInput;
  close(): Promise<void>;
}

/** The house's own draw by local hour, W, spread evenly over the three lines. */
export function houseW(atMs: number): number {
  const hour = localParts(atMs, demoTimezone).hour;
  if (hour < 6) return 400;
  if (hour < 9) return 1500;
  if (hour < 16) return 700;
  if (hour < 22) return 1900;
  return 900;
}

export async function startWeekWorld(options: { clock: Clock; startMs: number; dataDir: string; logger: Logger }): Promise<WeekWorld> {
  const { clock, startMs } = options;
  const at = (d: [number, number, number]): number => localAt(startMs, d[0], d[1], d[2]);
  const sandbox = await startSandbox({ clock, seed: 11, logger: options.logger.child({ component: 'sandbox' }) });
  const broker = await startEmbeddedBroker();
  const tank = await startSimulatedTank({ clock, startMs, initialC: 55, params: { volumeL: 200, elementKw: 2, thermostatC: 75 } });

  const plans = [commuter(), partTimer()];
  const cars = plans.map((plan) => ({ plan, battery: new EvBattery({ capacityKwh: plan.capacityKwh, socPct: plan.startSocPct, targetSocPct: 100, efficiency: 0.9 }) }));
  /** At home from the start until the first trip, then between trips, until the week's end. */
  const plugsOf = (car: (typeof cars)[number]): GoeSimPlug[] => {
    const plugs: GoeSimPlug[] = [];
    let fromMs = startMs;
    for (const trip of car.plan.trips) {
      plugs.push({ atMs: fromMs, untilMs: at(trip.leave), battery: car.battery });
      fromMs = at(trip.back);
    }
    plugs.push({ atMs: fromMs, battery: car.battery });
    return plugs;
  };
  const departures: Departure[] = plans.flatMap((p) => p.trips.filter((t) => t.deadline).map((t) => ({ car: p.id, atMs: at(t.leave), targetSocPct: p.targetSocPct })));

  const goe = createGoeSim({ url: broker.url, topicPrefix: goeTopic, startMs, phases: 3, supply: 'IT', amp: 16, maxCurrentA: 16, plugs: plugsOf(cars[0]!) });
  await goe.start();
  const ocppPort = await findFreePort();
  const ocpp = createOcppChargePointSim({
    url: `ws://127.0.0.1:${ocppPort}/ocpp`, identity: 'cp-week', password: ocppPassword, startMs, phases: 3, supply: 'IT', maxCurrentA: 16, plugs: plugsOf(cars[1]!),
  });
  const pluggedAt = [(): boolean => goe.battery === cars[0]!.battery, (): boolean => ocpp.battery === cars[1]!.battery];
  const loggers = cars.map((c, i) => createTeslaMateSim({ url: broker.url, carId: c.plan.teslamateId, battery: c.battery, pluggedIn: pluggedAt[i]! }));
  for (const l of loggers) await l.start();

  /** True current per line, A: the house balanced, the tank between L1 and L2, both chargers on all three. */
  const lineCurrentsA = (atMs: number): number[] => {
    const balanced = (houseW(atMs) + goe.powerW + ocpp.powerW) / itW;
    const tankA = tank.state().powerW / lineV;
    return [balanced + tankA, balanced + tankA, balanced];
  };
  const han = createAmsReaderSim({
    url: broker.url, topic: amsTopic, startMs, importKwh: 31_400, voltageV: lineV,
    load: (atMs) => ({ importW: houseW(atMs) + tank.state().powerW + goe.powerW + ocpp.powerW, currentsA: lineCurrentsA(atMs) }),
  });
  await han.start();

  const stop = new AbortController();
  /** Each car leaves: its SoC once the charger let it go is the ground truth, then the road empties it. */
  const followTrips = async (car: (typeof cars)[number]): Promise<void> => {
    for (const trip of car.plan.trips) {
      await clock.sleep(Math.max(0, at(trip.leave) + 60_000 - clock.nowMs()), stop.signal);
      const departure = departures.find((d) => d.car === car.plan.id && d.atMs === at(trip.leave));
      if (departure) departure.socPct = car.battery.socPct;
      car.battery.drive(trip.kwh);
    }
  };
  const runs = [
    goe.run(clock, 30_000, stop.signal),
    han.run(clock, 10_000, stop.signal),
    ...loggers.map((l) => l.run(clock, 60_000, stop.signal)),
    ...cars.map((car) => followTrips(car)),
  ].map((p) => p.catch(() => undefined));
  /** The charge point connects once the daemon's central system listens, then lives on the clock. */
  const startChargePoint = async (): Promise<void> => {
    await ocpp.start();
    runs.push((async () => {
      while (!stop.signal.aborted) {
        await clock.sleep(30_000, stop.signal);
        await ocpp.advance(clock.nowMs() - ocpp.nowMs);
      }
    })().catch(() => undefined));
  };

  const config: DirectConfigInput = {
    version: 1,
    site: {
      timezone: demoTimezone, priceArea: 'NO4', currency: 'NOK',
      // The plan keeps the home's energy under what the fuse carries; the fuse guard holds each line in real time.
      locationLimitKw: 9,
      gridFeePerKwh: 0.3, taxPerKwh: 0.1, vatPct: 25, exchangeRates: { EUR: 11.5 },
      // The HAN reader sends its currents every 10 s; on the accelerated clock a stall of the shared
      // event loop ages them by more than the default 30 s (25 ms of wall time at 1200×), which would hold the chargers at 6 A.
      fuse: { mainFuseA: fuseA, phases: 3, supply: 'IT', meter: 'han', marginA: 2, raiseAfterS: 60, staleAfterS: 600 },
    },
    spark: {
      baseUrl: sandbox.baseUrl, forecastUrl: sandbox.forecastUrl, authUrl: sandbox.authUrl,
      clientId: sandbox.credentials[0]!.clientId, clientSecret: sandbox.credentials[0]!.clientSecret,
      userId: 'week-user', locationId: 'week-home', meterPointIds: [demoMeterPointId], coordinates: demoCoordinates,
    },
    events: { pollIntervalS: 300 },
    mqtt: { url: broker.url, baseTopic: 'wattshift', clientId: 'wattshift-week' },
    modbus: { tankbus: { type: 'tcp', host: tank.host, port: tank.port, timeoutMs: 2000 } },
    ocpp: { host: '127.0.0.1', port: ocppPort },
    devices: [
      {
        id: 'tank', name: 'Hot water tank', kind: 'hotWaterTank', staleAfterS: 900,
        switch: { type: 'modbus', bus: 'tankbus', unitId: 1, profile: 'wattshift-sim-tank' },
        meter: { type: 'modbus', bus: 'tankbus', unitId: 1, profile: 'wattshift-sim-tank' },
        thermometer: { type: 'modbus', bus: 'tankbus', unitId: 1, profile: 'wattshift-sim-tank' },
        model: { volumeL: 200, elementKw: 2, floorC: 45, maxC: 75, comfort: [{ cron: '0 6 * * *', tempC: 55 }] },
      },
      ...plans.map((p, i) => ({
        id: i === 0 ? 'goe' : 'ocpp', name: i === 0 ? 'Garage charger (go-e)' : 'Driveway charger (OCPP)', kind: 'evCharger' as const, staleAfterS: 900, safeCurrentA: 6,
        charger: i === 0 ? { type: 'goe' as const, topicPrefix: goeTopic } : { type: 'ocpp' as const, chargePointId: 'cp-week', password: ocppPassword },
        soc: { topic: `teslamate/cars/${p.teslamateId}/battery_level`, staleAfterS: 3 * 3600 },
        model: {
          capacityKwh: p.capacityKwh, targetSocPct: p.targetSocPct, departureSchedule: { cron: p.departureCron },
          minCurrentA: 6, maxCurrentA: 16, phases: 3 as const, voltageV: lineV, efficiency: 0.9,
        },
      })),
      { id: 'han', name: 'Main meter (HAN)', kind: 'meter', staleAfterS: 300, meter: { type: 'amsreader', topic: amsTopic }, model: { main: true } },
    ],
    storage: { path: join(options.dataDir, 'wattshift.db') },
    http: { enabled: false },
    log: { level: 'info' },
  };

  return {
    clock, sandbox, broker, tank, goe, ocpp, han,
    cars: cars.map((c, i) => ({ ...c, logger: loggers[i]! })),
    departures,
    lineCurrentsA,
    startChargePoint,
    config,
    async close() {
      stop.abort();
      await Promise.all(runs);
      for (const l of loggers) await l.close().catch(() => undefined);
      await han.close().catch(() => undefined);
      await ocpp.close().catch(() => undefined);
      await goe.close().catch(() => undefined);
      await tank.close().catch(() => undefined);
      await broker.close().catch(() => undefined);
      await sandbox.close().catch(() => undefined);
    },
  };
}
