/**
 * Two cars that swap chargers, the whole daemon against real peers: the demo world (the sandbox
 * API, the broker, the go-e charger `car` over MQTT) plus an OCPP 1.6J charge point `car2`, and a
 * TeslaMate-style logger telling each car's SoC over MQTT. Car A comes home to the go-e charger
 * with its RFID card, car B to the OCPP charger with its id tag; late in the evening they swap.
 * Each is planned as itself (its capacity, SoC, weekday departure and target) at whichever charger
 * it is, reaches its target by its departure, and gets its own accepted usage report.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planView } from '../src/app-view.js';
import { parseConfig } from '../src/config/load.js';
import type { Config } from '../src/config/schema.js';
import type { Plan } from '../src/core/types.js';
import { localAt } from '../src/demo/environment.js';
import { EvBattery } from '../src/sandbox/devices/ev-battery.js';
import { findFreePort } from '../src/sandbox/devices/modbus-tank.js';
import { createOcppChargePointSim, type OcppChargePointSim } from '../src/sandbox/devices/ocpp-charge-point-sim.js';
import { createTeslaMateSim, type TeslaMateSim } from '../src/sandbox/devices/teslamate-sim.js';
import { demoHome } from './helpers/demo-home.js';

const H = 3_600_000;
// Wednesday 14 January 2026; the cars leave on Thursday morning.
const day0 = Date.UTC(2026, 0, 14, 12);
const at = (day: number, hh: number, mm = 0): number => localAt(day0, day, hh, mm);
const startMs = at(0, 17);
const aLeavesMs = at(1, 6);
const bLeavesMs = at(1, 7, 15);
const eventFromMs = at(0, 17);
const eventToMs = at(1, 8);
const endMs = eventToMs + 35 * 60_000;
const password = 'second-charger-secret-1';

describe('two cars swapping two chargers', () => {
  const home = demoHome({ name: 'swap', startMs });
  const { clock, planAtHour } = home;
  const carA = new EvBattery({ capacityKwh: 60, socPct: 30, targetSocPct: 100, efficiency: 0.9 });
  const carB = new EvBattery({ capacityKwh: 40, socPct: 40, targetSocPct: 100, efficiency: 0.9 });
  /** Where each car is: [charger, from, until]. */
  const stays = {
    a: [
      ['car', at(0, 17, 30), at(0, 22)],
      ['car2', at(0, 22, 45), aLeavesMs],
    ],
    b: [
      ['car2', at(0, 17, 45), at(0, 22, 15)],
      ['car', at(0, 22, 30), bLeavesMs],
    ],
  } as const;
  const plugged = (car: 'a' | 'b'): boolean => stays[car].some(([, from, until]) => clock.nowMs() >= from && clock.nowMs() < until);
  let car2: OcppChargePointSim;
  let loggers: TeslaMateSim[] = [];
  let config: Config;
  const socAtDeparture: { a?: number; b?: number } = {};
  /** The car each charger's view names, at 20:00 and at midnight. */
  const shown = new Map<number, Record<string, string | undefined>>();
  let vehicleResources: Record<string, string> = {};
  let eventId = '';

  beforeAll(async () => {
    const env = await home.startWorld({
      carPlugs: [
        { atMs: stays.a[0][1], untilMs: stays.a[0][2], card: 0, battery: carA },
        { atMs: stays.b[1][1], untilMs: stays.b[1][2], card: 1, battery: carB },
      ],
    });
    const ocppPort = await findFreePort();
    car2 = createOcppChargePointSim({
      url: `ws://127.0.0.1:${ocppPort}/ocpp`,
      identity: 'cp2',
      password,
      startMs,
      phases: 3,
      maxCurrentA: 16,
      plugs: [
        { atMs: stays.b[0][1], untilMs: stays.b[0][2], idTag: 'TAG-B', battery: carB },
        { atMs: stays.a[1][1], untilMs: stays.a[1][2], idTag: 'TAG-A', battery: carA },
      ],
    });
    loggers = [
      createTeslaMateSim({ url: env.broker.url, carId: 1, battery: carA, pluggedIn: () => plugged('a') }),
      createTeslaMateSim({ url: env.broker.url, carId: 2, battery: carB, pluggedIn: () => plugged('b') }),
    ];
    for (const l of loggers) await l.start();
    const input = env.config;
    const soc = (carId: number) => ({ topic: `teslamate/cars/${carId}/battery_level`, staleAfterS: 86_400 });
    config = parseConfig({
      ...input,
      ocpp: { host: '127.0.0.1', port: ocppPort },
      vehicles: [
        {
          id: 'car-a',
          name: 'Car A',
          capacityKwh: 60,
          targetSocPct: 70,
          soc: soc(1),
          identify: { idTags: ['TAG-A'], goeCards: [0] },
          departures: [
            { cron: '0 6 * * 1-5', targetSocPct: 80 },
            { cron: '0 10 * * 6,0', targetSocPct: 100 },
          ],
        },
        {
          id: 'car-b',
          name: 'Car B',
          capacityKwh: 40,
          targetSocPct: 60,
          soc: soc(2),
          identify: { idTags: ['TAG-B'], goeCards: [1] },
          departures: [{ cron: '15 7 * * 1-5', targetSocPct: 90 }],
        },
      ],
      devices: [
        ...(input.devices ?? []),
        {
          id: 'car2',
          name: 'Second charger',
          kind: 'evCharger',
          staleAfterS: 900,
          safeCurrentA: 6,
          vehicles: ['car-a', 'car-b'],
          charger: { type: 'ocpp', chargePointId: 'cp2', password },
          model: { capacityKwh: 50, targetEnergyKwh: 5, departure: '23:00', minCurrentA: 6, maxCurrentA: 16, phases: 3 },
        },
      ],
    }).config;
    const registration = await home.register(config, async (spark, { resources, locationId }) => {
      // A price-curve event over the whole night for both chargers and both cars.
      const points = Array.from({ length: (eventToMs - eventFromMs) / H }, (_, i) => ({
        timestamp: new Date(eventFromMs + i * H).toISOString(),
        price: i >= 7 && i <= 11 ? -0.05 : 0.02,
      }));
      const event = await spark.simulatePriceCurve({
        targets: ['car', 'car2', 'car-a', 'car-b'].map((id) => ({ resourceId: resources[id]!, locationId })),
        priceCurveDelta: { points, energyUnit: 'kWh', currency: 'EUR', resolution: '01:00:00' },
        priceArea: 'NO4',
      });
      eventId = event.id;
    });
    vehicleResources = { a: registration.resources['car-a']!, b: registration.resources['car-b']! };
    await home.startApp(config, {
      controlTickMs: 60_000,
      onControlTick: (snap) => {
        for (const t of [at(0, 20), at(1, 0), endMs - 5 * 60_000]) {
          if (snap.atMs >= t && !shown.has(t)) shown.set(t, Object.fromEntries(home.app.view().devices.map((d) => [d.id, d.ev?.vehicle?.name])));
        }
        if (socAtDeparture.a === undefined && snap.atMs >= aLeavesMs) socAtDeparture.a = carA.socPct;
        if (socAtDeparture.b === undefined && snap.atMs >= bLeavesMs) socAtDeparture.b = carB.socPct;
      },
    });
    await car2.start();
    home.every(30_000, async () => {
      await car2.advance(clock.nowMs() - car2.nowMs);
      for (const l of loggers) await l.update();
    });
    await home.until(endMs);
  }, 240_000);

  afterAll(() =>
    home.close(async () => {
      for (const l of loggers) await l.close().catch(() => undefined);
      await car2?.close();
    }),
  );

  const planAt = (day: number, hh: number): Plan => {
    const plan = planAtHour.get(Math.floor(at(day, hh) / H) * H);
    expect(plan, `plan at ${hh}:00`).toBeDefined();
    return plan!;
  };

  it('plans each car as itself at the charger it is plugged into, before and after the swap', () => {
    const evening = planAt(0, 20);
    expect(evening.evs?.car?.vehicle).toEqual({ id: 'car-a', name: 'Car A', identifiedBy: 'card' });
    expect(evening.evs?.car2?.vehicle).toEqual({ id: 'car-b', name: 'Car B', identifiedBy: 'idTag' });
    // Each need rests on the car's own SoC, capacity and its Thursday departure's target.
    expect(evening.evs?.car?.needFrom).toMatchObject({ targetSocPct: 80, capacityKwh: 60 });
    expect(evening.evs?.car2?.needFrom).toMatchObject({ targetSocPct: 90, capacityKwh: 40 });

    const night = planAt(1, 0);
    expect(night.evs?.car?.vehicle).toMatchObject({ id: 'car-b', identifiedBy: 'card' });
    expect(night.evs?.car2?.vehicle).toMatchObject({ id: 'car-a', identifiedBy: 'idTag' });
    expect(night.evs?.car?.needFrom).toMatchObject({ targetSocPct: 90, capacityKwh: 40 });
    expect(night.evs?.car2?.needFrom).toMatchObject({ targetSocPct: 80, capacityKwh: 60 });
    // Car A leaves at 06:00 (its weekday departure, not the charger's 23:00): nothing planned for it after.
    expect(night.slots.filter((s) => s.startMs >= aLeavesMs).every((s) => (s.evs?.car2?.energyKwh ?? 0) === 0)).toBe(true);
    expect(night.slots.filter((s) => s.startMs < aLeavesMs).reduce((sum, s) => sum + (s.evs?.car2?.energyKwh ?? 0), 0)).toBeGreaterThan(0);

    // What `plan --explain` says about each charger's car.
    const text = planView(night, config, at(1, 0)).evNeed ?? '';
    expect(text).toContain('car: Car B (car-b, by its RFID card), state of charge');
    expect(text).toContain('car2: Car A (car-a, by its id tag), state of charge');
  });

  it('gets each car to its target state of charge by its own departure', () => {
    expect(socAtDeparture.a).toBeGreaterThanOrEqual(80 - 1);
    expect(socAtDeparture.b).toBeGreaterThanOrEqual(90 - 1);
  });

  it("reports each car's energy as its own resource, accepted by the API", () => {
    const reports = home.env.sandbox.acceptedReports().filter((r) => r.eventId === eventId);
    expect(reports).toHaveLength(1);
    const payloads = reports[0]!.payloads;
    const byResource = new Map(payloads.map((p) => [p.resourceId, p]));
    for (const car of ['a', 'b'] as const) {
      const p = byResource.get(vehicleResources[car]!);
      expect(p, `payload of car ${car}`).toMatchObject({ payloadType: 'EnergyUsage', locationId: 'demo-home' });
      const reported = p!.points.reduce((sum, pt) => sum + pt.kiloWattHours, 0);
      // Grid energy behind what the battery gained over the night (efficiency 0.9).
      const battery = car === 'a' ? carA : carB;
      const truth = (((battery.socPct - (car === 'a' ? 30 : 40)) / 100) * (car === 'a' ? 60 : 40)) / 0.9;
      expect(reported, `car ${car}`).toBeGreaterThan(truth * 0.95);
      expect(reported, `car ${car}`).toBeLessThan(truth * 1.01);
    }
    // The chargers keep their own payloads: four targets, four payloads.
    expect(payloads.map((p) => p.resourceId).sort()).toHaveLength(4);
  });

  it("shows each charger's car in its view while it is plugged in", () => {
    expect(shown.get(at(0, 20))).toMatchObject({ car: 'Car A', car2: 'Car B' });
    expect(shown.get(at(1, 0))).toMatchObject({ car: 'Car B', car2: 'Car A' });
    // Both cars have left: no charger names a car.
    expect(shown.get(endMs - 5 * 60_000)).toMatchObject({ car: undefined, car2: undefined });
  });
});
