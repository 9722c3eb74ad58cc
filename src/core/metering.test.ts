import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  HOUR_MS,
  accumulate,
  accumulatePower,
  closeHoursBefore,
  initialMeteringState,
  openHour,
  type AccumulateResult,
  type CounterSample,
  type HourEnergy,
  type MeteringOptions,
  type MeteringState,
  type PowerSample,
} from './metering.js';

type BatchOptions = MeteringOptions & { includeOpen?: boolean };

/** Hourly energy of a time-ordered series of readings fed one by one (with the open hour if asked). */
function hourlyOf<S>(
  method: 'counter' | 'power',
  step: (st: MeteringState, s: S, o: MeteringOptions) => AccumulateResult,
  samples: readonly S[],
  options: BatchOptions,
): HourEnergy[] {
  let state = initialMeteringState(method);
  const out: HourEnergy[] = [];
  for (const s of samples) {
    const r = step(state, s, options);
    state = r.state;
    out.push(...r.closedHours);
  }
  const open = options.includeOpen ? openHour(state) : null;
  return open ? [...out, open] : out;
}
const hourlyFromCounter = (samples: readonly CounterSample[], options: BatchOptions = {}): HourEnergy[] =>
  hourlyOf('counter', accumulate, samples, options);
const hourlyFromPower = (samples: readonly PowerSample[], options: BatchOptions = {}): HourEnergy[] =>
  hourlyOf('power', accumulatePower, samples, options);

const T0 = Date.UTC(2026, 0, 15, 10, 0, 0);
const min = (m: number): number => T0 + m * 60_000;
const brief = (hs: HourEnergy[]) => hs.map((h) => [new Date(h.hourStartMs).toISOString().slice(11, 13), +h.kwh.toFixed(9), h.quality]);

