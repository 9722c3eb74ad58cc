/**
 * The winter home, every part a real peer on one accelerated clock: the API sandbox (prices, a cap
 * event, MET Norway's forecast from its seeded Nordic weather); an MQTT broker; three heated rooms,
 * each a room simulator (a first-order room cooling to the sandbox's outdoors, heaters with their
 * own thermostats behind a Shelly relay, a zigbee2mqtt sensor); a hot water tank on Modbus TCP; a
 * commuter's car on an OCPP 1.6J charge point; an AMS reader on the HAN port; Elvia's tariff with
 * its capacity steps; a 3×230 V IT supply behind a 25 A main fuse.
 *
 * `zones: 'planned'` gives the rooms to wattshift (`kind: zone`, the relay in front of heaters whose
 * own thermostats sit at the band's top, so the plan can pre-heat up to it); `zones: 'thermostats'`
 * leaves them out of its configuration: the relays stay on and each heater's own thermostat holds
 * a fixed comfort setpoint, half a kelvin above the highest lower edge of the room's bands.
 */
import { join } from 'node:path';
import type { DirectConfigInput } from '../../config/schema.js';
import { localParts } from '../../core/zoned-time.js';
import { startEmbeddedBroker, type EmbeddedBroker } from '../../demo/broker.js';
import { demoMeterPointId, demoTimezone, localAt } from '../../demo/environment.js';
import type { Logger } from '../../log.js';
import type { Clock } from '../../ports.js';
import { createAmsReaderSim, type AmsReaderSim } from '../../sandbox/devices/amsreader-sim.js';
import { EvBattery } from '../../sandbox/devices/ev-battery.js';
import { findFreePort, startSimulatedTank, type SimulatedTank } from '../../sandbox/devices/modbus-tank.js';
import { createOcppChargePointSim, type OcppChargePointSim } from '../../sandbox/devices/ocpp-charge-point-sim.js';
import { createRoomSim, type RoomSim } from '../../sandbox/devices/room-sim.js';
import { outdoorTempC, type Place } from '../../sandbox/outdoor-model.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { fuseA, houseW, lineV, tankFloorC, type Departure } from './week.js';

export const ocppPassword = 'winter-charge-point-secret';
const amsTopic = 'ams/winter01';
const itW = Math.sqrt(3) * lineV;

/** Hamar, on Lake Mjøsa's shore (130 m): an inland winter, about 1.5 K colder than Oslo's normals. */
export const winterPlace: Required<Place> = { latitude: 60.7945, longitude: 11.068, altitudeM: 130 };

/** A band from a local hour on, every day, until the next band's hour. */
export interface DailyBand {
  fromHour: number;
  minC: number;
  maxC: number;
}

export interface WinterZone {
  id: string;
  name: string;
  powerKw: number;
  heatCapacityKwhPerK: number;
  heatLossKwPerK: number;
  /** Free heat from the seeded occupancy profile (the living room) or none. */
  gains: 'occupancy' | 'none';
  bands: DailyBand[];
  frostC: number;
}

/**
 * Three rooms of a timber-framed house. The living room's panel heaters (1.5 kW) hold 21 °C to
 * about −22 °C outdoors; the bedroom's (0.8 kW) to about −19 °C; the bathroom's floor heating
 * (0.6 kW) warms its screed slowly. Mornings and evenings are warm, nights and working hours cooler.
 */
