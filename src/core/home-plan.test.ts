import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bindingAntiCycling, homeInputOf, planHome, slotFlexKw } from './home-plan.js';
import { plan } from './planner.js';
import { buildPriceSeries } from './prices.js';
import type { EvParams, HomePlanInput, Plan, TankParams } from './types.js';
import { H, hourlySlots, osloMidnight as T0 } from '../../test/fixtures/price-slots.js';

const tank = (id: string, over: Partial<TankParams> = {}): TankParams & { id: string } => ({
  id,
  volumeL: 200,
  powerKw: 2,
  coldWaterC: 8,
  ambientC: 18,
  heatLossWPerK: 1.6,
  minC: 50,
  maxC: 75,
  currentTempC: 60,
  control: 'continuous',
  ...over,
});
const car = (id: string, over: Partial<EvParams> = {}): EvParams & { id: string } => ({
  id,
  energyNeededKwh: 20,
  departureMs: T0 + 30 * H,
  minPowerKw: 4.14,
  maxPowerKw: 11,
  efficiency: 0.9,
  ...over,
});

function home(prices: readonly number[], over: Partial<HomePlanInput> = {}): HomePlanInput {
  return {
    slots: hourlySlots(prices),
    timezone: 'Europe/Oslo',
    currency: 'EUR',
    tanks: [],
    evs: [],
    location: { limitKw: 17, baseLoadKw: 1 },
    ...over,
  };
}

/** Battery energy each car got by the plan's end (its last slot's `chargedKwh`). */
const charged = (p: Plan, id: string): number => p.slots.at(-1)?.evs?.[id]?.chargedKwh ?? 0;

/** The location's limit less base load, never crossed by all devices together. */
function expectWithinLimit(p: Plan, limitKw: number, baseKw: number): void {
  for (const s of p.slots) expect(slotFlexKw(s), new Date(s.startMs).toISOString()).toBeLessThanOrEqual(limitKw - baseKw + 1e-6);
}

const night = (h: number): boolean => h % 24 < 6;
const dayPrices = Array.from({ length: 36 }, (_, h) => (night(h) ? 0.05 + 0.01 * (h % 24) : 0.3 + 0.01 * (h % 7)));

describe('bindingAntiCycling', () => {
  it("keeps a tank's anti-cycling rules only where they can bind", () => {
    // Hourly slots: a run and a pause of one slot each, and up to 12 starts a day, bind nothing.
    expect(bindingAntiCycling({ minOnSlots: 1, minOffSlots: 1, maxStartsPerDay: 24 }, 60)).toBeNull();
    expect(bindingAntiCycling({ minOnSlots: 1, minOffSlots: 1, maxStartsPerDay: 12 }, 60)).toBeNull();
    expect(bindingAntiCycling({}, 60)).toBeNull();
    expect(bindingAntiCycling({ maxStartsPerDay: 11 }, 60)).toEqual({ maxStartsPerDay: 11 });
    expect(bindingAntiCycling({ minOnSlots: 2 }, 60)).toEqual({ minOnSlots: 2 });
    // Quarter hours: 24 starts a day can bind (48 fit).
    expect(bindingAntiCycling({ minOnSlots: 1, minOffSlots: 1, maxStartsPerDay: 24 }, 15)).toEqual({
      minOnSlots: 1,
      minOffSlots: 1,
      maxStartsPerDay: 24,
    });
  });

  it('plans a larger home with rules that cannot bind as it plans it without them', () => {
    const loose = { minOnSlots: 1, minOffSlots: 1, maxStartsPerDay: 24 };
    const input = (ac: TankParams['antiCycling']) =>
      home(dayPrices, { tanks: [tank('a', { antiCycling: ac }), tank('b', { antiCycling: ac, currentTempC: 55 })], evs: [car('x')] });
    expect(planHome(input(loose), T0)).toEqual(planHome(input(null), T0));
  });
});

