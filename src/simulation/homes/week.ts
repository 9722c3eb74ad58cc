/**
 * The week-long home, every part a real peer on one accelerated clock:
 * the API sandbox; an MQTT broker; a go-e charger (MQTT) and an OCPP 1.6J charge point; two cars
 * that come and go on weekday schedules, each telling its state of charge over MQTT as TeslaMate
 * does, and recognised at either charger by their cards; a hot water tank on Modbus TCP; an SG Ready
 * heat pump water heater behind a Modbus relay board; an AMS reader on the HAN port of the main meter; a
 * 3×230 V IT supply behind a 25 A main fuse.
 *
 * The cars are followed over the whole week (one battery each across plug-ins): the road empties
 * them, the chargers fill them, and their state of charge at each departure is the ground truth.
 */
import { join } from 'node:path';
import type { DirectConfigInput } from '../../config/schema.js';
import { localParts } from '../../core/zoned-time.js';
import { startEmbeddedBroker, type EmbeddedBroker } from '../../demo/broker.js';
import { demoCoordinates, demoMeterPointId, demoTimezone, localAt } from '../../demo/environment.js';
import type { Logger } from '../../log.js';
import type { Clock } from '../../ports.js';
import { createAmsReaderSim, type AmsReaderSim } from '../../sandbox/devices/amsreader-sim.js';
import { EvBattery } from '../../sandbox/devices/ev-battery.js';
import { createGoeSim, type GoeSim, type GoeSimPlug } from '../../sandbox/devices/goe-sim.js';
import { findFreePort, startSimulatedTank, type SimulatedTank } from '../../sandbox/devices/modbus-tank.js';
import { createOcppChargePointSim, type OcppChargePointSim } from '../../sandbox/devices/ocpp-charge-point-sim.js';
import { startSgReadyHeatPump, type SgReadyHeatPump } from '../../sandbox/devices/sg-ready-heat-pump.js';
import { createTeslaMateSim, type TeslaMateSim } from '../../sandbox/devices/teslamate-sim.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';

export const fuseA = 25;
/** The tank's comfort floor, °C: the water never held off below it. */
export const tankFloorC = 45;
/** Line-to-line voltage of the IT supply, V. */
export const lineV = 230;
const itW = Math.sqrt(3) * lineV;
/** Most a 3-phase IT supply carries at the fuse, kW (√3·U·I ≈ 9.96 kW). */
export const fuseKw = (itW * fuseA) / 1000;
export const goeTopic = 'go-eCharger/week01';
export const amsTopic = 'ams/week01';
export const ocppPassword = 'week-charge-point-secret';

type LocalTime = [day: number, hh: number, mm: number];

/**
 * A car's week (day 0 is the Sunday the run starts on): where it is plugged in, from when until
 * when, what the trip after each stay uses, and whether leaving is a deadline of its schedule.
 */
export interface CarPlan {
  id: string;
  teslamateId: number;
  capacityKwh: number;
  startSocPct: number;
  targetSocPct: number;
  /** Cron of its departures (the deadlines its target holds for). */
  departureCron: string;
  /** Its RFID card: go-e card index and OCPP id tag. */
  card: number;
  idTag: string;
  stays: { at: 'goe' | 'ocpp'; from: LocalTime; until?: LocalTime; tripKwh: number; deadline: boolean }[];
}

/**
 * The commuter: leaves 07:30 Monday to Friday, back 17:00, at the go-e charger; a Saturday outing
 * from 10:00 to 15:00, then the driveway's OCPP charger, since the other car took the garage.
 */
function commuter(): CarPlan {
  const weekdays = [1, 2, 3, 4, 5].map((d) => ({
    at: 'goe' as const,
    from: [d - 1, 17, 0] as LocalTime,
    until: [d, 7, 30] as LocalTime,
    tripKwh: 13,
    deadline: true,
  }));
  weekdays[0]!.from = [0, 12, 0];
  return {
    id: 'car-a',
    teslamateId: 1,
    capacityKwh: 60,
    startSocPct: 30,
    targetSocPct: 80,
    departureCron: '30 7 * * 1-5',
    card: 0,
    idTag: 'CARA0001',
    stays: [
      ...weekdays,
      { at: 'goe', from: [5, 17, 0], until: [6, 10, 0], tripKwh: 18, deadline: false },
      { at: 'ocpp', from: [6, 15, 0], tripKwh: 0, deadline: false },
    ],
  };
}

