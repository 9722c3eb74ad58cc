import { describe, expect, it } from 'vitest';
import { learnRoomHour, MIN_HOURS, newRoomLearner, roomModelOf, type RoomLearnerState, type RoomObservation } from './room-model-learn.js';
import { defaultRoomModel, roomTempAfter } from './room-model.js';
import { rng } from './prng.js';
import type { RoomModelParams } from './types.js';

const truth: RoomModelParams = { heatCapacityKwhPerK: 1.4, heatLossKwPerK: 0.035, errorK: 0, source: 'learned' };
const prior = defaultRoomModel({ powerKw: 1.5 });
const GAINS_KW = 0.15;

/** A box-Muller normal draw. */
const normal = (r: () => number): number => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());

/**
 * Hours of a room with `truth`'s parameters: a 1.5 kW heater on a thermostat (19–21 °C) with some
 * random duty, outdoors −5 ± 6 °C over the day, the room's sensor read with `noiseK` noise.
 */
function hoursOf(n: number, seed: number, noiseK = 0.05, heater = true): RoomObservation[] {
  const r = rng(seed);
  const out: RoomObservation[] = [];
  let temp = 20;
  let read = temp + noiseK * normal(r);
  for (let h = 0; h < n; h++) {
    const outdoorC = -5 + 6 * Math.sin((2 * Math.PI * h) / 24) + 2 * normal(r) * 0.3;
    const duty = !heater ? 0 : temp < 19 ? 1 : temp > 21 ? 0 : r() < 0.5 ? r() : 0;
    const heatKwh = 1.5 * duty;
    temp = roomTempAfter(truth, { startC: temp, outdoorC, heatKw: heatKwh, gainsKw: GAINS_KW, hours: 1 });
    const next = temp + noiseK * normal(r);
    out.push({ startC: read, endC: next, outdoorC, heatKwh, hours: 1 });
    read = next;
  }
  return out;
}

const learnAll = (obs: ReadonlyArray<RoomObservation>, s = newRoomLearner(prior)): RoomLearnerState => obs.reduce(learnRoomHour, s);

