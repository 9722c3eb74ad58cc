import { describe, expect, it } from 'vitest';
import type { Plan, PlanSlot } from '../core/types.js';
import type { Setpoint } from '../core/control.js';
import {
  asGiven,
  chargerTarget,
  delayToNextTickMs,
  heaterTarget,
  modeAt,
  newlyGuarded,
  raisesLoad,
  roomUnderCapKw,
  slotAt,
  slotStartOf,
  slowestLateRead,
} from './control-steps.js';

const H = 3_600_000;
const planSlot = (i: number, extra: Partial<PlanSlot> = {}): PlanSlot => ({
  startMs: i * H,
  endMs: (i + 1) * H,
  price: 0.1,
  spot: 0.1,
  delta: 0,
  source: 'actual',
  headroomKw: 10,
  binding: [],
  reason: '',
  ...extra,
});
const planOf = (slots: PlanSlot[]): Plan => ({
  createdMs: 0,
  currency: 'EUR',
  slotMinutes: 60,
  startMs: 0,
  endMs: slots.length * H,
  mode: 'optimal',
  slots,
  cost: 0,
  baselineCost: 0,
  baselineRespectsLimits: true,
  incentiveEarned: 0,
  shortfalls: [],
});

describe('slotAt and slotStartOf', () => {
  const plan = planOf([planSlot(0), planSlot(1)]);
  it.each([
    ['finds the slot that holds the instant', plan, 1.5 * H, H],
    ['finds the slot that starts at the instant', plan, H, H],
    ['finds none past the plan', plan, 2 * H, undefined],
    ['finds none without a plan', null, 0, undefined],
  ])('slotAt %s', (_name, p, nowMs, startMs) => {
    expect(slotAt(p, nowMs)?.startMs).toBe(startMs);
  });

  it.each([
    ['is the instant on a slot boundary', 2 * H, H, 2 * H],
    ['rounds down inside a slot', 2 * H + 59_999, 900_000, 2 * H],
  ])('slotStartOf %s', (_name, nowMs, slotMs, expected) => {
    expect(slotStartOf(nowMs, slotMs)).toBe(expected);
  });
});

describe('modeAt', () => {
  it.each([
    ['keeps auto', { mode: 'auto' as const, boostUntilMs: null }, 'auto'],
    ['keeps off', { mode: 'off' as const, boostUntilMs: 0 }, 'off'],
    ['keeps a boost without an end', { mode: 'boost' as const, boostUntilMs: null }, 'boost'],
    ['keeps a boost that has not run out', { mode: 'boost' as const, boostUntilMs: 101 }, 'boost'],
    ['turns a boost that has run out back to auto', { mode: 'boost' as const, boostUntilMs: 100 }, 'auto'],
  ])('%s', (_name, intent, expected) => {
    expect(modeAt(intent, 100)).toBe(expected);
  });
});

describe('chargerTarget', () => {
  const ev = { energyKwh: 4, powerKw: 8, on: true, chargedKwh: 4 };
  it.each([
    ['is null without a plan', null, undefined, 0, null],
    ['asks for nothing in a plan without the slot', planOf([]), undefined, 0.5 * H, { energyKwh: 0, powerKw: 0 }],
    [
      'asks for nothing in a slot that does not name the charger',
      planOf([planSlot(0)]),
      planSlot(0),
      0.5 * H,
      { energyKwh: 0, powerKw: 0, leftH: 0.5 },
    ],
    [
      "asks for the slot's energy with the hours left in it",
      planOf([]),
      planSlot(0, { evs: { car: ev } }),
      0.25 * H,
      { energyKwh: 4, powerKw: 8, leftH: 0.75 },
    ],
    [
      "counts the hours to the car's departure inside the slot",
      planOf([]),
      planSlot(0, { evs: { car: { ...ev, leavesMs: 0.5 * H } } }),
      0.25 * H,
      { energyKwh: 4, powerKw: 8, leftH: 0.25 },
    ],
    [
      'counts no hours once the car has left',
      planOf([]),
      planSlot(0, { evs: { car: { ...ev, leavesMs: 0.5 * H } } }),
      0.75 * H,
      { energyKwh: 4, powerKw: 8, leftH: 0 },
    ],
  ])('%s', (_name, plan, slot, nowMs, expected) => {
    expect(chargerTarget(plan, slot, 'car', nowMs)).toEqual(expected);
  });
});

describe('heaterTarget', () => {
  const tank = { energyKwh: 2, powerKw: 2, on: true, endTempC: 60 };
  it.each([
    ['is null without a plan', null, undefined, null],
    ["asks for nothing outside the plan's slots", planOf([]), undefined, { energyKwh: 0, powerKw: 0, paidToConsume: false }],
    ["asks for the slot's energy", planOf([]), planSlot(0, { tanks: { tank } }), { energyKwh: 2, powerKw: 2, paidToConsume: false }],
    [
      'says when consuming is paid for',
      planOf([]),
      planSlot(0, { price: -0.01, tanks: { tank } }),
      { energyKwh: 2, powerKw: 2, paidToConsume: true },
    ],
    [
      'asks for nothing in a slot that does not name the heater',
      planOf([]),
      planSlot(0, { price: 0 }),
      { energyKwh: 0, powerKw: 0, paidToConsume: false },
    ],
  ])('%s', (_name, plan, slot, expected) => {
    expect(heaterTarget(plan, slot, 'tank')).toEqual(expected);
  });
});