/**
 * The part-timer: leaves 08:15 on Monday, Wednesday and Friday, back 16:00, at the OCPP charger;
 * on Saturday at 11:00 it moves to the garage's go-e charger.
 */
function partTimer(): CarPlan {
  const workdays = [1, 3, 5].map((d, i) => ({
    at: 'ocpp' as const,
    from: (i === 0 ? [0, 12, 0] : [d - 2, 16, 0]) as LocalTime,
    until: [d, 8, 15] as LocalTime,
    tripKwh: 12,
    deadline: true,
  }));
  return {
    id: 'car-b',
    teslamateId: 2,
    capacityKwh: 40,
    startSocPct: 45,
    targetSocPct: 90,
    departureCron: '15 8 * * 1,3,5',
    card: 1,
    idTag: 'CARB0001',
    stays: [
      ...workdays,
      { at: 'ocpp', from: [5, 16, 0], until: [6, 10, 55], tripKwh: 0, deadline: false },
      { at: 'goe', from: [6, 11, 0], tripKwh: 0, deadline: false },
    ],
  };
}

const weekDays = 7;

/**
 * A car's week repeated `weeks` times. A stay left open at the week's end (the weekend's charger)
 * ends at 11:55 on the next Sunday, before the next week's first stay begins at noon.
 */
