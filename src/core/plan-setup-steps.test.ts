import { describe, expect, it } from 'vitest';
import {
  baseLoadAt,
  baseLoadOverCap,
  capBinds,
  evBatteryNeedKwh,
  evRankingPrices,
  evSlotEnergy,
  frozenPrevious,
  frozenRest,
  frozenWindowEndMs,
  inHourWindow,
  legionellaDeadline,
  legionellaUnreachable,
  lowestCapKw,
  remainingSlots,
  shortfallPenalty,
  slotFractions,
  slotHeadroom,
  tankSlotEnergy,
  tankStartTemp,
} from './plan-setup-steps.js';
import type { EvParams, LpcCap, Plan, PriceSlot, PriceSource, TankParams } from './types.js';

const H = 3_600_000;
const slot = (i: number, price = 0.1, source: PriceSource = 'actual'): PriceSlot => ({
  startMs: i * H,
  endMs: (i + 1) * H,
  spot: price,
  delta: 0,
  fees: 0,
  price,
  source,
});
const hours = (n: number): PriceSlot[] => Array.from({ length: n }, (_, i) => slot(i));

describe('remainingSlots and slotFractions', () => {
  it.each([
    ['keeps every slot before the first starts', -1, 0, 3],
    ['keeps the running slot', 1.5 * H, 1, 2],
    ['starts at the next slot on a boundary', 2 * H, 2, 1],
    ['keeps none after the last ends', 3 * H, -1, 0],
  ])('%s', (_name, nowMs, offset, count) => {
    const left = remainingSlots(hours(3), nowMs);
    expect(left.offset).toBe(offset);
    expect(left.slots).toHaveLength(count);
  });

  it.each([
    ['counts a slot ahead whole', 0, [1, 1]],
    ['counts the running slot by the part left', 0.25 * H, [0.75, 1]],
  ])('slotFractions %s', (_name, nowMs, expected) => {
    expect(slotFractions(hours(2), nowMs, H)).toEqual(expected);
  });
});

describe('shortfallPenalty', () => {
  it.each([
    ['is 1000 for prices below 1 in size', [0.2, -0.5], 1000],
    ['is 1000 times the largest price in size', [0.2, -3, 2], 3000],
    ['is 1000 for no prices', [], 1000],
  ])('%s', (_name, price, expected) => {
    expect(shortfallPenalty(price)).toBe(expected);
  });
});

describe('capBinds', () => {
  const ids = { tankId: 'tank', evId: 'car' };
  it.each<[string, LpcCap, LpcCap['scope'], boolean]>([
    ['binds its own scope', { startMs: 0, endMs: 1, maxKw: 1, scope: 'location' }, 'location', true],
    ['does not bind another scope', { startMs: 0, endMs: 1, maxKw: 1, scope: 'ev' }, 'tank', false],
    ['binds every tank without a device id', { startMs: 0, endMs: 1, maxKw: 1, scope: 'tank' }, 'tank', true],
    ['binds the tank it names', { startMs: 0, endMs: 1, maxKw: 1, scope: 'tank', deviceId: 'tank' }, 'tank', true],
    ['does not bind a tank it does not name', { startMs: 0, endMs: 1, maxKw: 1, scope: 'tank', deviceId: 'other' }, 'tank', false],
    ['binds the car it names', { startMs: 0, endMs: 1, maxKw: 1, scope: 'ev', deviceId: 'car' }, 'ev', true],
    ['does not bind a car it does not name', { startMs: 0, endMs: 1, maxKw: 1, scope: 'ev', deviceId: 'van' }, 'ev', false],
    ['binds the location whatever device it names', { startMs: 0, endMs: 1, maxKw: 1, scope: 'location', deviceId: 'x' }, 'location', true],
  ])('%s', (_name, cap, scope, expected) => {
    expect(capBinds(cap, scope, ids)).toBe(expected);
  });

  it('does not bind a named device when the plan has none of the kind', () => {
    expect(capBinds({ startMs: 0, endMs: 1, maxKw: 1, scope: 'tank', deviceId: 'tank' }, 'tank', {})).toBe(false);
  });
});

