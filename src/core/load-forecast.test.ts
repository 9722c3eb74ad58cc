import { describe, expect, it } from 'vitest';
import { fitLoadModel, forecastLoad, localDayAndHour, MIN_LEARN_HOURS, weightedQuantile, type LoadHour } from './load-forecast.js';
import { configuredDraws, drawOfHour, fitDrawProfile, MIN_DRAW_HOURS, type TankHour } from './draw-forecast.js';
import { defaultDrawProfileKwh, KWH_PER_L_K } from './tank.js';
import type { TankParams } from './types.js';
import { localTimeToUtcMs } from './zoned-time.js';
import { rng } from './prng.js';

const TZ = 'Europe/Oslo';
const HOUR = 3_600_000;
/** Monday 2026-01-05 00:00 local. */
const START = localTimeToUtcMs(2026, 1, 5, 0, TZ);

/** A clean home: 0.4 kW at night, 1.2 kW in the evening, +0.5 kW all Saturday, +0.8 kW all Sunday. */
function trueKw(ms: number): number {
  const { weekday, hour } = localDayAndHour(ms, TZ, []);
  const day = hour >= 17 && hour < 22 ? 1.2 : hour >= 7 && hour < 17 ? 0.7 : 0.4;
  return day + (weekday === 6 ? 0.5 : weekday === 0 ? 0.8 : 0);
}

function history(days: number, kw: (ms: number, i: number) => number, extra: (ms: number) => Partial<LoadHour> = () => ({})): LoadHour[] {
  return Array.from({ length: days * 24 }, (_, i) => {
    const hourStartMs = START + i * HOUR;
    return { hourStartMs, kwh: kw(hourStartMs, i), ...extra(hourStartMs) };
  });
}

const fitOpts = (rows: LoadHour[]) => ({ timezone: TZ, nowMs: rows[rows.length - 1]!.hourStartMs + HOUR, smoothedKw: 0.9 });
const hoursFrom = (fromMs: number, n: number): number[] => Array.from({ length: n }, (_, i) => fromMs + i * HOUR);

