import { describe, expect, it } from 'vitest';
import {
  baselineMayReplace,
  chargedSoFar,
  deliveredBefore,
  evNeedFrom,
  fitsEvMinimum,
  leavesWithin,
  legionellaSlotOf,
  noneFrozen,
  powerOver,
  priceRanks,
  priceText,
  runOnReason,
  slotReason,
  tankReason,
} from './plan-steps.js';
import type { EvParams } from './types.js';

describe('the baseline as a safety net', () => {
  it.each([
    ['nothing is frozen without devices', undefined, undefined, true],
    ['nothing is frozen with free slots only', [undefined, undefined], [undefined], true],
    ['a frozen tank slot counts', [undefined, 1], [undefined], false],
    ['a frozen car slot counts', [undefined], [0], false],
  ])('noneFrozen: %s', (_name, tankFixed, evFixed, expected) => {
    expect(noneFrozen(tankFixed, evFixed)).toBe(expected);
  });

  it.each([
    ['fits without a car', [5], undefined, true],
    ['fits with energies of none or at least the minimum', [0, 4, 2], [2, 2, 2], true],
    ['does not fit with an energy between none and the minimum', [0, 1, 2], [2, 2, 2], false],
    ['fits an energy a rounding error below the minimum', [2 - 1e-7], [2], true],
  ])('fitsEvMinimum: %s', (_name, baseEv, minE, expected) => {
    expect(fitsEvMinimum(baseEv, minE)).toBe(expected);
  });

  const ok = { allFallback: false, baseRespectsLimits: true, baseFits: true, noneFrozen: true };
  it.each([
    ['may replace a plan with known prices, inside the limits, fitting and unfrozen', {}, true],
    ['may not replace the fallback plan', { allFallback: true }, false],
    ['may not replace when the baseline breaks the limits', { baseRespectsLimits: false }, false],
    ["may not replace when the baseline does not fit the car's minimum", { baseFits: false }, false],
    ['may not replace when slots are frozen', { noneFrozen: false }, false],
  ])('baselineMayReplace: %s', (_name, change, expected) => {
    expect(baselineMayReplace({ ...ok, ...change })).toBe(expected);
  });
});

describe('legionellaSlotOf', () => {
  const leg = { level: 10, bySlot: 2 };
  it.each([
    ['is the first slot at the level', [5, 10, 12], 1],
    ['counts a slot a rounding error below the level', [5, 10 - 1e-7, 12], 1],
    ['ignores slots after the deadline', [5, 6, 7, 12], -1],
    ['is none when the tank never reaches the level', [5, 6, 7], -1],
  ])('%s', (_name, tankE, expected) => {
    expect(legionellaSlotOf(tankE, leg)).toBe(expected);
  });
});

describe('priceRanks', () => {
  it.each([
    ['ranks the cheapest first', [0.3, 0.1, 0.2], [3, 1, 2]],
    ['keeps slot order among equal prices', [0.2, 0.2, 0.1], [2, 3, 1]],
    ['ranks nothing for no slots', [], []],
  ])('%s', (_name, price, expected) => {
    expect(priceRanks(price)).toEqual(expected);
  });
});