describe('lowestCapKw', () => {
  const caps: LpcCap[] = [
    { startMs: 0, endMs: 2 * H, maxKw: 5, scope: 'location' },
    { startMs: H, endMs: 2 * H, maxKw: 3, scope: 'location' },
    { startMs: 0, endMs: H, maxKw: -1, scope: 'tank' },
  ];
  it.each([
    ['is the lowest cap overlapping the slot', slot(1), () => true, 3],
    ['ignores caps that only touch the slot', slot(2), () => true, Infinity],
    ['ignores caps that do not bind', slot(1), (c: LpcCap) => c.maxKw > 4, 5],
    ['never goes below zero', slot(0), () => true, 0],
  ])('%s', (_name, s, binds, expected) => {
    expect(lowestCapKw(caps, s, binds)).toBe(expected);
  });
});

describe('baseLoadAt', () => {
  it.each([
    ['takes one value for every slot', 1.5, 7, 1.5],
    ["takes the slot's value of a series", [1, 2, 3], 1, 2],
    ['takes zero past the end of a series', [1, 2], 5, 0],
  ])('%s', (_name, base, index, expected) => {
    expect(baseLoadAt(base, index)).toBe(expected);
  });
});

describe('slotHeadroom', () => {
  it.each([
    ['leaves the limit less the base load', 11, Infinity, Infinity, 2, { headroomKw: 9, lpcBinding: false, reservedBinding: false, over: null }],
    ['ignores a negative base load', 11, Infinity, Infinity, -2, { headroomKw: 11, lpcBinding: false, reservedBinding: false, over: null }],
    ['is bound by an LPC cap below the limit', 11, 4, Infinity, 1, { headroomKw: 3, lpcBinding: true, reservedBinding: false, over: null }],
    ['is bound by a reserved cap when it is the lowest', 11, 4, 4, 1, { headroomKw: 3, lpcBinding: true, reservedBinding: true, over: null }],
    ['is not bound by a cap at the limit', 11, 11, 11, 1, { headroomKw: 10, lpcBinding: false, reservedBinding: false, over: null }],
    [
      'reports a base load above the limit',
      11,
      Infinity,
      Infinity,
      12,
      { headroomKw: 0, lpcBinding: false, reservedBinding: false, over: { byKw: 1, limitKw: 11, limitName: 'location limit' } },
    ],
    [
      'reports a base load above an LPC cap',
      11,
      4,
      Infinity,
      5,
      { headroomKw: 0, lpcBinding: true, reservedBinding: false, over: { byKw: 1, limitKw: 4, limitName: 'LPC cap' } },
    ],
    [
      'reports a base load above a reserved cap',
      11,
      4,
      4,
      5,
      { headroomKw: 0, lpcBinding: true, reservedBinding: true, over: { byKw: 1, limitKw: 4, limitName: 'reserved LPC cap' } },
    ],
  ])('%s', (_name, limit, lpc, reserved, base, expected) => {
    expect(slotHeadroom(limit, lpc, reserved, base)).toEqual(expected);
  });

  it('words the shortfall with the base load and the limit', () => {
    expect(baseLoadOverCap(7, 5, { byKw: 1, limitKw: 4, limitName: 'LPC cap' })).toEqual({
      device: 'location',
      kind: 'baseLoadOverCap',
      atMs: 7,
      amount: 1,
      message: 'base load 5.00 kW is above the LPC cap of 4.00 kW',
    });
  });
});

describe('the frozen window', () => {
  const previous = { slots: [0, 1, 2, 3].map((i) => ({ startMs: i * H })) } as unknown as Plan;
  it.each([
    ['keeps the running slot and one more by default', undefined, [0, H]],
    ['keeps the running slot and as many more as asked', 2, [0, H, 2 * H]],
    ['keeps the running slot alone for zero (or less) more', -1, [0]],
  ])('%s', (_name, frozenSlots, starts) => {
    const end = frozenWindowEndMs(hours(4), frozenSlots, H);
    expect([...frozenPrevious(previous, end).keys()]).toEqual(starts);
  });

  it.each([['ends at 0 without slots (and keeps nothing)', [], 0]])('%s', (_name, slots, expected) => {
    expect(frozenWindowEndMs(slots, 3, H)).toBe(expected);
    expect(frozenPrevious(undefined, H).size).toBe(0);
  });

  it.each([
    ['is free without a previous plan', undefined, 1, 5, undefined],
    ['asks for the planned energy less what was delivered', { energyKwh: 3 }, 1, 5, 2],
    ['asks for no more than the cap of the time left', { energyKwh: 3 }, 0, 2, 2],
    ['asks for nothing once more than planned was delivered', { energyKwh: 3 }, 4, 5, 0],
    ['ignores a negative delivery', { energyKwh: 3 }, -1, 5, 3],
  ])('frozenRest %s', (_name, prev, delivered, cap, expected) => {
    expect(frozenRest(prev, delivered, cap)).toBe(expected);
  });
});