describe('the room learner', () => {
  it.each([1, 2, 3])('learns a simulated room to within its stated uncertainty (seed %s)', (seed) => {
    const s = learnAll(hoursOf(24 * 21, seed));
    const { model, fit, notLearned } = roomModelOf(s, prior);
    expect(notLearned).toBeNull();
    expect(model.source).toBe('learned');
    expect(fit).not.toBeNull();
    expect(Math.abs(fit!.heatLossKwPerK - truth.heatLossKwPerK)).toBeLessThan(3 * fit!.heatLossSeKwPerK);
    expect(Math.abs(fit!.heatCapacityKwhPerK - truth.heatCapacityKwhPerK)).toBeLessThan(3 * fit!.heatCapacitySeKwhPerK);
    expect(fit!.heatLossSeKwPerK / fit!.heatLossKwPerK).toBeLessThan(0.2);
    expect(fit!.gainsKw).toBeCloseTo(GAINS_KW, 1);
    // The residual is the sensor's noise on both ends of the hour: √2 · 0.05 K.
    expect(model.errorK).toBeGreaterThan(0.05);
    expect(model.errorK).toBeLessThan(0.1);
    expect(fit!.r2).toBeGreaterThan(0.9);
    expect(model.heatLossKwPerK).toBe(fit!.heatLossKwPerK);
  });

  it('keeps the prior with too little data', () => {
    const s = learnAll(hoursOf(MIN_HOURS - 1, 4));
    const { model, notLearned } = roomModelOf(s, prior);
    expect(model).toEqual(prior);
    expect(notLearned).toBe(`${MIN_HOURS - 1} of ${MIN_HOURS} hours learned`);
  });

  it('keeps the prior when the heater was never on (heat and loss cannot be told apart)', () => {
    const s = learnAll(hoursOf(24 * 21, 5, 0.05, false));
    const { model, notLearned } = roomModelOf(s, prior);
    expect(model).toEqual(prior);
    expect(notLearned).toBe('0 of 12 hours with the heater on');
  });

  it('keeps the prior when the data are too noisy to pin the room down', () => {
    const s = learnAll(hoursOf(MIN_HOURS + 10, 6, 0.6));
    const { model, notLearned } = roomModelOf(s, prior);
    expect(model.source).toBe('default');
    expect(notLearned).toMatch(/uncertain|plausible/);
  });

  it.each<[string, Partial<RoomObservation>, string]>([
    ['a missing reading', { endC: Number.NaN }, 'missing'],
    ['an hour of 3 h', { hours: 3 }, 'hours'],
    ['a room at 85 °C', { endC: 85 }, 'range'],
    ['negative heat', { heatKwh: -1 }, 'heat'],
    ['a sensor jump of 6 K', { endC: 26 }, 'jump'],
  ])('rejects %s and says why', (_, change, reason) => {
    const s0 = learnAll(hoursOf(10, 7));
    const s = learnRoomHour(s0, { startC: 20, endC: 20.2, outdoorC: 0, heatKwh: 1, hours: 1, ...change });
    expect(s.last).toMatchObject({ accepted: false, reason });
    expect(s.rejected[reason as keyof typeof s.rejected]).toBe(1);
    expect(s.theta).toEqual(s0.theta);
    expect(s.hours).toBe(s0.hours);
  });

  it('rejects outliers and learns the same room as without them', () => {
    const clean = hoursOf(24 * 21, 8);
    const r = rng(9);
    // Every 25th hour is 1–3 K off (a door left open, a sun-lit sensor): not the room's model.
    const dirty = clean.map((o, h) => (h > 60 && h % 25 === 0 ? { ...o, endC: o.endC - 1 - 2 * r() } : o));
    // The next hour starts from the clean reading again, which the sensor gave.
    const s = learnAll(dirty);
    expect(s.rejected.outlier).toBeGreaterThan(15);
    const learned = roomModelOf(s, prior);
    const reference = roomModelOf(learnAll(clean), prior);
    expect(learned.model.source).toBe('learned');
    expect(learned.model.heatLossKwPerK).toBeCloseTo(reference.model.heatLossKwPerK, 3);
    expect(Math.abs(learned.model.heatCapacityKwhPerK - truth.heatCapacityKwhPerK)).toBeLessThan(3 * learned.fit!.heatCapacitySeKwhPerK);
  });

  it('learns a changed room after outliers keep coming', () => {
    const s = learnAll(hoursOf(24 * 14, 10));
    // The room now loses twice the heat: the first hours look like outliers, then they are the room.
    const leaky: RoomModelParams = { ...truth, heatLossKwPerK: 0.07 };
    let after = s;
    let temp = 20;
    for (let h = 0; h < 24 * 21; h++) {
      const heatKwh = temp < 19 ? 1.5 : h % 3 === 0 ? 0.7 : 0;
      const outdoorC = (h % 7) - 3;
      const next = roomTempAfter(leaky, { startC: temp, outdoorC, heatKw: heatKwh, gainsKw: 0, hours: 1 });
      after = learnRoomHour(after, { startC: temp, endC: next, outdoorC, heatKwh, hours: 1 });
      temp = next;
    }
    expect(after.outliersInRow).toBe(0);
    expect(after.last).toEqual({ accepted: true });
    expect(after.rejected.outlier).toBe(6);
    const { model, fit } = roomModelOf(after, prior);
    expect(model.source).toBe('learned');
    expect(Math.abs(fit!.heatLossKwPerK - 0.07)).toBeLessThan(3 * fit!.heatLossSeKwPerK);
  });

  it('is plain JSON', () => {
    const s = learnAll(hoursOf(100, 11));
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
    const more = hoursOf(110, 11).slice(100);
    expect(learnAll(more, JSON.parse(JSON.stringify(s)) as RoomLearnerState)).toEqual(learnAll(more, s));
  });
});
