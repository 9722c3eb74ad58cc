/**
 * The simulated car battery: the road empties it (never below 0 %), and a car followed over
 * several plug-ins is one battery, so it comes back with the SoC it left with, less its trips.
 * The go-e simulators here are never started: without a broker they only integrate energy.
 */
import { describe, expect, it } from 'vitest';
import { EvBattery, pluggedBattery } from './ev-battery.js';
import { createGoeSim } from './goe-sim.js';

const t0 = Date.UTC(2026, 0, 12, 0, 0);
const H = 3_600_000;
/** 16 A on three phases of 230 V (TN). */
const goeW = 16 * 3 * 230;

describe('EvBattery.drive', () => {
  it('takes the energy from the battery', () => {
    const car = new EvBattery({ capacityKwh: 60, socPct: 50 });
    car.drive(6);
    expect(car.socPct).toBeCloseTo(40, 9);
    car.drive(0);
    expect(car.socPct).toBeCloseTo(40, 9);
    // What it drove away is what a charger has to put back (AC, through the efficiency).
    expect(car.acKwhToFull()).toBeCloseTo(36 / 0.9, 9);
  });

  it('empties the battery and never goes below 0 %', () => {
    const car = new EvBattery({ capacityKwh: 40, socPct: 25 });
    car.drive(10);
    expect(car.socPct).toBe(0);
    car.drive(5);
    expect(car.socPct).toBe(0);
    expect(car.full).toBe(false);
    expect(car.acKwhToFull()).toBeCloseTo(40 / 0.9, 9);
    // An empty car charges from 0, not from a debt.
    car.charge(0.9);
    expect(car.socPct).toBeCloseTo((0.81 / 40) * 100, 9);
  });
});

describe('pluggedBattery', () => {
  it('is the car itself when given one, and a fresh battery per plug-in when given options', () => {
    const car = new EvBattery({ capacityKwh: 60, socPct: 30 });
    expect(pluggedBattery(car)).toBe(car);

    const options = { capacityKwh: 60, socPct: 30, targetSocPct: 80, efficiency: 0.95 };
    const first = pluggedBattery(options);
    const second = pluggedBattery(options);
    expect(first).not.toBe(second);
    first.charge(10);
    expect(first.socPct).toBeGreaterThan(30);
    expect(second.socPct).toBe(30);
    expect(second).toMatchObject({ capacityKwh: 60, targetSocPct: 80, efficiency: 0.95 });
  });

  it('a car comes back to a charger with the SoC it left with, less what it drove', async () => {
    const car = new EvBattery({ capacityKwh: 60, socPct: 50, efficiency: 0.9 });
    const goe = createGoeSim({
      url: 'mqtt://127.0.0.1:1',
      topicPrefix: 'go-eCharger/ev-battery',
      startMs: t0,
      plugs: [
        { atMs: t0, untilMs: t0 + H, battery: car },
        { atMs: t0 + 2 * H, battery: car },
      ],
    });

    await goe.advance(H / 2);
    expect(goe.battery).toBe(car);
    // One hour at 16 A, 3 phases: 11.04 kWh AC, 9.936 kWh into 60 kWh.
    await goe.advance(H / 2);
    const leftWith = 50 + (((goeW / 1000) * 0.9) / 60) * 100;
    expect(goe.battery).toBeUndefined();
    expect(car.socPct).toBeCloseTo(leftWith, 6);

    await goe.advance(H / 2);
    car.drive(6);
    await goe.advance(H / 2);
    expect(goe.battery).toBe(car);
    expect(car.socPct).toBeCloseTo(leftWith - 10, 6);

    // Charging carries on from there.
    await goe.advance(H / 2);
    expect(car.socPct).toBeCloseTo(leftWith - 10 + (((goeW / 2000) * 0.9) / 60) * 100, 6);
  });

  it('a car is one battery at two chargers', async () => {
    const car = new EvBattery({ capacityKwh: 40, socPct: 20, efficiency: 0.9 });
    const work = createGoeSim({
      url: 'mqtt://127.0.0.1:1',
      topicPrefix: 'go-eCharger/work',
      startMs: t0,
      plugs: [{ atMs: t0, untilMs: t0 + H, battery: car }],
    });
    const home = createGoeSim({
      url: 'mqtt://127.0.0.1:1',
      topicPrefix: 'go-eCharger/home',
      startMs: t0,
      amp: 0,
      plugs: [{ atMs: t0 + 2 * H, battery: car }],
    });

    await work.advance(2 * H);
    const leftWith = car.socPct;
    expect(leftWith).toBeCloseTo(20 + (((goeW / 1000) * 0.9) / 40) * 100, 6);
    car.drive(4);
    await home.advance(2 * H);
    expect(home.battery).toBe(car);
    expect(home.battery?.socPct).toBeCloseTo(leftWith - 10, 6);
  });

  it('a car plugged with battery options starts each plug-in afresh', async () => {
    const options = { capacityKwh: 60, socPct: 50, efficiency: 0.9 };
    const goe = createGoeSim({
      url: 'mqtt://127.0.0.1:1',
      topicPrefix: 'go-eCharger/fresh',
      startMs: t0,
      plugs: [
        { atMs: t0, untilMs: t0 + H, battery: options },
        { atMs: t0 + 2 * H, battery: options },
      ],
    });
    await goe.advance(H / 2);
    const first = goe.battery;
    expect(first?.socPct).toBeGreaterThan(50);
    await goe.advance(2 * H - H / 2);
    expect(goe.battery).not.toBe(first);
    expect(goe.battery?.socPct).toBe(50);
  });
});
