import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  HOUR_MS, accumulate, closeHoursBefore, hourlyFromCounter, hourlyFromPower, initialMeteringState, openHour,
  type CounterSample, type HourEnergy,
} from './metering.js';

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
    expect(brief(hours)).toEqual([['10', 2, 'complete'], ['11', 2, 'complete']]);
  });

  it('marks the first hour partial when readings start mid-hour, and emits nothing before', () => {
    const hours = hourlyFromCounter([{ atMs: min(30), kwh: 5 }, { atMs: min(60), kwh: 6 }, { atMs: min(120), kwh: 7 }]);
    expect(hours.map((h) => [h.kwh, h.coveredMs, h.quality])).toEqual([[1, HOUR_MS / 2, 'partial'], [1, HOUR_MS, 'complete']]);
  });

  it('leaves a long gap across boundaries uncovered instead of inventing a split', () => {
    const hours = hourlyFromCounter([
      { atMs: min(0), kwh: 0 },
      { atMs: min(40), kwh: 1 },
      { atMs: min(200), kwh: 9 }, // 160-min gap, crosses 11:00, 12:00, 13:00
      { atMs: min(240), kwh: 10 },
    ]);
    expect(brief(hours)).toEqual([['10', 1, 'partial'], ['11', 0, 'gap'], ['12', 0, 'gap'], ['13', 1, 'partial']]);
    expect(hours[0]!.coveredMs).toBe(40 * 60_000);
  });

  it('attributes a long gap that stays inside one hour exactly', () => {
    const hours = hourlyFromCounter([{ atMs: min(0), kwh: 0 }, { atMs: min(55), kwh: 3 }, { atMs: min(60), kwh: 3.5 }]);
    expect(brief(hours)).toEqual([['10', 3.5, 'complete']]);
  });

  it('splits a short gap across a boundary by interpolation', () => {
    const hours = hourlyFromCounter([{ atMs: min(0), kwh: 0 }, { atMs: min(55), kwh: 1 }, { atMs: min(65), kwh: 2 }, { atMs: min(120), kwh: 3 }]);
    expect(brief(hours)).toEqual([['10', 1.5, 'complete'], ['11', 1.5, 'complete']]);
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
    const samples: CounterSample[] = [{ atMs: min(0), kwh: 99_999 }, { atMs: min(30), kwh: 99_999.5 }, { atMs: min(60), kwh: 0.5 }];
    const wrapped = hourlyFromCounter(samples, { wrapKwh: 100_000 });
    expect(wrapped[0]!.kwh).toBeCloseTo(1.5, 6);
    expect(wrapped[0]!.quality).toBe('complete');
    const reset = hourlyFromCounter(samples);
    expect(reset[0]!.kwh).toBeCloseTo(0.5, 6);
    expect(reset[0]!.quality).toBe('partial');
  });

  it('treats an implausible jump as a discontinuity', () => {
    const hours = hourlyFromCounter(
      [{ atMs: min(0), kwh: 10 }, { atMs: min(1), kwh: 10.01 }, { atMs: min(2), kwh: 9000 }, { atMs: min(60), kwh: 9000.5 }],
      { maxPowerKw: 50 },
    );
    expect(hours[0]!.kwh).toBeCloseTo(0.51, 9);
    expect(hours[0]!.discontinuities).toBe(1);
    expect(hours[0]!.quality).toBe('partial');
  });

  it('ignores small read-out jitter below jitterKwh without double counting', () => {
    const hours = hourlyFromCounter(
      [{ atMs: min(0), kwh: 10 }, { atMs: min(20), kwh: 11 }, { atMs: min(40), kwh: 10.9995 }, { atMs: min(60), kwh: 12 }],
      { jitterKwh: 0.001 },
    );
    expect(brief(hours)).toEqual([['10', 2, 'complete']]);
  });
});

describe('accumulate (incremental)', () => {
  it('ignores out-of-order, duplicate and invalid readings', () => {
    let s = accumulate(initialMeteringState('counter'), { atMs: min(10), kwh: 1 }).state;
    expect(accumulate(s, { atMs: min(10), kwh: 2 }).ignored).toBe('out-of-order');
    expect(accumulate(s, { atMs: min(5), kwh: 2 }).ignored).toBe('out-of-order');
    expect(accumulate(s, { atMs: min(11), kwh: Number.NaN }).ignored).toBe('invalid');
    expect(accumulate(s, { atMs: min(11), kwh: -1 }).ignored).toBe('invalid');
    s = accumulate(s, { atMs: min(20), kwh: 2 }).state;
    expect(openHour(s)!.kwh).toBe(1);
  });

  it('closes an hour once a reading at its end arrives, and the state survives JSON', () => {
    let state = initialMeteringState('counter');
    const closed: HourEnergy[] = [];
    for (const s of [{ atMs: min(0), kwh: 1 }, { atMs: min(30), kwh: 2 }, { atMs: min(60), kwh: 3 }]) {
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
    expect(brief(r.closedHours)).toEqual([['10', 1, 'partial'], ['11', 0, 'gap']]);
    expect(closeHoursBefore(r.state, min(141)).closedHours).toEqual([]);
    const later = accumulate(r.state, { atMs: min(150), kwh: 4 });
    expect(later.closedHours).toEqual([]);
    expect(openHour(later.state)).toMatchObject({ kwh: 0, quality: 'gap' });
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
    expect(hours.map((h) => [h.kwh, h.quality, h.estimated])).toEqual([[1.5, 'complete', true], [3, 'complete', true]]);
  });

  it('interpolates power at the boundary', () => {
    const hours = hourlyFromPower([{ atMs: min(55), w: 0 }, { atMs: min(65), w: 2000 }], { includeOpen: true });
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
      steps: fc.array(fc.record({ dtMs: fc.integer({ min: 1, max: 15 * 60_000 }), dKwh: fc.double({ min: 0, max: 5, noNaN: true }) }), { minLength: 1, maxLength: 200 }),
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
      fc.property(fc.integer({ min: 0, max: 10_000 }), fc.array(fc.integer({ min: 1, max: 15 * 60_000 }), { minLength: 1, maxLength: 100 }), (w, steps) => {
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
      }),
      { numRuns: 200 },
    );
  });
});