describe('hourlyFromCounter', () => {
  it('takes the counter difference, interpolating linearly at hour boundaries', () => {
    const hours = hourlyFromCounter([
      { atMs: min(0), kwh: 100 },
      { atMs: min(55), kwh: 101 },
      { atMs: min(65), kwh: 103 }, // 2 kWh over 10 min, boundary at 60 → 1 + 1
      { atMs: min(120), kwh: 104 },
    ]);
    expect(brief(hours)).toEqual([
      ['10', 2, 'complete'],
      ['11', 2, 'complete'],
    ]);
  });

  it('marks the first hour partial when readings start mid-hour, and emits nothing before', () => {
    const hours = hourlyFromCounter([
      { atMs: min(30), kwh: 5 },
      { atMs: min(60), kwh: 6 },
      { atMs: min(120), kwh: 7 },
    ]);
    expect(hours.map((h) => [h.kwh, h.coveredMs, h.quality])).toEqual([
      [1, HOUR_MS / 2, 'partial'],
      [1, HOUR_MS, 'complete'],
    ]);
  });

  it('leaves a long gap across boundaries uncovered instead of inventing a split', () => {
    const hours = hourlyFromCounter([
      { atMs: min(0), kwh: 0 },
      { atMs: min(40), kwh: 1 },
      { atMs: min(200), kwh: 9 }, // 160-min gap, crosses 11:00, 12:00, 13:00
      { atMs: min(240), kwh: 10 },
    ]);
    expect(brief(hours)).toEqual([
      ['10', 1, 'partial'],
      ['11', 0, 'gap'],
      ['12', 0, 'gap'],
      ['13', 1, 'partial'],
    ]);
    expect(hours[0]!.coveredMs).toBe(40 * 60_000);
  });

  it('attributes a long gap that stays inside one hour exactly', () => {
    const hours = hourlyFromCounter([
      { atMs: min(0), kwh: 0 },
      { atMs: min(55), kwh: 3 },
      { atMs: min(60), kwh: 3.5 },
    ]);
    expect(brief(hours)).toEqual([['10', 3.5, 'complete']]);
  });

  it('splits a short gap across a boundary by interpolation, and marks both hours interpolated', () => {
    const hours = hourlyFromCounter([
      { atMs: min(0), kwh: 0 },
      { atMs: min(55), kwh: 1 },
      { atMs: min(65), kwh: 2 },
      { atMs: min(120), kwh: 3 },
    ]);
    expect(brief(hours)).toEqual([
      ['10', 1.5, 'complete'],
      ['11', 1.5, 'complete'],
    ]);
    expect(hours.map((h) => h.interpolated)).toEqual([true, true]);
  });

  it('does not mark hours split by an interval as short as a normal read, unless the reader restarted in it', () => {
    const read = (s: number, kwh: number, resumed?: boolean): CounterSample => ({ atMs: min(0) + s * 1000, kwh, ...(resumed ? { resumed } : {}) });
    const samples = [read(0, 0), read(3570, 1), read(3630, 1.1), read(7200, 2)];
    expect(hourlyFromCounter(samples).map((h) => [h.quality, h.interpolated])).toEqual([
      ['complete', false],
      ['complete', false],
    ]);
    expect(hourlyFromCounter(samples, { maxReadIntervalMs: 30_000 }).map((h) => h.interpolated)).toEqual([true, true]);
    samples[2] = read(3630, 1.1, true);
    expect(hourlyFromCounter(samples).map((h) => h.interpolated)).toEqual([true, true]);
    // A restart inside an hour splits nothing.
    expect(hourlyFromCounter([read(0, 0), read(1800, 1, true), read(3600, 2)]).map((h) => [h.quality, h.interpolated])).toEqual([
      ['complete', false],
    ]);
  });

  it('keeps the energy before a counter reset and marks the reset interval uncovered', () => {
    const hours = hourlyFromCounter([
      { atMs: min(0), kwh: 500 },
      { atMs: min(30), kwh: 501 },
      { atMs: min(31), kwh: 0.01 }, // meter exchanged / reset
      { atMs: min(60), kwh: 0.5 },
    ]);
    expect(hours).toHaveLength(1);
    expect(hours[0]!.kwh).toBeCloseTo(1.49, 9);
    expect(hours[0]!.quality).toBe('partial');
    expect(hours[0]!.coveredMs).toBe(59 * 60_000);
    expect(hours[0]!.discontinuities).toBe(1);
  });

  it('handles a wrap when a modulus is configured, and a reset otherwise', () => {
    const samples: CounterSample[] = [
      { atMs: min(0), kwh: 99_999 },
      { atMs: min(30), kwh: 99_999.5 },
      { atMs: min(60), kwh: 0.5 },
    ];
    const wrapped = hourlyFromCounter(samples, { wrapKwh: 100_000 });
    expect(wrapped[0]!.kwh).toBeCloseTo(1.5, 6);
    expect(wrapped[0]!.quality).toBe('complete');
    const reset = hourlyFromCounter(samples);
    expect(reset[0]!.kwh).toBeCloseTo(0.5, 6);
    expect(reset[0]!.quality).toBe('partial');
  });

  it('treats an implausible jump as a discontinuity', () => {
    const hours = hourlyFromCounter(
      [
        { atMs: min(0), kwh: 10 },
        { atMs: min(1), kwh: 10.01 },
        { atMs: min(2), kwh: 9000 },
        { atMs: min(60), kwh: 9000.5 },
      ],
      { maxPowerKw: 50 },
    );
    expect(hours[0]!.kwh).toBeCloseTo(0.51, 9);
    expect(hours[0]!.discontinuities).toBe(1);
    expect(hours[0]!.quality).toBe('partial');
  });

  it('leaves a counter glitch down and back up out of the hour, whatever its size', () => {
    // 2 kW, read every 10 s; the meter answers 40 kWh too low for half a minute at 10:30.
    const samples: CounterSample[] = [];
    for (let s = 0; s <= 3600; s += 10) {
      const glitch = s >= 1800 && s < 1830 ? -40 : 0;
      samples.push({ atMs: min(0) + s * 1000, kwh: 100 + (2 * s) / 3600 + glitch });
    }
    const hours = hourlyFromCounter(samples, { maxPowerKw: 3 });
    expect(hours).toHaveLength(1);
    expect(hours[0]!.quality).toBe('partial');
    expect(hours[0]!.discontinuities).toBe(2);
    // Two 10 s intervals uncovered: 20 s of 2 kW missing, nothing invented.
    expect(hours[0]!.coveredMs).toBe(HOUR_MS - 20_000);
    expect(hours[0]!.kwh).toBeCloseTo(2 - (2 * 20) / 3600, 9);
  });

  it('allows a quarter of an hour of rated power over shorter intervals (late or bunched readings)', () => {
    // A counter in whole Wh at 11 kW, read 2 s apart (steps of 6 and 7 Wh look like 12.6 kW); the
    // value of 10:30:00 arrives 3 min late, just before the next one: 550 Wh within 2 s.
    const samples: CounterSample[] = [];
    for (let s = 0; s <= 3600; s += 2) {
      if (s > 1800 && s < 1980) continue;
      samples.push({ atMs: min(0) + (s === 1800 ? 1978 : s) * 1000, kwh: Math.floor((11_000 * s) / 3600) / 1000 });
    }
    const hours = hourlyFromCounter(samples, { maxPowerKw: 11 });
    expect(hours[0]).toMatchObject({ quality: 'complete', discontinuities: 0 });
    expect(hours[0]!.kwh).toBeCloseTo(11, 9);
    // What a quarter of an hour at 11 kW cannot explain is a jump.
    const jumped = hourlyFromCounter([...samples.slice(0, 10), ...samples.slice(10).map((x) => ({ ...x, kwh: x.kwh + 2.8 }))], { maxPowerKw: 11 });
    expect(jumped[0]).toMatchObject({ quality: 'partial', discontinuities: 1 });
  });

  it('ignores small read-out jitter below jitterKwh without double counting', () => {
    const hours = hourlyFromCounter(
      [
        { atMs: min(0), kwh: 10 },
        { atMs: min(20), kwh: 11 },
        { atMs: min(40), kwh: 10.9995 },
        { atMs: min(60), kwh: 12 },
      ],
      { jitterKwh: 0.001 },
    );
    expect(brief(hours)).toEqual([['10', 2, 'complete']]);
  });
});