export const winterZones: readonly WinterZone[] = [
  {
    id: 'living',
    name: 'Living room',
    powerKw: 1.5,
    heatCapacityKwhPerK: 1.6,
    heatLossKwPerK: 0.035,
    gains: 'occupancy',
    bands: [
      { fromHour: 6, minC: 21, maxC: 23 },
      { fromHour: 9, minC: 18, maxC: 22 },
      { fromHour: 16, minC: 21, maxC: 23 },
      { fromHour: 23, minC: 18, maxC: 22 },
    ],
    frostC: 7,
  },
  {
    id: 'bedroom',
    name: 'Bedroom',
    powerKw: 0.8,
    heatCapacityKwhPerK: 0.7,
    heatLossKwPerK: 0.02,
    gains: 'none',
    bands: [
      { fromHour: 6, minC: 19, maxC: 21 },
      { fromHour: 9, minC: 16, maxC: 20 },
      { fromHour: 21, minC: 17, maxC: 20 },
    ],
    frostC: 7,
  },
  {
    id: 'bathroom',
    name: 'Bathroom floor',
    powerKw: 0.6,
    heatCapacityKwhPerK: 0.6,
    heatLossKwPerK: 0.01,
    gains: 'none',
    bands: [
      { fromHour: 6, minC: 22, maxC: 24 },
      { fromHour: 9, minC: 19, maxC: 22 },
      { fromHour: 17, minC: 21, maxC: 23 },
      { fromHour: 23, minC: 19, maxC: 22 },
    ],
    frostC: 7,
  },
];

/** The band of `zone` in force at `atMs` (local time of the home). */
export function bandAt(zone: WinterZone, atMs: number): { minC: number; maxC: number } {
  const { hour } = localParts(atMs, demoTimezone);
  const sorted = [...zone.bands].sort((a, b) => a.fromHour - b.fromHour);
  const current = [...sorted].reverse().find((b) => b.fromHour <= hour) ?? sorted[sorted.length - 1]!;
  return { minC: current.minC, maxC: current.maxC };
}

/** The heater's own thermostat: at the band's top when planned, at a fixed comfort setpoint alone. */
export function heaterSetpointC(zone: WinterZone, zones: 'planned' | 'thermostats'): number {
  return zones === 'planned' ? Math.max(...zone.bands.map((b) => b.maxC)) : Math.max(...zone.bands.map((b) => b.minC)) + 0.5;
}

/** The commuter: 60 kWh, home from 17:00, leaves 07:30 Monday to Friday with 80 %; 13 kWh a trip. */
const car = {
  id: 'car',
  capacityKwh: 60,
  startSocPct: 40,
  targetSocPct: 80,
  departureCron: '30 7 * * 1-5',
  idTag: 'WINTER01',
  tripKwh: 13,
};

/** The evening the cap falls on: of the run's weekday evenings (Monday on), the coldest at 18:00. */
export function capEvening(startMs: number, days: number, seed: number): number {
  const candidates = [1, 2, 3, 4, 5].filter((d) => localAt(startMs, d, 20) <= startMs + days * 86_400_000);
  const coldest = (candidates.length ? candidates : [1]).reduce((best, d) =>
    outdoorTempC(seed, winterPlace, localAt(startMs, d, 18)) < outdoorTempC(seed, winterPlace, localAt(startMs, best, 18)) ? d : best,
  );
  return coldest;
}

/** The cap: the whole home at most 3.5 kW from 17:00 to 20:00 on the cap evening, posted at 10:00 that day. */
export const capKw = 3.5;
export const capHours = { from: 17, to: 20 };

export interface WinterWorld {
  sandbox: Sandbox;
  broker: EmbeddedBroker;
  tank: SimulatedTank;
  ocpp: OcppChargePointSim;
  han: AmsReaderSim;
  rooms: { zone: WinterZone; sim: RoomSim }[];
  battery: EvBattery;
  departures: Departure[];
  /** The home's true import now, W. */
  importW(atMs: number): number;
  startChargePoint(): Promise<void>;
  config: DirectConfigInput;
  close(): Promise<void>;
}