describe('planHome', () => {
  it('is the pair planner for a home with one tank and one car', () => {
    const input = {
      slots: hourlySlots(dayPrices),
      timezone: 'Europe/Oslo',
      currency: 'EUR',
      tank: tank('boiler'),
      ev: car('garage'),
      location: { limitKw: 17, baseLoadKw: 1 },
    };
    expect(planHome(homeInputOf(input), T0)).toEqual(plan(input, T0));
  });

  it('plans every car and tank under its own id, all together within the location limit', () => {
    const input = home(dayPrices, {
      tanks: [tank('t1'), tank('t2', { volumeL: 300, powerKw: 3 })],
      evs: [car('c1'), car('c2', { energyNeededKwh: 30 })],
      location: { limitKw: 17, baseLoadKw: 1 },
    });
    const p = planHome(input, T0);
    expect(Object.keys(p.slots[0]!.tanks ?? {}).sort()).toEqual(['t1', 't2']);
    expect(Object.keys(p.slots[0]!.evs ?? {}).sort()).toEqual(['c1', 'c2']);
    expect(Object.keys(p.tanks ?? {}).sort()).toEqual(['t1', 't2']);
    expect(p.evs?.c2?.energyNeededKwh).toBeCloseTo(30, 6);
    expect(charged(p, 'c1')).toBeCloseTo(20, 3);
    expect(charged(p, 'c2')).toBeCloseTo(30, 3);
    expect(p.shortfalls).toEqual([]);
    expectWithinLimit(p, 17, 1);
    // Money is the sum over the devices, at the slot prices.
    const cost = p.slots.reduce((sum, s) => sum + s.price * Object.values({ ...s.tanks, ...s.evs }).reduce((e, d) => e + d.energyKwh, 0), 0);
    expect(p.cost).toBeGreaterThanOrEqual(cost - 1e-6);
    expect(p.slots.find((s) => Object.values(s.evs ?? {}).some((e) => e.energyKwh > 0))?.reason).toMatch(/c[12] \d+\.\d\d kWh/);
  });

  it('leaves the car that must leave first the cheap hours it can use, when the other can wait', () => {
    // Room for one car at a time. Car "early" leaves at 04:00 and needs 3 h at full power; car "late"
    // stays until 30:00. Hours 0-3 are cheapest, 24-29 nearly as cheap: late must take those.
    const prices = Array.from({ length: 30 }, (_, h) => (h < 4 ? 0.05 : h >= 24 ? 0.06 : 0.5));
    const input = home(prices, {
      evs: [car('late', { energyNeededKwh: 29.7, departureMs: T0 + 30 * H }), car('early', { energyNeededKwh: 29.7, departureMs: T0 + 4 * H })],
      location: { limitKw: 12, baseLoadKw: 1 },
    });
    const p = planHome(input, T0);
    expect(p.shortfalls).toEqual([]);
    expectWithinLimit(p, 12, 1);
    expect(charged(p, 'early')).toBeCloseTo(29.7, 3);
    expect(charged(p, 'late')).toBeCloseTo(29.7, 3);
    const lateDear = p.slots.filter((s) => s.price > 0.1).reduce((sum, s) => sum + (s.evs?.late?.energyKwh ?? 0), 0);
    expect(lateDear).toBeCloseTo(0, 6);
  });

  it('gives a resource cap only to the device it names', () => {
    const input = home(dayPrices, {
      evs: [car('c1'), car('c2')],
      location: { limitKw: 25, baseLoadKw: 1, lpc: [{ startMs: T0, endMs: T0 + 6 * H, maxKw: 0, scope: 'ev', deviceId: 'c2' }] },
    });
    const p = planHome(input, T0);
    const first6 = p.slots.slice(0, 6);
    expect(first6.every((s) => (s.evs?.c2?.energyKwh ?? 0) === 0)).toBe(true);
    expect(first6.some((s) => (s.evs?.c1?.energyKwh ?? 0) > 0)).toBe(true);
  });

  it("states each device's shortfall under its id when the room is too small for both", () => {
    const input = home(
      Array.from({ length: 4 }, () => 0.2),
      { evs: [car('a', { departureMs: T0 + 4 * H }), car('b', { departureMs: T0 + 4 * H })], location: { limitKw: 12, baseLoadKw: 1 } },
    );
    const p = planHome(input, T0);
    expectWithinLimit(p, 12, 1);
    const short = p.shortfalls.filter((f) => f.kind === 'evTarget');
    expect(short.length).toBeGreaterThan(0);
    // What each car misses is stated under its id and adds up with what it gets to its need.
    for (const id of ['a', 'b']) {
      const missing = short.filter((f) => f.deviceId === id).reduce((sum, f) => sum + f.amount, 0);
      expect(charged(p, id) + missing).toBeCloseTo(20, 3);
    }
    // 4 h × 11 kW × 0.9 = 39.6 kWh is all the room there is; each car's minimum power (4.14 kW) can
    // strand some of it between the two, which the groups do not negotiate (no more than a tenth).
    expect(charged(p, 'a') + charged(p, 'b')).toBeGreaterThan(0.9 * 39.6);
  });

  it('keeps the frozen slots of each device from the previous plan', () => {
    const input = home(dayPrices, { tanks: [tank('t1'), tank('t2')], evs: [car('c1'), car('c2')], options: { frozenSlots: 1 } });
    const first = planHome(input, T0);
    const again = planHome({ ...input, location: { ...input.location, baseLoadKw: 3 } }, T0 + 10 * 60_000, first);
    // The slot after the current one is frozen (the current one is scaled to what is left of it).
    for (const id of ['t1', 't2']) expect(again.slots[1]!.tanks?.[id]?.energyKwh).toBeCloseTo(first.slots[1]!.tanks?.[id]?.energyKwh ?? NaN, 6);
    for (const id of ['c1', 'c2']) expect(again.slots[1]!.evs?.[id]?.energyKwh).toBeCloseTo(first.slots[1]!.evs?.[id]?.energyKwh ?? NaN, 6);
    expect(again.slots[1]!.binding).toContain('frozen');
  });

  it('gives each device the plan it would get alone where the headroom is not contested', () => {
    const input = home(dayPrices, {
      tanks: [tank('t1'), tank('t2', { volumeL: 300, powerKw: 3 })],
      evs: [car('c1'), car('c2', { energyNeededKwh: 30 })],
      location: { limitKw: 60, baseLoadKw: 1 },
    });
    const p = planHome(input, T0);
    const alone = (d: Partial<Pick<HomePlanInput, 'tanks' | 'evs'>>): Plan => planHome({ ...input, tanks: d.tanks ?? [], evs: d.evs ?? [] }, T0);
    for (const t of input.tanks)
      expect(p.slots.map((s) => s.tanks?.[t.id]?.energyKwh)).toEqual(alone({ tanks: [t] }).slots.map((s) => s.tanks?.[t.id]?.energyKwh));
    for (const e of input.evs)
      expect(p.slots.map((s) => s.evs?.[e.id]?.energyKwh)).toEqual(alone({ evs: [e] }).slots.map((s) => s.evs?.[e.id]?.energyKwh));
  });

  it('without any price plans the fallback device by device, cars first, all within the limit', () => {
    const slots = buildPriceSeries({
      slotMinutes: 60,
      fromMs: T0,
      toMs: T0 + 24 * H,
      timezone: 'Europe/Oslo',
      currency: 'EUR',
      spot: {},
      deltas: [],
      fees: { gridFeePerKwh: 0, taxPerKwh: 0 },
    });
    const input = home([], {
      slots,
      tanks: [tank('t1', { currentTempC: 51 }), tank('t2', { currentTempC: 51 })],
      evs: [car('c1', { departureMs: T0 + 8 * H }), car('c2', { departureMs: T0 + 8 * H })],
      location: { limitKw: 14, baseLoadKw: 1 },
    });
    const p = planHome(input, T0);
    expect(p.mode).toBe('fallback');
    expectWithinLimit(p, 14, 1);
    // 13 kW for two 11 kW cars over 8 hours is room enough for both (20 kWh each at 0.9).
    expect(charged(p, 'c1')).toBeCloseTo(20, 3);
    expect(charged(p, 'c2')).toBeCloseTo(20, 3);
    expect(p.shortfalls.filter((f) => f.device === 'ev')).toEqual([]);
  });

  it('never plans the devices together above the location limit, whatever the prices', () => {
    const prices = fc.array(fc.double({ min: -0.2, max: 0.6, noNaN: true, noDefaultInfinity: true }), { minLength: 24, maxLength: 36 });
    fc.assert(
      fc.property(prices, fc.double({ min: 8, max: 25, noNaN: true }), (ps, limitKw) => {
        const p = planHome(
          home(ps, {
            tanks: [tank('t1'), tank('t2')],
            evs: [car('c1'), car('c2', { departureMs: T0 + 20 * H })],
            location: { limitKw, baseLoadKw: 1 },
          }),
          T0,
        );
        expectWithinLimit(p, limitKw, 1);
      }),
      { numRuns: 25 },
    );
  });
});