describe('accumulate (incremental)', () => {
  it('ignores duplicate and invalid readings', () => {
    let s = accumulate(initialMeteringState('counter'), { atMs: min(10), kwh: 1 }).state;
    expect(accumulate(s, { atMs: min(10), kwh: 2 }).ignored).toBe('duplicate');
    expect(accumulate(s, { atMs: min(11), kwh: Number.NaN }).ignored).toBe('invalid');
    expect(accumulate(s, { atMs: min(11), kwh: -1 }).ignored).toBe('invalid');
    s = accumulate(s, { atMs: min(20), kwh: 2 }).state;
    expect(openHour(s)!.kwh).toBe(1);
  });

  it('closes an hour once a reading at its end arrives, and the state survives JSON', () => {
    let state = initialMeteringState('counter');
    const closed: HourEnergy[] = [];
    for (const s of [
      { atMs: min(0), kwh: 1 },
      { atMs: min(30), kwh: 2 },
      { atMs: min(60), kwh: 3 },
    ]) {
      const r = accumulate(JSON.parse(JSON.stringify(state)), s);
      state = r.state;
      closed.push(...r.closedHours);
      if (s.atMs < min(60)) expect(r.closedHours).toEqual([]);
    }
    expect(brief(closed)).toEqual([['10', 2, 'complete']]);
  });

  it('does not mutate the state it is given', () => {
    const s0 = accumulate(initialMeteringState('counter'), { atMs: min(0), kwh: 1 }).state;
    const copy = JSON.parse(JSON.stringify(s0));
    accumulate(s0, { atMs: min(90), kwh: 5 });
    expect(s0).toEqual(copy);
  });

  it('closeHoursBefore closes hours a late reading could no longer cover, without double emission', () => {
    let state = accumulate(initialMeteringState('counter'), { atMs: min(0), kwh: 1 }).state;
    state = accumulate(state, { atMs: min(50), kwh: 2 }).state;
    // device silent; at 11:10 hour 10 could still be covered by a reading before 11:05
    expect(closeHoursBefore(state, min(70)).closedHours).toEqual([]);
    const r = closeHoursBefore(state, min(140));
    // at 12:20 no reading can cover 10:50..12:00 any more (a reading now spans > 15 min)
    expect(brief(r.closedHours)).toEqual([
      ['10', 1, 'partial'],
      ['11', 0, 'gap'],
    ]);
    expect(closeHoursBefore(r.state, min(141)).closedHours).toEqual([]);
    const later = accumulate(r.state, { atMs: min(150), kwh: 4 });
    expect(later.closedHours).toEqual([]);
    expect(openHour(later.state)).toMatchObject({ kwh: 0, quality: 'gap' });
  });
});