export function everyWeek(plan: CarPlan, weeks: number): CarPlan {
  const shift = (t: LocalTime, k: number): LocalTime => [t[0] + k * weekDays, t[1], t[2]];
  const stays = Array.from({ length: weeks }, (_, k) =>
    plan.stays.map((st) => {
      const until = st.until ?? (k < weeks - 1 ? ([weekDays, 11, 55] as LocalTime) : undefined);
      return { ...st, from: shift(st.from, k), ...(until ? { until: shift(until, k) } : {}) };
    }),
  ).flat();
  return { ...plan, stays };
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
  pump: SgReadyHeatPump;
  goe: GoeSim;
  ocpp: OcppChargePointSim;
  han: AmsReaderSim;
  cars: { plan: CarPlan; battery: EvBattery; logger: TeslaMateSim }[];
  departures: Departure[];
  /** Current on each line now, A, from every load's true draw. */
  lineCurrentsA(atMs: number): number[];
  /** The home's import at the main meter now, W. */
  importW(atMs: number): number;
  /** Connects the OCPP charge point (after the daemon started). */
  startChargePoint(): Promise<void>;
  /** The daemon's status server. */
  statusUrl: string;
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

/**
 * The same home over many weeks, with the seasons: the cars' week repeated, the house's own draw
 * and the hot water drawn from both tanks following the time of year, and a grid tariff with
 * capacity steps instead of the flat grid fee (see year-home.ts).
 */
export interface Seasons {
  /** Weeks the cars' schedule repeats (day 0 of week k is the run's start plus k weeks). */
  weeks: number;
  /** The house's own draw, W (in place of `houseW`). */
  houseW(atMs: number): number;
  /** Each tank's draws (minutes of the day, kWh) on the UTC day that starts at `dayMs`. */
  drawsOn(dayMs: number): readonly { minuteOfDay: number; kwh: number }[];
  /** A shipped tariff's name (its grid fee, tax and capacity steps replace the flat ones). */
  tariff: string;
}

export async function startWeekWorld(options: {
  clock: Clock;
  startMs: number;
  dataDir: string;
  logger: Logger;
  seed?: number;
  seasons?: Seasons;
}): Promise<WeekWorld> {
  const { clock, startMs, seasons } = options;
  const houseNowW = seasons ? (atMs: number): number => seasons.houseW(atMs) : houseW;
  const at = (d: [number, number, number]): number => localAt(startMs, d[0], d[1], d[2]);
  const sandbox = await startSandbox({ clock, seed: options.seed ?? 11, logger: options.logger.child({ component: 'sandbox' }) });
  const broker = await startEmbeddedBroker();
  const tank = await startSimulatedTank({
    clock,
    startMs,
    initialC: 55,
    params: { volumeL: 200, elementKw: 2, thermostatC: 75 },
    ...(seasons ? { draws: [] } : {}),
  });
  // The second bathroom's water heater is a heat pump behind SG Ready contacts (a Modbus relay board).
  const pump = await startSgReadyHeatPump({
    clock,
    startMs,
    electricKw: 0.6,
    cop: 2.8,
    normalC: 48,
    boostC: 58,
    maxC: 62,
    tank: { volumeL: 200, initialC: 50 },
    ...(seasons ? { draws: [] } : {}),
  });
  const pumpW = (): number => {
    pump.sync();
    return pump.state().powerW;
  };

  const plans = [commuter(), partTimer()].map((p) => (seasons ? everyWeek(p, seasons.weeks) : p));
  const cars = plans.map((plan) => ({
    plan,
    battery: new EvBattery({ capacityKwh: plan.capacityKwh, socPct: plan.startSocPct, targetSocPct: 100, efficiency: 0.9 }),
  }));
  /** Each charger's plug-ins: every stay of every car there, with the car's card. */
  const plugsAt = (charger: 'goe' | 'ocpp'): GoeSimPlug[] =>
    cars.flatMap((car) =>
      car.plan.stays
        .filter((st) => st.at === charger)
        .map((st) => ({
          atMs: at(st.from),
          ...(st.until ? { untilMs: at(st.until) } : {}),
          battery: car.battery,
          card: car.plan.card,
          idTag: car.plan.idTag,
        })),
    );
  const departures: Departure[] = plans.flatMap((p) =>
    p.stays.filter((st) => st.deadline && st.until).map((st) => ({ car: p.id, atMs: at(st.until!), targetSocPct: p.targetSocPct })),
  );

  const goe = createGoeSim({
    url: broker.url,
    topicPrefix: goeTopic,
    startMs,
    phases: 3,
    supply: 'IT',
    amp: 16,
    maxCurrentA: 16,
    plugs: plugsAt('goe'),
  });
  await goe.start();
  const ocppPort = await findFreePort();
  const statusPort = await findFreePort();
  const ocpp = createOcppChargePointSim({
    url: `ws://127.0.0.1:${ocppPort}/ocpp`,
    identity: 'cp-week',
    password: ocppPassword,
    startMs,
    phases: 3,
    supply: 'IT',
    maxCurrentA: 16,
    plugs: plugsAt('ocpp'),
  });
  const loggers = cars.map((c) =>
    createTeslaMateSim({
      url: broker.url,
      carId: c.plan.teslamateId,
      battery: c.battery,
      pluggedIn: () => goe.battery === c.battery || ocpp.battery === c.battery,
    }),
  );
  for (const l of loggers) await l.start();

  /** True current per line, A: the house balanced, the tank between L1 and L2, the heat pump between L2 and L3, both chargers on all three. */
  const lineCurrentsA = (atMs: number): number[] => {
    const balanced = (houseNowW(atMs) + goe.powerW + ocpp.powerW) / itW;
    const tankA = tank.state().powerW / lineV;
    const pumpA = pumpW() / lineV;
    return [balanced + tankA, balanced + tankA + pumpA, balanced + pumpA];
  };
  const importW = (atMs: number): number => houseNowW(atMs) + tank.state().powerW + pumpW() + goe.powerW + ocpp.powerW;
  const han = createAmsReaderSim({
    url: broker.url,
    topic: amsTopic,
    startMs,
    importKwh: 31_400,
    voltageV: lineV,
    load: (atMs) => ({ importW: importW(atMs), currentsA: lineCurrentsA(atMs) }),
  });
  await han.start();

  const stop = new AbortController();
  /** Each car leaves: its SoC once the charger let it go is the ground truth, then the road empties it. */
  const followTrips = async (car: (typeof cars)[number]): Promise<void> => {
    for (const stay of car.plan.stays) {
      if (!stay.until) return;
      await clock.sleep(Math.max(0, at(stay.until) + 60_000 - clock.nowMs()), stop.signal);
      const departure = departures.find((d) => d.car === car.plan.id && d.atMs === at(stay.until!));
      if (departure) departure.socPct = car.battery.socPct;
      car.battery.drive(stay.tripKwh);
    }
  };
  /** Both tanks' draws, UTC day by UTC day (the draw profiles' minutes are UTC), each tank brought up to the draw's instant first. */
  async function drawHotWater(sea: Seasons): Promise<void> {
    const firstDayMs = Math.floor(startMs / 86_400_000) * 86_400_000;
    for (let day = 0; !stop.signal.aborted; day++) {
      const dayMs = firstDayMs + day * 86_400_000;
      for (const d of sea.drawsOn(dayMs)) {
        const atMs = dayMs + d.minuteOfDay * 60_000;
        if (atMs < clock.nowMs()) continue;
        await clock.sleep(atMs - clock.nowMs(), stop.signal);
        tank.sync();
        tank.physics.draw(d.kwh);
        pump.sync();
        pump.physics.draw(d.kwh);
      }
    }
  }
  const runs = [
    goe.run(clock, 30_000, stop.signal),
    han.run(clock, 10_000, stop.signal),
    ...loggers.map((l) => l.run(clock, 60_000, stop.signal)),
    ...cars.map((car) => followTrips(car)),
    ...(seasons ? [drawHotWater(seasons)] : []),
  ].map((p) => p.catch(() => undefined));
  /** The charge point connects once the daemon's central system listens, then lives on the clock. */
  const startChargePoint = async (): Promise<void> => {
    await ocpp.start();
    runs.push(
      (async () => {
        while (!stop.signal.aborted) {
          await clock.sleep(30_000, stop.signal);
          await ocpp.advance(clock.nowMs() - ocpp.nowMs);
        }
      })().catch(() => undefined),
    );
  };

  const pumpSource = (extra: Record<string, unknown>) => ({
    type: 'modbus' as const,
    bus: 'pumpbus',
    unitId: 1,
    profile: 'wattshift-sim-heat-pump',
    ...extra,
  });
  const config: DirectConfigInput = {
    version: 1,
    site: {
      timezone: demoTimezone,
      priceArea: 'NO4',
      currency: 'NOK',
      // The plan keeps the home's energy under what the fuse carries; the fuse guard holds each line in real time.
      locationLimitKw: 9,
      ...(seasons ? { tariff: seasons.tariff } : { gridFeePerKwh: 0.3, taxPerKwh: 0.1 }),
      vatPct: 25,
      exchangeRates: { EUR: 11.5 },
      // The HAN reader sends its currents every 10 s; on the accelerated clock a stall of the shared
      // event loop ages them by more than the default 30 s (25 ms of wall time at 1200×), which would hold the chargers at 6 A.
      fuse: { mainFuseA: fuseA, phases: 3, supply: 'IT', meter: 'han', marginA: 2, raiseAfterS: 60, staleAfterS: 600 },
    },
    spark: {
      baseUrl: sandbox.baseUrl,
      forecastUrl: sandbox.forecastUrl,
      authUrl: sandbox.authUrl,
      clientId: sandbox.credentials[0]!.clientId,
      clientSecret: sandbox.credentials[0]!.clientSecret,
      userId: 'week-user',
      locationId: 'week-home',
      meterPointIds: [demoMeterPointId],
      coordinates: demoCoordinates,
    },
    events: { pollIntervalS: 300 },
    mqtt: { url: broker.url, baseTopic: 'wattshift', clientId: 'wattshift-week' },
    modbus: {
      tankbus: { type: 'tcp', host: tank.host, port: tank.port, timeoutMs: 2000 },
      pumpbus: { type: 'tcp', host: pump.host, port: pump.port, timeoutMs: 2000 },
    },
    // The cars are resources of their own; either charger serves either car, recognised by its card.
    vehicles: plans.map((p) => ({
      id: p.id,
      name: p.id === 'car-a' ? 'Commuter' : 'Part-timer',
      capacityKwh: p.capacityKwh,
      targetSocPct: p.targetSocPct,
      departureSchedule: { cron: p.departureCron },
      efficiency: 0.9,
      // TeslaMate publishes on change only: a parked car's SoC holds for hours, so a day's staleness.
      soc: { topic: `teslamate/cars/${p.teslamateId}/battery_level`, staleAfterS: 24 * 3600 },
      identify: { idTags: [p.idTag], goeCards: [p.card] },
    })),
    ocpp: { host: '127.0.0.1', port: ocppPort },
    devices: [
      {
        id: 'tank',
        name: 'Hot water tank',
        kind: 'hotWaterTank',
        staleAfterS: 900,
        switch: { type: 'modbus', bus: 'tankbus', unitId: 1, profile: 'wattshift-sim-tank' },
        meter: { type: 'modbus', bus: 'tankbus', unitId: 1, profile: 'wattshift-sim-tank' },
        thermometer: { type: 'modbus', bus: 'tankbus', unitId: 1, profile: 'wattshift-sim-tank' },
        model: { volumeL: 200, elementKw: 2, floorC: tankFloorC, maxC: 75, comfort: [{ cron: '0 6 * * *', tempC: 55 }] },
      },
      {
        id: 'heatpump',
        name: 'Heat pump water heater',
        kind: 'heatPump',
        staleAfterS: 900,
        contacts: { relay1: pumpSource({ channel: 0 }), relay2: pumpSource({ channel: 1 }) },
        meter: pumpSource({ point: 'energyKwh' }),
        thermometer: pumpSource({ point: 'temperatureC' }),
        model: { volumeL: 200, electricKw: 0.6, cop: 2.8, normalC: 48, boostC: 58, maxC: 62, floorC: 45, legionella: { enabled: false } },
      },
      ...(['goe', 'ocpp'] as const).map((id) => ({
        id,
        name: id === 'goe' ? 'Garage charger (go-e)' : 'Driveway charger (OCPP)',
        kind: 'evCharger' as const,
        staleAfterS: 900,
        safeCurrentA: 6,
        charger:
          id === 'goe'
            ? { type: 'goe' as const, topicPrefix: goeTopic }
            : { type: 'ocpp' as const, chargePointId: 'cp-week', password: ocppPassword },
        vehicles: plans.map((p) => p.id),
        // What an unrecognised car is planned as.
        model: { capacityKwh: 50, targetEnergyKwh: 15, minCurrentA: 6, maxCurrentA: 16, phases: 3 as const, voltageV: lineV, efficiency: 0.9 },
      })),
      { id: 'han', name: 'Main meter (HAN)', kind: 'meter', staleAfterS: 300, meter: { type: 'amsreader', topic: amsTopic }, model: { main: true } },
    ],
    storage: { path: join(options.dataDir, 'wattshift.db') },
    // The status server: a failing run shows what the daemon thought (GET /api/view).
    http: { enabled: true, host: '127.0.0.1', port: statusPort },
    log: { level: 'info' },
  };

  return {
    clock,
    sandbox,
    broker,
    tank,
    pump,
    goe,
    ocpp,
    han,
    cars: cars.map((c, i) => ({ ...c, logger: loggers[i]! })),
    departures,
    lineCurrentsA,
    importW,
    startChargePoint,
    statusUrl: `http://127.0.0.1:${statusPort}`,
    config,
    async close() {
      stop.abort();
      await Promise.all(runs);
      for (const l of loggers) await l.close().catch(() => undefined);
      await han.close().catch(() => undefined);
      await ocpp.close().catch(() => undefined);
      await goe.close().catch(() => undefined);
      await tank.close().catch(() => undefined);
      await pump.close().catch(() => undefined);
      await broker.close().catch(() => undefined);
      await sandbox.close().catch(() => undefined);
    },
  };
}
