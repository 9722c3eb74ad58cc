import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp-dir.js';
import { defaultConfig } from '../config/load.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/types.js';
import type { DeviceReading } from '../devices/supervisor.js';
import { localDayAndHour } from '../core/load-forecast.js';
import { localTimeToUtcMs } from '../core/zoned-time.js';
import { KWH_PER_L_K } from '../core/tank.js';
import { withLoadForecast } from '../app/planning.js';
import { createLoadForecaster } from './load-forecast.js';
import { buildPlanInput, type PlanningSnapshot, type TankNow } from './plan-inputs.js';

const TZ = 'Europe/Oslo';
const H = 3_600_000;
const DAY = 24 * H;
/** Monday 2026-01-05 00:00 local. */
const START = localTimeToUtcMs(2026, 1, 5, 0, TZ);

const config = defaultConfig({
  site: { timezone: TZ },
  mqtt: { url: 'mqtt://127.0.0.1:1883' },
  devices: [
    { id: 'han', kind: 'meter', meter: { type: 'amsreader', topic: 'ams/meter' } },
    { id: 'tank', kind: 'hotWaterTank', switch: { type: 'shelly', topicPrefix: 'shelly-tank' }, model: { volumeL: 200, elementKw: 2 } },
  ],
});

/** The house's own load: 0.5 kW at night, 1.5 kW from 17 to 22, 1 kW more on Sundays. */
function ownKw(ms: number): number {
  const { weekday, hour } = localDayAndHour(ms, TZ, []);
  return (hour >= 17 && hour < 22 ? 1.5 : 0.5) + (weekday === 0 ? 1 : 0);
}
/** The tank's element: 2 kWh in the hours from 02 to 04, nothing else. */
const tankKwh = (ms: number): number => (localDayAndHour(ms, TZ, []).hour < 2 || localDayAndHour(ms, TZ, []).hour >= 4 ? 0 : 2);

/** `days` of metered hours from START: the location (own load + tank) and the tank on its own. */
function storeWith(days: number, spoil: (i: number) => 'gap' | 'missing' | 'tankGap' | null = () => null): Store {
  const store = openStore({ path: join(tempDir('wattshift-load-'), 'state.db') });
  const rows = Array.from({ length: days * 24 }, (_, i) => START + i * H).flatMap((hourStartMs, i) => {
    const spoiled = spoil(i);
    if (spoiled === 'missing') return [];
    const location = {
      subject: 'location',
      hourStartMs,
      // A gap hour's kWh is what a lost hour leaves: nothing to learn from.
      kwh: spoiled === 'gap' ? 0 : ownKw(hourStartMs) + tankKwh(hourStartMs),
      quality: spoiled === 'gap' ? ('gap' as const) : ('measured' as const),
      samples: 60,
    };
    const tank = {
      subject: 'device:tank',
      hourStartMs,
      kwh: tankKwh(hourStartMs),
      quality: spoiled === 'tankGap' ? ('gap' as const) : ('measured' as const),
      samples: 60,
    };
    return [location, tank];
  });
  store.upsertHourly(rows);
  return store;
}

const forecaster = (store: Store, smoothedKw = 0.8, hasMainMeter = true) =>
  createLoadForecaster({ config, store, deviceSubjects: ['device:tank'], hasMainMeter, smoothedKw: () => smoothedKw });

const hoursFrom = (fromMs: number, n: number): number[] => Array.from({ length: n }, (_, i) => fromMs + i * H);