export async function startWinterWorld(options: {
  clock: Clock;
  startMs: number;
  days: number;
  dataDir: string;
  logger: Logger;
  seed: number;
  zones: 'planned' | 'thermostats';
}): Promise<WinterWorld> {
  const { clock, startMs, seed } = options;
  const sandbox = await startSandbox({ clock, seed, logger: options.logger.child({ component: 'sandbox' }) });
  const broker = await startEmbeddedBroker();
  const tank = await startSimulatedTank({ clock, startMs, initialC: 55, params: { volumeL: 200, elementKw: 2, thermostatC: 75 } });
  const rooms = winterZones.map((zone) => ({
    zone,
    sim: createRoomSim({
      url: broker.url,
      startMs,
      seed,
      place: winterPlace,
      relayPrefix: `shelly-${zone.id}`,
      sensorName: `${zone.id}-sensor`,
      room: {
        heatCapacityKwhPerK: zone.heatCapacityKwhPerK,
        heatLossKwPerK: zone.heatLossKwPerK,
        initialC: heaterSetpointC(zone, 'thermostats') - 0.25,
      },
      heater: { powerW: zone.powerKw * 1000, setpointC: heaterSetpointC(zone, options.zones) },
      gains: zone.gains,
      timeZone: demoTimezone,
    }),
  }));
  for (const r of rooms) await r.sim.start();

  const battery = new EvBattery({ capacityKwh: car.capacityKwh, socPct: car.startSocPct, targetSocPct: 100, efficiency: 0.9 });
  // Day 0 is the Sunday the run starts on: home from noon, away 07:30–17:00 Monday to Friday, home from Friday 17:00 on.
  const weekdays = [0, 1, 2, 3, 4].map((d) => ({ fromMs: localAt(startMs, d, d === 0 ? 12 : 17), untilMs: localAt(startMs, d + 1, 7, 30) }));
  const departures: Departure[] = weekdays.map((s) => ({ car: car.id, atMs: s.untilMs, targetSocPct: car.targetSocPct }));
  const ocppPort = await findFreePort();
  const ocpp = createOcppChargePointSim({
    url: `ws://127.0.0.1:${ocppPort}/ocpp`,
    identity: 'cp-winter',
    password: ocppPassword,
    startMs,
    phases: 3,
    supply: 'IT',
    maxCurrentA: 16,
    plugs: [
      ...weekdays.map((s) => ({ atMs: s.fromMs, untilMs: s.untilMs, battery, idTag: car.idTag })),
      { atMs: localAt(startMs, 5, 17), battery, idTag: car.idTag },
    ],
  });

  /** Line currents, A: the house and the charger balanced, the tank and living room on L1–L2, the bedroom on L2–L3, the bathroom on L3–L1. */
  const lineCurrentsA = (atMs: number): number[] => {
    const balanced = (houseW(atMs) + ocpp.powerW) / itW;
    const [living, bedroom, bathroom] = rooms.map((r) => r.sim.relay.powerW / lineV);
    const tankA = tank.state().powerW / lineV;
    return [balanced + tankA + living! + bathroom!, balanced + tankA + living! + bedroom!, balanced + bedroom! + bathroom!];
  };
  const importW = (atMs: number): number => houseW(atMs) + tank.state().powerW + ocpp.powerW + rooms.reduce((s, r) => s + r.sim.relay.powerW, 0);
  const han = createAmsReaderSim({
    url: broker.url,
    topic: amsTopic,
    startMs,
    importKwh: 52_100,
    voltageV: lineV,
    load: (atMs) => ({ importW: importW(atMs), currentsA: lineCurrentsA(atMs) }),
  });
  await han.start();

  const stop = new AbortController();
  /** The car's state of charge as it leaves is the ground truth; then the road empties it. */
  const followTrips = async (): Promise<void> => {
    for (const d of departures) {
      await clock.sleep(Math.max(0, d.atMs + 60_000 - clock.nowMs()), stop.signal);
      d.socPct = battery.socPct;
      battery.drive(car.tripKwh);
    }
  };
  const runs = [han.run(clock, 10_000, stop.signal), ...rooms.map((r) => r.sim.run(clock, 30_000, stop.signal)), followTrips()].map((p) =>
    p.catch(() => undefined),
  );
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

  const zoneDevices = rooms.map(({ zone }) => ({
    id: zone.id,
    name: zone.name,
    kind: 'zone' as const,
    staleAfterS: 900,
    switch: { type: 'shelly' as const, topicPrefix: `shelly-${zone.id}` },
    meter: { type: 'shelly' as const, topicPrefix: `shelly-${zone.id}` },
    thermometer: { type: 'mqtt' as const, stateTopic: `zigbee2mqtt/${zone.id}-sensor`, temperatureCPath: 'temperature' },
    model: { powerKw: zone.powerKw, heatCapacityKwhPerK: zone.heatCapacityKwhPerK, heatLossKwPerK: zone.heatLossKwPerK },
    schedule: zone.bands.map((b) => ({ cron: `0 ${b.fromHour} * * *`, minC: b.minC, maxC: b.maxC })),
    frostC: zone.frostC,
  }));
  const config: DirectConfigInput = {
    version: 1,
    site: {
      timezone: demoTimezone,
      priceArea: 'NO1',
      currency: 'NOK',
      // The home holds itself within 6 kW (under the tariff's 10 kW step), as many Norwegian homes do.
      locationLimitKw: 6,
      tariff: 'elvia',
      exchangeRates: { EUR: 11.5 },
      fuse: { mainFuseA: fuseA, phases: 3, supply: 'IT', meter: 'han', marginA: 2, raiseAfterS: 60, staleAfterS: 600 },
    },
    spark: {
      baseUrl: sandbox.baseUrl,
      forecastUrl: sandbox.forecastUrl,
      authUrl: sandbox.authUrl,
      clientId: sandbox.credentials[0]!.clientId,
      clientSecret: sandbox.credentials[0]!.clientSecret,
      userId: 'winter-user',
      locationId: 'winter-home',
      meterPointIds: [demoMeterPointId],
      coordinates: { latitude: winterPlace.latitude, longitude: winterPlace.longitude },
    },
    weather: { url: sandbox.weatherUrl, contact: 'winter-home@example.org', altitudeM: winterPlace.altitudeM },
    events: { pollIntervalS: 300 },
    mqtt: { url: broker.url, baseTopic: 'wattshift', clientId: 'wattshift-winter' },
    modbus: { tankbus: { type: 'tcp', host: tank.host, port: tank.port, timeoutMs: 2000 } },
    vehicles: [
      {
        id: car.id,
        name: 'Commuter',
        capacityKwh: car.capacityKwh,
        targetSocPct: car.targetSocPct,
        departureSchedule: { cron: car.departureCron },
        efficiency: 0.9,
        identify: { idTags: [car.idTag] },
      },
    ],
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
        id: 'ocpp',
        name: 'Driveway charger (OCPP)',
        kind: 'evCharger',
        staleAfterS: 900,
        safeCurrentA: 6,
        charger: { type: 'ocpp', chargePointId: 'cp-winter', password: ocppPassword },
        vehicles: [car.id],
        model: { capacityKwh: 50, targetEnergyKwh: 15, minCurrentA: 6, maxCurrentA: 16, phases: 3, voltageV: lineV, efficiency: 0.9 },
      },
      ...(options.zones === 'planned' ? zoneDevices : []),
      { id: 'han', name: 'Main meter (HAN)', kind: 'meter', staleAfterS: 300, meter: { type: 'amsreader', topic: amsTopic }, model: { main: true } },
    ],
    storage: { path: join(options.dataDir, 'wattshift.db') },
    // No status server: two homes may run side by side.
    http: { enabled: false },
    log: { level: 'info' },
  };

  return {
    sandbox,
    broker,
    tank,
    ocpp,
    han,
    rooms,
    battery,
    departures,
    importW,
    startChargePoint,
    config,
    async close() {
      stop.abort();
      await Promise.all(runs);
      await han.close().catch(() => undefined);
      await ocpp.close().catch(() => undefined);
      for (const r of rooms) await r.sim.close().catch(() => undefined);
      await tank.close().catch(() => undefined);
      await broker.close().catch(() => undefined);
      await sandbox.close().catch(() => undefined);
    },
  };
}
