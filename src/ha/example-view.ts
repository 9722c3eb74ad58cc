/** An example home for docs/mqtt.md: a tank, a heat pump, a charger and a main meter, during LPC caps on the location and the tank. */
import type { HomeView } from '../view/model.js';

/** 2026-03-02T17:00:00Z. */
const nowMs = Date.UTC(2026, 2, 2, 17, 0, 0);
const hour = 3_600_000;
/** Tuesday 06:30 in Oslo, from a comfort window `{ cron: "30 6 * * 1-5", tempC: 55 }`. */
const comfort = { atMs: Date.UTC(2026, 2, 3, 5, 30), tempC: 55, label: 'hot water ≥ 55 °C by 06:30', plannedTempC: 58.2, met: true };

export function exampleHomeView(): HomeView {
  return {
    location: {
      id: 'home-1',
      name: 'Home',
      powerW: 4210,
      limitKw: 17,
      lpcCapKw: 6,
      fuse: { mainFuseA: 25, headroomA: [11.6, 16.2, 13.9], limiting: false },
    },
    price: { currency: 'NOK', totalPerKwh: 1.4125, spotPerKwh: 0.81, deltaPerKwh: 0.4, source: 'forecast' },
    devices: [
      {
        id: 'tank',
        name: 'Hot water tank',
        kind: 'hotWaterTank',
        ranges: { floorC: { min: 45, max: 70 } },
        available: true,
        mode: 'auto',
        temperatureC: 61.5,
        powerW: 0,
        energyKwh: 1234.567,
        plannedOn: false,
        nextStartMs: nowMs + 7 * hour,
        floorC: 45,
        capKw: 0,
        capUntilMs: nowMs + 2 * hour,
        nextComfort: comfort,
      },
      {
        id: 'car',
        name: 'Garage charger',
        kind: 'evCharger',
        ranges: { targetKwhMax: 64 },
        available: true,
        mode: 'auto',
        powerW: 0,
        energyKwh: 845.2,
        plannedOn: false,
        nextStartMs: nowMs + 6 * hour,
        ev: { plugged: true, charging: false, socPct: 41, departure: '2026-03-03T06:00:00.000Z', targetKwh: 20, targetSocPct: 80, phases: 3 },
      },
      {
        id: 'heatpump',
        name: 'Heat pump water heater',
        kind: 'heatPump',
        ranges: { floorC: { min: 45, max: 60 } },
        available: true,
        mode: 'auto',
        temperatureC: 49.5,
        powerW: 0,
        energyKwh: 412.3,
        plannedOn: false,
        nextStartMs: nowMs + 9 * hour,
        floorC: 45,
        sgReady: { state: 'block', reason: 'expensive slot, no heat planned: lock' },
      },
      { id: 'main', name: 'Main meter', kind: 'meter', available: true, mode: 'auto', powerW: 4210, energyKwh: 50123.4, plannedOn: false },
    ],
    plan: {
      createdMs: nowMs - 4 * 60_000,
      mode: 'optimal',
      slotMinutes: 60,
      currency: 'NOK',
      expectedCost: 18.42,
      baselineCost: 27.9,
      incentive: 2.35,
      shortfalls: [],
      nextComfort: comfort,
      slots: [
        {
          startMs: nowMs,
          pricePerKwh: 1.4125,
          deltaPerKwh: 0.4,
          reason: 'LPC cap 6 kW and a price above the cheapest hours needed',
          devices: { tank: { powerKw: 0, on: false, temperatureC: 60.9 }, car: { powerKw: 0, on: false, energyStateKwh: 0 } },
        },
        {
          startMs: nowMs + hour,
          pricePerKwh: 0.6125,
          deltaPerKwh: -0.35,
          reason: 'incentive hour: the delta pays for heating now',
          devices: { tank: { powerKw: 3, on: true, temperatureC: 72.4 }, car: { powerKw: 11, on: true, energyStateKwh: 9.9 } },
        },
      ],
    },
    health: {
      ok: true,
      jobs: [
        { name: 'events', ok: true },
        { name: 'prices', ok: true },
        { name: 'planner', ok: true },
      ],
    },
    outbox: {
      pending: 1,
      accepted: 12,
      rejected: 0,
      oldestDeadlineMs: Date.UTC(2026, 2, 31, 22, 0, 0),
      planReportPending: false,
      lastPlanReport: {
        acceptedMs: nowMs - 20 * 60_000,
        reason: 'changed',
        fromMs: nowMs - hour,
        toMs: nowMs + 28 * hour,
        hours: 29,
        baselineKwh: 41.6,
        flexibilityKwh: 23.9,
      },
    },
    limits: [
      { eventId: 'lpc-7', deviceId: null, capKw: 6, startMs: nowMs - hour, endMs: nowMs + hour, active: true },
      { eventId: 'lpc-8', deviceId: 'tank', capKw: 0, startMs: nowMs - 30 * 60_000, endMs: nowMs + 2 * hour, active: true },
    ],
    events: [
      { id: 'lpc-7', type: 'LPC', startMs: nowMs - hour, endMs: nowMs + hour },
      { id: 'pc-3', type: 'PriceCurve', startMs: nowMs - 17 * hour, endMs: nowMs + 7 * hour },
      { id: 'lpc-8', type: 'ResourceLPC', startMs: nowMs - 30 * 60_000, endMs: nowMs + 2 * hour },
    ],
    bill: {
      month: '2026-03',
      monthStartMs: Date.UTC(2026, 1, 28, 23),
      currency: 'NOK',
      kwh: 38.4,
      energy: 39.1,
      gridFee: 12.6,
      tax: 3.1,
      subsidy: 4.2,
      vat: 88.9,
      incentive: -2.35,
      total: 442.15,
      hoursPriced: 41,
      hoursUnpriced: 0,
      capacity: { measureKw: 4.1, stepUpToKw: 5, marginKw: 0.9, fee: 381.25 },
      baseline: { total: 561.4, capacityFee: 475, hoursFromPlan: 39, hoursWithoutPlan: 2 },
      savings: 119.25,
      devices: [
        { id: 'tank', kwh: 9.2, total: 10.85 },
        { id: 'car', kwh: 14.3, total: 15.02 },
      ],
    },
    nowMs,
  };
}