describe('roomUnderCapKw', () => {
  it.each([
    ['takes the base load forecast without a main meter', 11, undefined, [2000], 11 - 1.5],
    ['takes the main meter less what the devices draw', 11, 5000, [2000, undefined], 11 - 3],
    ['counts no device as drawing less than nothing', 11, 5000, [-1000, 2000], 11 - 3],
    ['counts no base load below zero', 11, 1000, [2000], 11],
  ])('%s', (_name, capKw, locationPowerW, devicesPowerW, expected) => {
    expect(roomUnderCapKw(capKw, locationPowerW, devicesPowerW, () => 1.5)).toBeCloseTo(expected, 12);
  });

  it('asks for the forecast only without a main meter', () => {
    let asked = 0;
    roomUnderCapKw(11, 5000, [], () => ++asked);
    expect(asked).toBe(0);
  });
});

describe('slowestLateRead', () => {
  const reads = new Map([
    ['meter', 300],
    ['gateway', 12_000],
    ['tank', 900],
  ]);
  it.each([
    ['names the slowest read of a late tick', reads, 12_500, ['gateway', 12_000]],
    ['names none when the tick kept time', reads, 10_000, undefined],
    ['names none when nothing was read', new Map<string, number>(), 12_500, undefined],
  ])('%s', (_name, done, tookMs, expected) => {
    expect(slowestLateRead(done, tookMs, 10_000)).toEqual(expected);
  });

  it('names the first of two equally slow reads', () => {
    expect(
      slowestLateRead(
        new Map([
          ['a', 5],
          ['b', 5],
        ]),
        20,
        10,
      ),
    ).toEqual(['a', 5]);
  });
});

describe('raisesLoad', () => {
  const none = { sgState: undefined, appliedA: undefined };
  it.each<[string, Setpoint, { sgState?: 'block' | 'normal' | 'boost' | 'forced' | undefined; appliedA?: number | undefined }, boolean]>([
    ['a heater allowed on raises', { kind: 'heater', id: 'h', allow: true, reason: '' }, none, true],
    ['a heater blocked does not', { kind: 'heater', id: 'h', allow: false, reason: '' }, none, false],
    ['a pump locked does not, whatever it had', { kind: 'heatPump', id: 'p', state: 'block', reason: '' }, none, false],
    ['a pump state of unknown effect raises', { kind: 'heatPump', id: 'p', state: 'normal', reason: '' }, none, true],
    ['a pump leaving a lock raises', { kind: 'heatPump', id: 'p', state: 'normal', reason: '' }, { sgState: 'block' }, true],
    ['a pump boosted from normal raises', { kind: 'heatPump', id: 'p', state: 'boost', reason: '' }, { sgState: 'normal' }, true],
    ['a pump kept in its state does not', { kind: 'heatPump', id: 'p', state: 'boost', reason: '' }, { sgState: 'boost' }, false],
    ['a pump stepped down does not', { kind: 'heatPump', id: 'p', state: 'normal', reason: '' }, { sgState: 'forced' }, false],
    ['a charger above its last current raises', { kind: 'charger', id: 'c', currentA: 10, reason: '' }, { appliedA: 6 }, true],
    ['a charger at its last current does not', { kind: 'charger', id: 'c', currentA: 6, reason: '' }, { appliedA: 6 }, false],
    ['a charger never sent a current does not', { kind: 'charger', id: 'c', currentA: 16, reason: '' }, none, false],
  ])('%s', (_name, setpoint, was, expected) => {
    expect(raisesLoad(setpoint, { sgState: was.sgState, appliedA: was.appliedA })).toBe(expected);
  });
});

describe('newlyGuarded', () => {
  it.each([
    ['names devices the guard takes on now', ['a', 'b'], ['a'], ['b']],
    ['names none the guard already held', ['a'], ['a', 'b'], []],
    ['names none when the guard holds none', [], ['a'], []],
  ])('%s', (_name, guarded, before, expected) => {
    expect(newlyGuarded(guarded, new Set(before))).toEqual(expected);
  });
});

describe('asGiven', () => {
  const setpoints: Setpoint[] = [
    { kind: 'heatPump', id: 'p', state: 'boost', reason: 'r' },
    { kind: 'heater', id: 'h', allow: true, reason: 'r' },
  ];
  it.each([
    ['takes the state the pump reports', 'normal' as const, 'normal'],
    ['keeps the decided state when the pump reports none', undefined, 'boost'],
  ])('%s', (_name, reported, expected) => {
    const given = asGiven(setpoints, () => reported);
    expect(given[0]).toEqual({ kind: 'heatPump', id: 'p', state: expected, reason: 'r' });
    expect(given[1]).toBe(setpoints[1]);
  });
});

describe('delayToNextTickMs', () => {
  it.each([
    ['waits a whole period on a boundary', 20_000, 10_000],
    ['waits to the next boundary inside a period', 23_500, 6_500],
  ])('%s', (_name, nowMs, expected) => {
    expect(delayToNextTickMs(nowMs, 10_000)).toBe(expected);
  });
});