describe('clock steps', () => {
  /** Feeds counter readings; returns every closed hour and each result's discontinuity. */
  function feed(samples: CounterSample[]): { hours: HourEnergy[]; kinds: (string | undefined)[]; state: ReturnType<typeof initialMeteringState> } {
    let state = initialMeteringState('counter');
    const hours: HourEnergy[] = [];
    const kinds: (string | undefined)[] = [];
    for (const s of samples) {
      const r = accumulate(state, s);
      expect(r.ignored).toBeUndefined();
      state = r.state;
      hours.push(...r.closedHours);
      kinds.push(r.discontinuity?.kind);
    }
    return { hours, kinds, state };
  }
  /** A steady 1 kW load read every minute of real time, from real minute `from` to `to`, on a clock offset by `offsetMin`. */
  const steady = (from: number, to: number, offsetMin: number): CounterSample[] =>
    Array.from({ length: to - from + 1 }, (_, i) => ({ atMs: min(from + i + offsetMin), kwh: (from + i) / 60 }));

  it('after a step back, closes the open hour as it stands and meters on from the new time at once', () => {
    // Real 10:00–10:40 on a clock 20 min ahead (10:20–11:00 shown), then NTP sets it right at real 10:40.
    const { hours, kinds, state } = feed([...steady(0, 40, 20), ...steady(41, 125, 0)]);
    expect(kinds.filter(Boolean)).toEqual(['clock-back']);
    expect(kinds.indexOf('clock-back')).toBe(41);
    // 10:00 (shown 10:20–11:00, 40 min), then the step closes 11:00 (empty); 10:00 again from the
    // new timeline (10:41–11:00) and 11:00 in full.
    expect(hours.map((h) => [new Date(h.hourStartMs).toISOString().slice(11, 13), +h.kwh.toFixed(9), h.quality])).toEqual([
      ['10', +(40 / 60).toFixed(9), 'partial'],
      ['11', 0, 'gap'],
      ['10', +(19 / 60).toFixed(9), 'partial'],
      ['11', 1, 'complete'],
    ]);
    // The minute across the step (real 10:40–10:41) is the only energy not in any hour.
    const total = hours.reduce((a, h) => a + h.kwh, 0) + (openHour(state)?.kwh ?? 0);
    expect(total).toBeCloseTo(125 / 60 - 1 / 60, 9);
  });

  it('never puts energy from both sides of a step into one emitted hour', () => {
    // Step back by 5 minutes inside an hour: the hour is emitted twice, each copy one timeline.
    const { hours } = feed([...steady(0, 30, 0), ...steady(31, 120, -5)]);
    const tens = hours.filter((h) => new Date(h.hourStartMs).getUTCHours() === 10);
    expect(tens.map((h) => [+h.kwh.toFixed(9), h.coveredMs / 60_000])).toEqual([
      [0.5, 30],
      [+(34 / 60).toFixed(9), 34],
    ]);
    for (const h of hours) expect(h.kwh).toBeLessThanOrEqual(h.coveredMs / HOUR_MS + 1e-9);
  });

  it('treats a step back for a power meter the same way', () => {
    let state = initialMeteringState('power');
    for (const atMs of [min(0), min(30)]) state = accumulatePower(state, { atMs, w: 1000 }).state;
    const r = accumulatePower(state, { atMs: min(10), w: 1000 });
    expect(r.discontinuity).toEqual({ kind: 'clock-back', from: { atMs: min(30), value: 1000 } });
    expect(r.closedHours.map((h) => [h.kwh, h.quality])).toEqual([[0.5, 'partial']]);
    expect(openHour(accumulatePower(r.state, { atMs: min(20), w: 1000 }).state)).toMatchObject({ kwh: 1 / 6, coveredMs: 600_000 });
  });
});

describe('hourlyFromPower', () => {
  it('integrates by the trapezoid rule, splits at boundaries, and marks estimated', () => {
    const hours = hourlyFromPower([
      { atMs: min(0), w: 1000 },
      { atMs: min(30), w: 1000 },
      { atMs: min(60), w: 3000 }, // ramp: average 2000 W for 30 min = 1 kWh
      { atMs: min(120), w: 3000 },
    ]);
    expect(hours.map((h) => [h.kwh, h.quality, h.estimated])).toEqual([
      [1.5, 'complete', true],
      [3, 'complete', true],
    ]);
  });

  it('interpolates power at the boundary', () => {
    const hours = hourlyFromPower(
      [
        { atMs: min(55), w: 0 },
        { atMs: min(65), w: 2000 },
      ],
      { includeOpen: true },
    );
    // p(60) = 1000 W: [55,60] avg 500 W → 1/24 kWh; [60,65] avg 1500 W → 0.125 kWh
    expect(hours[0]!.kwh).toBeCloseTo(1 / 24, 12);
    expect(hours[1]!.kwh).toBeCloseTo(0.125, 12);
    expect(hours[1]!.quality).toBe('partial');
  });
});