describe('fitLoadModel', () => {
  it.each([
    { name: 'no history', rows: [] as LoadHour[] },
    { name: 'a day short of two weeks', rows: history(13, trueKw) },
    {
      name: 'two weeks whose hours are all gaps',
      rows: history(
        14,
        () => 0,
        () => ({ quality: 'gap' as const }),
      ),
    },
  ])('$name: the smoothed number, and says so', ({ rows }) => {
    const model = fitLoadModel(rows, { timezone: TZ, nowMs: START + 30 * 24 * HOUR, smoothedKw: 0.9 });
    expect(model.source).toBe('smoothed');
    expect(model.note).toContain(`${MIN_LEARN_HOURS} needed`);
    expect(forecastLoad(model, [START, START + HOUR])).toEqual([
      { meanKw: 0.9, lower80Kw: 0.9, upper80Kw: 0.9, lower95Kw: 0.9, upper95Kw: 0.9 },
      { meanKw: 0.9, lower80Kw: 0.9, upper80Kw: 0.9, lower95Kw: 0.9, upper95Kw: 0.9 },
    ]);
  });

  it('learns weekday, Saturday and Sunday profiles by local hour from two weeks', () => {
    const rows = history(14, trueKw);
    const model = fitLoadModel(rows, fitOpts(rows));
    expect(model.source).toBe('learned');
    expect(model.days).toBe('dayType');
    const next = hoursFrom(START + 14 * 24 * HOUR, 7 * 24);
    const got = forecastLoad(model, next);
    got.forEach((f, i) => expect(f.meanKw).toBeCloseTo(trueKw(next[i]!), 9));
  });

  it('a listed holiday is planned as a Sunday', () => {
    const rows = history(14, trueKw);
    const model = fitLoadModel(rows, { ...fitOpts(rows), holidays: ['01-20'] });
    const tuesdayNoon = localTimeToUtcMs(2026, 1, 20, 12, TZ);
    expect(forecastLoad(model, [tuesdayNoon])[0]!.meanKw).toBeCloseTo(0.7 + 0.8, 9);
  });

  it('missing hours and gap hours are skipped, not read as zero', () => {
    const rows = history(28, trueKw).flatMap((r, i) =>
      i % 13 === 0
        ? []
        : i % 17 === 0
          ? [{ ...r, kwh: 0, quality: 'gap' as const }]
          : i % 19 === 0
            ? [{ ...r, kwh: 0.01, quality: 'partial' as const }]
            : [r],
    );
    const model = fitLoadModel(rows, fitOpts(rows));
    expect(model.source).toBe('learned');
    const next = hoursFrom(START + 28 * 24 * HOUR, 7 * 24);
    forecastLoad(model, next).forEach((f, i) => expect(f.meanKw).toBeCloseTo(trueKw(next[i]!), 9));
  });

  it('recent weeks weigh more: a home that changed three weeks ago is forecast nearer its new load', () => {
    const rows = history(56, (ms, i) => trueKw(ms) + (i >= 35 * 24 ? 1 : 0));
    const model = fitLoadModel(rows, { ...fitOpts(rows), halfLifeDays: 7 });
    const f = forecastLoad(model, hoursFrom(START + 56 * 24 * HOUR, 24));
    f.forEach((x, i) => expect(x.meanKw - trueKw(START + 56 * 24 * HOUR + i * HOUR)).toBeGreaterThan(0.85));
  });

  it('one profile per weekday from eight weeks on', () => {
    // Wednesdays 0.3 kW higher than other weekdays: only a per-weekday profile sees it.
    const kw = (ms: number): number => trueKw(ms) + (localDayAndHour(ms, TZ, []).weekday === 3 ? 0.3 : 0);
    const short = history(49, kw);
    const long = history(56, kw);
    expect(fitLoadModel(short, fitOpts(short)).days).toBe('dayType');
    const model = fitLoadModel(long, fitOpts(long));
    expect(model.days).toBe('weekday');
    const wednesdayNoon = localTimeToUtcMs(2026, 3, 4, 12, TZ);
    expect(forecastLoad(model, [wednesdayNoon])[0]!.meanKw).toBeCloseTo(1.0, 9);
  });

  it.each([
    { name: 'a home heated below 15 °C', slope: 0.25, balance: 15, kept: true },
    { name: 'a home whose load does not follow the weather', slope: 0, balance: 15, kept: false },
  ])('outdoor term: $name', ({ slope, balance, kept }) => {
    const random = rng(7);
    const temp = (i: number): number => 5 + 8 * Math.sin(i / 37) + 4 * Math.sin(i / 5);
    const rows = history(
      28,
      (ms, i) => trueKw(ms) + slope * Math.max(0, balance - temp(i)) + (random() - 0.5) * 0.2,
      (ms) => ({ outdoorC: temp((ms - START) / HOUR) }),
    );
    const model = fitLoadModel(rows, fitOpts(rows));
    if (!kept) {
      expect(model.heating).toBeNull();
      return;
    }
    expect(model.heating?.balanceC).toBe(balance);
    expect(model.heating!.kwPerK).toBeCloseTo(slope, 1);
    const noon = localTimeToUtcMs(2026, 2, 3, 12, TZ);
    const [cold, mild] = forecastLoad(model, [noon, noon], [-5, 20]);
    expect(cold!.meanKw - mild!.meanKw).toBeCloseTo(20 * slope, 0);
    // Without a temperature for the slot the cell's own mean heating share stands in.
    expect(forecastLoad(model, [noon])[0]!.meanKw).toBeGreaterThan(mild!.meanKw);
  });

  it('the intervals are the residuals’ quantiles: about 80 % and 95 % of new hours inside', () => {
    const random = rng(3);
    const noisy = (ms: number): number => Math.max(0, trueKw(ms) + (random() + random() + random() - 1.5) * 0.6);
    const rows = history(42, noisy);
    const model = fitLoadModel(rows, fitOpts(rows));
    const next = hoursFrom(START + 42 * 24 * HOUR, 28 * 24);
    const got = forecastLoad(model, next);
    const actual = next.map(noisy);
    const share = (inside: (f: (typeof got)[number], y: number) => boolean): number =>
      got.filter((f, i) => inside(f, actual[i]!)).length / got.length;
    expect(share((f, y) => y >= f.lower80Kw && y <= f.upper80Kw)).toBeGreaterThan(0.74);
    expect(share((f, y) => y >= f.lower80Kw && y <= f.upper80Kw)).toBeLessThan(0.86);
    expect(share((f, y) => y >= f.lower95Kw && y <= f.upper95Kw)).toBeGreaterThan(0.91);
    for (const f of got) expect(f.upper95Kw).toBeGreaterThanOrEqual(f.upper80Kw);
  });

  it('a DST day keeps local hours: the 25-hour Sunday in October has two slots at local 02', () => {
    const rows = history(14, trueKw);
    const model = fitLoadModel(rows, fitOpts(rows));
    const dstDay = localTimeToUtcMs(2026, 10, 25, 0, TZ);
    const means = forecastLoad(model, hoursFrom(dstDay, 25)).map((f) => f.meanKw);
    // Night hours 00–06 (02 twice) and 22–23 at the Sunday night load.
    expect(means.filter((m) => Math.abs(m - (0.4 + 0.8)) < 1e-9)).toHaveLength(10);
  });
});