describe('per-slot figures', () => {
  it.each([
    ['adds up the battery energy slot by slot', [2, 0, 4], 0.5, [1, 1, 3]],
    ['is empty without slots', [], 0.9, []],
  ])('chargedSoFar %s', (_name, evE, efficiency, expected) => {
    expect(chargedSoFar(evE, efficiency)).toEqual(expected);
  });

  it.each([
    ['counts what was delivered in the running slot', 0, 0, 10, { slotDeliveredKwh: 1.5 }, 1.5],
    ["counts nothing when the plan starts at the slot's start", 0, 10, 10, { slotDeliveredKwh: 1.5 }, 0],
    ['counts nothing in later slots', 1, 0, 10, { slotDeliveredKwh: 1.5 }, 0],
    ['counts nothing for a negative delivery', 0, 0, 10, { slotDeliveredKwh: -1 }, 0],
    ['counts nothing without a device', 0, 0, 10, null, 0],
  ])('deliveredBefore %s', (_name, t, startMs, nowMs, d, expected) => {
    expect(deliveredBefore(t, startMs, nowMs, d)).toBe(expected);
  });

  it.each([
    ['is energy over time', 3, 1.5, 2],
    ['is 0 without time', 3, 0, 0],
  ])('powerOver %s', (_name, e, h, expected) => {
    expect(powerOver(e, h)).toBe(expected);
  });

  it.each([
    ['notes a departure inside the slot', 150, { leavesMs: 150 }],
    ["notes nothing for a departure at the slot's end", 200, {}],
    ["notes nothing for a departure at the slot's start", 100, {}],
    ['notes nothing without a car', undefined, {}],
  ])('leavesWithin %s', (_name, departureMs, expected) => {
    expect(leavesWithin(departureMs, { startMs: 100, endMs: 200 })).toEqual(expected);
  });
});

describe("the slot's reason", () => {
  it.each([
    ['names the tank and its energy', undefined, 'tank 1.50 kWh'],
    ['names the comfort target it heats for', { label: 'morning', tempC: 62 }, 'tank 1.50 kWh for morning (≥ 62 °C)'],
  ])('tankReason %s', (_name, forComfort, expected) => {
    expect(tankReason('tank', 1.5, forComfort)).toBe(expected);
  });

  it.each([
    ['heats on in a paid-to-consume slot', 0.5, '0.50 kWh more: heats on to 75 °C (paid to consume)'],
    ['takes less once the tank is full', -0.25, '0.25 kWh less: the tank is full from heating on'],
  ])('runOnReason %s', (_name, extra, expected) => {
    expect(runOnReason(extra, 75)).toBe(expected);
  });

  it.each([
    ['leaves out a zero delta', 0, '0.1234 EUR/kWh (rank 2/5, actual)'],
    ['signs a positive delta', 0.01, '0.1234 EUR/kWh (rank 2/5, delta +0.0100, actual)'],
    ['signs a negative delta', -0.02, '0.1234 EUR/kWh (rank 2/5, delta -0.0200, actual)'],
  ])('priceText %s', (_name, delta, expected) => {
    expect(priceText({ price: 0.12341, delta, source: 'actual' }, 2, 5, 'EUR')).toBe(expected);
  });

  it.each([
    ['says idle with nothing planned', [], [], 'idle at P'],
    ['joins what each device takes', ['tank 1.00 kWh', 'car 2.00 kWh'], [], 'tank 1.00 kWh, car 2.00 kWh at P'],
    ['names what binds the slot', ['car 2.00 kWh'], ['lpc', 'evPower'], 'car 2.00 kWh at P; bound by lpc, evPower'],
  ])('slotReason %s', (_name, parts, binding, expected) => {
    expect(slotReason(parts, 'P', binding)).toBe(expected);
  });
});

describe('evNeedFrom', () => {
  const car: EvParams = { departureMs: 0, minPowerKw: 1, maxPowerKw: 11, efficiency: 0.9 };
  it.each<[string, Partial<EvParams>, ReturnType<typeof evNeedFrom>]>([
    ['is the estimate when one is given', { energyNeededKwh: 12, socPct: 40 }, { estimateKwh: 12 }],
    [
      'is the state of charge without an estimate',
      { socPct: 40, targetSocPct: 80, capacityKwh: 60 },
      { socPct: 40, targetSocPct: 80, capacityKwh: 60 },
    ],
    ['fills in a missing target and capacity with 0', { socPct: 40 }, { socPct: 40, targetSocPct: 0, capacityKwh: 0 }],
    ['is a zero estimate with nothing known', {}, { estimateKwh: 0 }],
  ])('%s', (_name, change, expected) => {
    expect(evNeedFrom({ ...car, ...change })).toEqual(expected);
  });
});