describe('properties', () => {
  const arbSeries = fc
    .record({
      startOffsetMs: fc.integer({ min: 0, max: HOUR_MS - 1 }),
      start: fc.double({ min: 0, max: 1e6, noNaN: true }),
      steps: fc.array(fc.record({ dtMs: fc.integer({ min: 1, max: 15 * 60_000 }), dKwh: fc.double({ min: 0, max: 5, noNaN: true }) }), {
        minLength: 1,
        maxLength: 200,
      }),
    })
    .map(({ startOffsetMs, start, steps }) => {
      const out: CounterSample[] = [{ atMs: T0 + startOffsetMs, kwh: start }];
      for (const s of steps) {
        const last = out[out.length - 1]!;
        out.push({ atMs: last.atMs + s.dtMs, kwh: last.kwh + s.dKwh });
      }
      return out;
    });

  it('without gaps or resets, the hourly sum equals the counter difference and hours are contiguous', () => {
    fc.assert(
      fc.property(arbSeries, (samples) => {
        const hours = hourlyFromCounter(samples, { includeOpen: true });
        const first = samples[0]!;
        const last = samples[samples.length - 1]!;
        const sum = hours.reduce((a, h) => a + h.kwh, 0);
        expect(Math.abs(sum - (last.kwh - first.kwh))).toBeLessThanOrEqual(1e-9 * Math.max(1, last.kwh));
        hours.forEach((h, i) => {
          expect(h.kwh).toBeGreaterThanOrEqual(-1e-9);
          if (i > 0) expect(h.hourStartMs).toBe(hours[i - 1]!.hourStartMs + HOUR_MS);
          if (i > 0 && i < hours.length - 1) expect(h.quality).toBe('complete');
        });
        expect(hours.reduce((a, h) => a + h.coveredMs, 0)).toBe(last.atMs - first.atMs);
      }),
      { numRuns: 300 },
    );
  });

  it('feeding one by one with persisted state equals the batch result', () => {
    fc.assert(
      fc.property(arbSeries, (samples) => {
        let state = initialMeteringState('counter');
        const inc: HourEnergy[] = [];
        for (const s of samples) {
          const r = accumulate(JSON.parse(JSON.stringify(state)), s);
          state = r.state;
          inc.push(...r.closedHours);
        }
        expect(inc).toEqual(hourlyFromCounter(samples));
      }),
      { numRuns: 100 },
    );
  });

  it('is exact for a piecewise-linear consumption sampled at its breakpoints', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 4, noNaN: true }), { minLength: 4, maxLength: 48 }), (kwPerHalfHour) => {
        // constant power per half hour, sampled every 10 minutes from an hour start
        const samples: CounterSample[] = [{ atMs: T0, kwh: 0 }];
        kwPerHalfHour.forEach((kw) => {
          for (let i = 0; i < 3; i++) {
            const last = samples[samples.length - 1]!;
            samples.push({ atMs: last.atMs + 600_000, kwh: last.kwh + kw / 6 });
          }
        });
        const hours = hourlyFromCounter(samples);
        hours.forEach((h, i) => {
          const expected = (kwPerHalfHour[2 * i]! + kwPerHalfHour[2 * i + 1]!) / 2;
          expect(h.kwh).toBeCloseTo(expected, 9);
        });
        expect(hours).toHaveLength(Math.floor(kwPerHalfHour.length / 2));
      }),
      { numRuns: 200 },
    );
  });

  it('power integration of a constant load equals power × time, however it is sampled', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000 }),
        fc.array(fc.integer({ min: 1, max: 15 * 60_000 }), { minLength: 1, maxLength: 100 }),
        (w, steps) => {
          const samples = [{ atMs: T0, w }];
          for (const dt of steps) samples.push({ atMs: samples[samples.length - 1]!.atMs + dt, w });
          const hours = hourlyFromPower(samples, { includeOpen: true });
          const total = hours.reduce((a, h) => a + h.kwh, 0);
          const expected = (w * (samples[samples.length - 1]!.atMs - T0)) / 3_600_000_000;
          expect(Math.abs(total - expected)).toBeLessThanOrEqual(1e-9 * Math.max(1, expected));
          for (const h of hours) {
            expect(h.estimated).toBe(true);
            expect(h.kwh).toBeCloseTo((w * h.coveredMs) / 3_600_000_000, 9);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
