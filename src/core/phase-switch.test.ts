import { describe, expect, it } from 'vitest';
import { choosePhases, deliverableKw, evPowerRangeKw, type PhaseChoiceInput } from './phase-switch.js';
import { wattsPerAmp } from './fuse.js';
import { plan } from './planner.js';
import type { PlanInput } from './types.js';
import { H, hourlySlots, osloMidnight as T0 } from '../../test/fixtures/price-slots.js';

const model = { minCurrentA: 6, maxCurrentA: 16, phases: 3 as const, voltageV: 230 };
const switching = { ...model, phaseSwitching: { enabled: true } };

describe('evPowerRangeKw', () => {
  it('without switching: the configured phases on the supply, as before', () => {
    expect(evPowerRangeKw(model)).toEqual({ minKw: 6 * 0.69, maxKw: 16 * 0.69 });
    expect(evPowerRangeKw({ ...model, phaseSwitching: { enabled: false } })).toEqual({ minKw: 6 * 0.69, maxKw: 16 * 0.69 });
    expect(evPowerRangeKw(model, 'IT').maxKw).toBeCloseTo((Math.sqrt(3) * 230 * 16) / 1000, 9);
  });

  it('with switching on TN: 1-phase minimum U·I to 3-phase maximum 3·U·I', () => {
    const r = evPowerRangeKw(switching, 'TN');
    expect(r.minKw).toBeCloseTo(1.38, 9);
    expect(r.maxKw).toBeCloseTo(11.04, 9);
  });

  it('with switching on IT (3×230 V): 1-phase between two lines U·I, 3-phase √3·U·I', () => {
    const r = evPowerRangeKw(switching, 'IT');
    expect(r.minKw).toBeCloseTo(1.38, 9);
    expect(r.maxKw).toBeCloseTo((Math.sqrt(3) * 230 * 16) / 1000, 9); // 6.37 kW, not 11.04
  });
});

/** 12 hourly slots: the first six cheap but capped at 3 kW for the whole location, the rest dear. */
function cappedInput(range: { minKw: number; maxKw: number }): PlanInput {
  const prices = [0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9];
  return {
    slots: hourlySlots(prices),
    timezone: 'Europe/Oslo',
    currency: 'EUR',
    tank: null,
    ev: { energyNeededKwh: 12, departureMs: T0 + 12 * H, minPowerKw: range.minKw, maxPowerKw: range.maxKw, efficiency: 1 },
    location: { limitKw: 17, baseLoadKw: 0, lpc: [{ startMs: T0, endMs: T0 + 6 * H, maxKw: 3, scope: 'location' }] },
  };
}

describe('planning with phase switching', () => {
  it('charges in slots only 1-phase power fits (a 3 kW cap), which the fixed 3-phase range cannot use', () => {
    const evIn = (p: ReturnType<typeof plan>) => p.slots.slice(0, 6).reduce((s, x) => s + (x.evs?.ev?.energyKwh ?? 0), 0);
    const fixed = plan(cappedInput(evPowerRangeKw(model, 'TN')), T0);
    const switched = plan(cappedInput(evPowerRangeKw(switching, 'TN')), T0);
    expect(evIn(fixed)).toBeCloseTo(0, 6);
    // Six cheap hours at up to 3 kW: 12 kWh needed, all of it in the cheap slots, none above the cap.
    expect(evIn(switched)).toBeCloseTo(12, 3);
    for (const s of switched.slots.slice(0, 6)) expect(s.evs?.ev?.energyKwh ?? 0).toBeLessThanOrEqual(3 + 1e-9);
    expect(switched.slots.slice(6).every((s) => (s.evs?.ev?.energyKwh ?? 0) < 1e-9)).toBe(true);
  });
});

const tn1 = { phases: 1 as const, wattsPerAmp: wattsPerAmp('TN', 1, 230), fuseMaxA: Infinity };
const tn3 = { phases: 3 as const, wattsPerAmp: wattsPerAmp('TN', 3, 230), fuseMaxA: Infinity };
const base: PhaseChoiceInput = {
  nowMs: 10 * 60_000,
  actual: 3,
  wantKw: 11,
  minCurrentA: 6,
  maxCurrentA: 16,
  options: [tn1, tn3],
  lastSwitchAtMs: undefined,
  minIntervalMs: 600_000,
};

describe('choosePhases', () => {
  it('keeps 3 phases for full power and goes to 1 phase for a wish below the 3-phase minimum', () => {
    expect(choosePhases(base)).toMatchObject({ phases: 3, switch: false });
    expect(choosePhases({ ...base, wantKw: 2.5 })).toMatchObject({
      phases: 1,
      switch: true,
      reason: expect.stringMatching(/2\.5 kW wanted: 1-phase gives 2\.5 kW, 3-phase 4\.1 kW/),
    });
    expect(choosePhases({ ...base, actual: 1, wantKw: 7 })).toMatchObject({ phases: 3, switch: true });
  });

  it('goes to 1 phase when the fuse leaves 3 phases less than the minimum current, and back when room returns', () => {
    const tight = [tn1, { ...tn3, fuseMaxA: 4 }];
    expect(choosePhases({ ...base, wantKw: Infinity, options: tight })).toMatchObject({
      phases: 1,
      switch: true,
      reason: expect.stringMatching(/fuse leaves 3-phase less than 6 A/),
    });
    expect(choosePhases({ ...base, actual: 1, wantKw: Infinity, lastSwitchAtMs: 0, nowMs: 700_000 })).toMatchObject({ phases: 3, switch: true });
  });

  it('never switches sooner than the minimum interval, nor while the car is not to charge, nor for a small gain', () => {
    expect(choosePhases({ ...base, wantKw: 2.5, lastSwitchAtMs: 300_000, nowMs: 600_000 })).toMatchObject({
      phases: 3,
      switch: false,
      reason: expect.stringMatching(/held 300 s more \(minimum interval\)/),
    });
    expect(choosePhases({ ...base, wantKw: 2.5, lastSwitchAtMs: 0, nowMs: 600_000 })).toMatchObject({ phases: 1, switch: true });
    expect(choosePhases({ ...base, wantKw: 0 })).toMatchObject({ phases: 3, switch: false });
    // In the gap between 3.68 kW (1-phase at 16 A) and 4.14 kW (3-phase at 6 A): no switch either way.
    expect(choosePhases({ ...base, wantKw: 3.9 })).toMatchObject({ switch: false });
    expect(choosePhases({ ...base, actual: 1, wantKw: 3.9 })).toMatchObject({ switch: false });
  });

  it('deliverable power: at least the minimum current, at most what the fuse and maxCurrentA allow', () => {
    expect(deliverableKw(tn3, 2, 6, 16)).toBeCloseTo(4.14, 9);
    expect(deliverableKw({ ...tn3, fuseMaxA: 10.6 }, 20, 6, 16)).toBeCloseTo(6.9, 9);
    expect(deliverableKw({ ...tn3, fuseMaxA: 5.9 }, 20, 6, 16)).toBe(0);
  });
});