describe('tankStartTemp', () => {
  const tank: TankParams = {
    volumeL: 200,
    powerKw: 2,
    coldWaterC: 10,
    ambientC: 20,
    heatLossWPerK: 1.5,
    minC: 45,
    maxC: 75,
    control: 'continuous',
  };
  it.each<[string, Partial<TankParams>, number, 'measured' | 'estimated' | 'assumed']>([
    ['uses a measured temperature', { currentTempC: 60 }, 60, 'measured'],
    ['estimates from the last known temperature without a measurement', { currentTempC: null, lastKnown: { tempC: 60, atMs: 0 } }, NaN, 'estimated'],
    ['does not estimate from a future reading', { lastKnown: { tempC: 60, atMs: 2 * H } }, 45, 'assumed'],
    ['ignores a non-finite measurement', { currentTempC: Number.NaN }, 45, 'assumed'],
    ['assumes the minimum with nothing known', {}, 45, 'assumed'],
  ])('%s', (_name, change, expectedC, source) => {
    const got = tankStartTemp({ ...tank, ...change }, H, 'UTC');
    expect(got.tempSource).toBe(source);
    // An estimate loses heat over the hour since the reading.
    if (source === 'estimated') expect(got.startTempC).toBeLessThan(60);
    else expect(got.startTempC).toBe(expectedC);
  });
});

describe('tankSlotEnergy', () => {
  it.each([
    ["takes the element's power for the slot", 2, Infinity, 5, 1, { cap: 2, relayLevel: 2 }],
    ['scales by the part of the slot left', 2, Infinity, 5, 0.5, { cap: 1, relayLevel: 1 }],
    ['is held by a device cap, and the relay may not switch on', 2, 1, 5, 1, { cap: 1, relayLevel: 0 }],
    ['is held by the headroom', 2, Infinity, 1.5, 1, { cap: 1.5, relayLevel: 0 }],
    ['never goes below zero', 2, -1, 5, 1, { cap: 0, relayLevel: 0 }],
  ])('%s', (_name, powerKw, capKw, headroomKw, fraction, expected) => {
    expect(tankSlotEnergy(powerKw, capKw, headroomKw, 1, fraction)).toEqual(expected);
  });
});

describe('legionella', () => {
  const rule = { tempC: 65, everyDays: 7 };
  it.each([
    ['is reachable with the thermostat at the temperature', 65, null],
    ['is unreachable with the thermostat below it', 60, 5],
  ])('legionellaUnreachable %s', (_name, maxC, amount) => {
    expect(legionellaUnreachable(rule, maxC, 0)?.amount ?? null).toBe(amount);
  });

  const day = 24;
  it.each([
    ['falls due a cycle after it was last reached', { lastReachedMs: -6 * day * H }, 50, 2 * day, { bySlot: day - 1, deadlineMs: day * H }],
    [
      'restarts the cycle for a tank at the temperature now',
      { lastReachedMs: -6 * day * H },
      66,
      8 * day,
      { bySlot: 7 * day - 1, deadlineMs: 7 * day * H },
    ],
    ['gives an overdue cycle the grace hours', { lastReachedMs: null, overdueWithinHours: 6 }, 50, day, { bySlot: 5, deadlineMs: 6 * H }],
    ['lies past the planned slots', { lastReachedMs: -1 * day * H }, 50, 2 * day, null],
    ['cannot be planned without slots', { lastReachedMs: -6 * day * H }, 50, 0, null],
  ])('legionellaDeadline %s', (_name, change, startC, n, expected) => {
    expect(legionellaDeadline({ ...rule, ...change }, startC, 0, hours(n), H)).toEqual(expected);
  });

  it('keeps a deadline that falls due after the first slot, even within the grace hours', () => {
    expect(legionellaDeadline({ ...rule, lastReachedMs: -7 * day * H + 3 * H }, 50, 0, hours(48), H)).toEqual({ bySlot: 2, deadlineMs: 3 * H });
  });

  it('counts a deadline inside the first slot as overdue', () => {
    expect(legionellaDeadline({ ...rule, lastReachedMs: -7 * day * H + H / 2, overdueWithinHours: 3 }, 50, 0, hours(24), H)).toEqual({
      bySlot: 2,
      deadlineMs: 3 * H,
    });
  });
});