describe('weightedQuantile', () => {
  it.each([
    { q: 0.1, want: 1 },
    { q: 0.5, want: 3 },
    { q: 0.9, want: 10 },
  ])('q $q', ({ q, want }) => {
    expect(
      weightedQuantile(
        [
          { v: 3, w: 2 },
          { v: 1, w: 1 },
          { v: 10, w: 1 },
          { v: 2, w: 1 },
        ],
        q,
      ),
    ).toBe(want);
  });
});

describe('fitDrawProfile', () => {
  const tank: TankParams = { volumeL: 200, powerKw: 3, coldWaterC: 10, ambientC: 20, heatLossWPerK: 1.6, minC: 40, maxC: 75, control: 'continuous' };
  const C = 200 * KWH_PER_L_K;
  /** Morning and evening showers: 2 kWh at 07, 1.5 kWh at 21. */
  const trueDraw = (ms: number): number => ({ 7: 2, 21: 1.5 })[localDayAndHour(ms, TZ, []).hour] ?? 0;

  /** Simulates the tank hour by hour with the model itself, heating 3 kWh whenever it is below 55 °C. */
  function tankHours(days: number): TankHour[] {
    let tempC = 60;
    return Array.from({ length: days * 24 }, (_, i) => {
      const hourStartMs = START + i * HOUR;
      const heatInKwh = tempC < 55 ? 3 : 0;
      const lossKwh = (1.6 / 1000) * (tempC - 20);
      const endC = tempC + (heatInKwh - trueDraw(hourStartMs) - lossKwh) / C;
      const h = { hourStartMs, heatInKwh, startC: tempC, endC };
      tempC = endC;
      return h;
    });
  }

  it('one closed hour: heat in less the stored change less the standing loss', () => {
    // 60 → 59 °C with 1 kWh in: 1 + C·1 K − 0.064 kWh loss at 60 °C against 20 °C.
    expect(drawOfHour(tank, { hourStartMs: START, heatInKwh: 1, startC: 60, endC: 59 })).toBeCloseTo(1 + C - 0.064, 6);
  });

  it('learns the draws per local hour from a week of a thermometer’s hours', () => {
    const got = fitDrawProfile(tank, tankHours(8), { timezone: TZ, nowMs: START + 8 * 24 * HOUR });
    expect(got.source).toBe('learned');
    got.profileKwh.forEach((kwh, hour) => expect(kwh).toBeCloseTo(hour === 7 ? 2 : hour === 21 ? 1.5 : 0, 6));
  });

  it.each([
    { name: 'a configured profile', tank: { ...tank, drawProfileKwh: new Array<number>(24).fill(0.25) }, source: 'configured', first: 0.25 },
    { name: 'none configured', tank, source: 'default', first: defaultDrawProfileKwh[7] },
  ])('too little history keeps $name', ({ tank: t, source, first }) => {
    const got = fitDrawProfile(t, tankHours(6), { timezone: TZ, nowMs: START + 6 * 24 * HOUR });
    expect(6 * 24).toBeLessThan(MIN_DRAW_HOURS);
    expect(got.source).toBe(source);
    expect(got.profileKwh[7]).toBe(first);
    expect(got).toEqual(configuredDraws(t));
  });
});