describe('the load forecast job', () => {
  it("learns the house's own load from the location's hours less the controlled devices' hours, gaps skipped", () => {
    // Every 13th hour missing, every 17th stored as a gap at the main meter, every 19th a gap of the tank.
    const store = storeWith(28, (i) => (i % 13 === 0 ? 'missing' : i % 17 === 0 ? 'gap' : i % 19 === 0 ? 'tankGap' : null));
    const now = START + 28 * DAY;
    const f = forecaster(store);
    expect(f.model(now)).toMatchObject({ source: 'learned' });
    const next = hoursFrom(now, 7 * 24);
    f.forSlots(now, next).forEach((x, i) => expect(x.meanKw).toBeCloseTo(ownKw(next[i]!), 9));
    // The guard's figure for this hour is the upper 80 % bound (the data are clean: the mean).
    expect(f.guardBaseLoadKw(now + 10 * 60_000)).toBeCloseTo(ownKw(now), 9);
  });

  it('keeps the smoothed number with too short a history, or without a main meter; the guard then keeps the base load now', () => {
    const now = START + 10 * DAY;
    const short = forecaster(storeWith(10), 0.8);
    expect(short.model(now)).toMatchObject({ source: 'smoothed', note: expect.stringContaining('needed') });
    expect(short.forSlots(now, [now])[0]!.meanKw).toBe(0.8);
    expect(short.guardBaseLoadKw(now)).toBeUndefined();
    const noMeter = forecaster(storeWith(21), 0.8, false);
    expect(noMeter.model(START + 21 * DAY)).toMatchObject({ source: 'smoothed', note: expect.stringContaining('no main meter') });
  });

  it('refits once a day: hours stored after a fit count from the next day on', () => {
    const store = storeWith(13);
    const f = forecaster(store);
    const now = START + 14 * DAY;
    expect(f.model(now).source).toBe('smoothed');
    const day14 = hoursFrom(START + 13 * DAY, 24).map((hourStartMs) => ({
      subject: 'location',
      hourStartMs,
      kwh: ownKw(hourStartMs) + tankKwh(hourStartMs),
      quality: 'measured' as const,
      samples: 60,
    }));
    store.upsertHourly([...day14, ...day14.map((r) => ({ ...r, subject: 'device:tank', kwh: tankKwh(r.hourStartMs) }))]);
    expect(f.model(now + 23 * H).source).toBe('smoothed');
    expect(f.model(now + DAY).source).toBe('learned');
  });

  it('learns the outdoor term from the temperatures this run saw at each hour, and plans with the forecast', () => {
    const tempC = (ms: number): number => 5 + 8 * Math.sin((ms - START) / H / 37) + 4 * Math.sin((ms - START) / H / 5);
    const heated = (ms: number): number => ownKw(ms) + 0.2 * Math.max(0, 15 - tempC(ms));
    const store = openStore({ path: join(tempDir('wattshift-load-'), 'state.db') });
    const hours = hoursFrom(START, 28 * 24);
    store.upsertHourly(
      hours.flatMap((hourStartMs) => [
        { subject: 'location', hourStartMs, kwh: heated(hourStartMs) + tankKwh(hourStartMs), quality: 'measured' as const, samples: 60 },
        { subject: 'device:tank', hourStartMs, kwh: tankKwh(hourStartMs), quality: 'measured' as const, samples: 60 },
      ]),
    );
    const now = START + 28 * DAY;
    const f = forecaster(store);
    for (const ms of hours) f.observe({ atMs: ms + 5_000, readings: new Map() }, tempC(ms));
    const model = f.model(now);
    expect(model.heating?.kwPerK).toBeCloseTo(0.2, 6);
    const outdoor = { source: 'metno' as const, points: [{ startMs: now, tempC: -5 }], updatedMs: now };
    const snap: PlanningSnapshot = {
      nowMs: now,
      prices: { forecast: null, advice: null, actual: null },
      events: [],
      tanks: [],
      evs: [],
      baseLoadKw: 0.8,
    };
    const input = buildPlanInput(config, withLoadForecast(snap, f, outdoor), new Map());
    expect(input.slots.length).toBeGreaterThan(20);
    input.slots.forEach((s, i) => expect((input.location.baseLoadKw as number[])[i]).toBeCloseTo(ownKw(s.startMs) + 0.2 * 20, 6));
    // The guard's figure for this hour at −5 °C.
    expect(f.guardBaseLoadKw(now, -5)).toBeCloseTo(ownKw(now) + 4, 6);
  });

  it("plans with the learned base load per slot and a thermometer tank's learned draws", () => {
    const now = START + 21 * DAY;
    const f = forecaster(storeWith(21));
    // Eight days of ticks at each hour's start: the tank loses 1.5 kWh at 07 and gains 2 kWh at 03.
    const C = 200 * KWH_PER_L_K;
    let tempC = 60;
    let counterKwh = 100;
    for (let ms = now - 8 * DAY; ms <= now; ms += H) {
      f.observe({ atMs: ms + 5_000, readings: new Map([['tank', { temperatureC: tempC, energyKwh: counterKwh } as DeviceReading]]) });
      const { hour } = localDayAndHour(ms, TZ, []);
      const heat = hour === 3 ? 2 : 0;
      const draw = hour === 7 ? 1.5 : 0;
      const loss = (config.devices[1]!.kind === 'hotWaterTank' ? config.devices[1]!.model.lossWPerK / 1000 : 0) * (tempC - 20);
      counterKwh += heat;
      tempC += (heat - draw - loss) / C;
    }
    const tankNow: TankNow = {
      config: config.devices[1] as TankNow['config'],
      measuredC: tempC,
      lastKnown: null,
      heatedSinceKwh: 0,
      legionellaLastMs: null,
      floorOverrideC: null,
    };
    const snap: PlanningSnapshot = {
      nowMs: now,
      prices: { forecast: null, advice: null, actual: null },
      events: [],
      tanks: [tankNow],
      evs: [],
      baseLoadKw: 0.8,
    };
    const input = buildPlanInput(config, withLoadForecast(snap, f), new Map());
    const base = input.location.baseLoadKw as number[];
    expect(input.slots.length).toBeGreaterThan(20);
    expect(base).toHaveLength(input.slots.length);
    input.slots.forEach((s, i) => expect(base[i]).toBeCloseTo(ownKw(s.startMs), 9));
    const draws = input.tanks[0]!.drawProfileKwh!;
    expect(draws[7]).toBeCloseTo(1.5, 6);
    expect(draws[3]).toBeCloseTo(0, 6);
    // Without the forecast the plan keeps one number and the configured draws.
    const plain = buildPlanInput(config, snap, new Map());
    expect(plain.location.baseLoadKw).toBe(0.8);
    expect(plain.tanks[0]!.drawProfileKwh).toEqual(tankNow.config.model.drawProfileKwh);
  });
});