describe('the car', () => {
  it.each<[string, Partial<EvParams>, number]>([
    ['takes the energy estimate', { energyNeededKwh: 12, socPct: 10, targetSocPct: 80, capacityKwh: 60 }, 12],
    ['takes the state of charge to its target', { socPct: 30, targetSocPct: 80, capacityKwh: 60 }, 30],
    ['needs nothing above its target', { socPct: 90, targetSocPct: 80, capacityKwh: 60 }, 0],
    ['needs nothing with nothing known', {}, 0],
  ])('evBatteryNeedKwh %s', (_name, change, expected) => {
    expect(evBatteryNeedKwh({ departureMs: 0, minPowerKw: 1, maxPowerKw: 11, efficiency: 0.9, ...change })).toBeCloseTo(expected, 12);
  });

  const ev = { maxPowerKw: 11, minPowerKw: 4, departureMs: 3 * H };
  it.each([
    ['charges at full power while there', 0, slot(1), Infinity, 20, { cap: 11, rawCap: 11, availHours: 1, minE: 4, present: true }],
    [
      'charges for the part of the slot after it arrives',
      1.5 * H,
      slot(1),
      Infinity,
      20,
      { cap: 5.5, rawCap: 5.5, availHours: 0.5, minE: 2, present: true },
    ],
    ['charges nothing after it leaves', 0, slot(3), Infinity, 20, { cap: 0, rawCap: 0, availHours: 0, minE: 0, present: false }],
    ['is held by its cap', 0, slot(1), 6, 20, { cap: 6, rawCap: 11, availHours: 1, minE: 4, present: true }],
    ['is held by the headroom', 0, slot(1), Infinity, 5, { cap: 5, rawCap: 11, availHours: 1, minE: 4, present: true }],
    ['charges nothing below its minimum power', 0, slot(1), Infinity, 3, { cap: 0, rawCap: 11, availHours: 1, minE: 0, present: true }],
    ['charges nothing with no room at all', 0, slot(1), 0, 20, { cap: 0, rawCap: 11, availHours: 1, minE: 0, present: true }],
  ])('evSlotEnergy %s', (_name, fromMs, s, capKw, headroomKw, expected) => {
    expect(evSlotEnergy(ev, fromMs, s, H, capKw, headroomKw)).toEqual(expected);
  });

  it('charges nothing under a zero cap even without a minimum power', () => {
    expect(evSlotEnergy({ ...ev, minPowerKw: 0 }, 0, slot(1), H, 0, 20).cap).toBe(0);
  });

  it.each([
    ['is in a wrapping window late', 23, { startHour: 22, endHour: 6 }, true],
    ['is in a wrapping window early', 5, { startHour: 22, endHour: 6 }, true],
    ['is not in a wrapping window at its end', 6, { startHour: 22, endHour: 6 }, false],
    ['is in a plain window at its start', 1, { startHour: 1, endHour: 5 }, true],
    ['is not in a plain window at its end', 5, { startHour: 1, endHour: 5 }, false],
    ['is never in an empty window', 3, { startHour: 3, endHour: 3 }, false],
  ])('inHourWindow %s', (_name, h, window, expected) => {
    expect(inHourWindow(h, window)).toBe(expected);
  });

  it.each([
    ['ranks by price with known prices', [slot(0, 0.3), slot(1, 0.1)], [0, 1], false, 0.1, [0.3, 0.1]],
    ['ranks slots without a price before the known ones', [slot(0, 0.3), slot(1, 0.5, 'fallback')], [0, 1], false, 0.3, [0.3, -0.7]],
    ['ranks the fallback window first with no prices at all', [slot(0, 0, 'fallback'), slot(1, 0, 'fallback')], [23, 12], true, Infinity, [0, 1]],
  ])('evRankingPrices %s', (_name, slots, hrs, allFallback, minKnown, expected) => {
    expect(evRankingPrices(slots, hrs, allFallback, minKnown, { startHour: 22, endHour: 6 })).toEqual(expected);
  });
});
