import { describe, expect, it } from 'vitest';
import { planWithCapacity, type CapacityContext } from './capacity-plan.js';
import { homeInputOf } from './home-plan.js';
import { capacityMeasure, capacityFee, hourlyEnergies, stepIndex } from './capacity.js';
import type { CapacityModel } from './tariff.js';
import type { Plan, PlanInput, PriceSlot } from './types.js';

/** The capacity planner on a one-tank, one-car home. */
const capacityPlan = (input: PlanInput, ...rest: Parameters<typeof planWithCapacity> extends [unknown, ...infer R] ? R : never): Plan =>
  planWithCapacity(homeInputOf(input), ...rest);

const H = 3_600_000;
// Tuesday 10 November 2026, 00:00 UTC; the hand-checked cases plan in UTC.
const T0 = Date.parse('2026-11-10T00:00:00Z');

/** Norwegian style: mean of the 3 highest daily maxima, steps by kWh/h. */
const norway: CapacityModel = {
  measure: 'dailyPeaks',
  count: 3,
  days: 'all',
  steps: [
    { upToKw: 2, perMonth: 100 },
    { upToKw: 5, perMonth: 200 },
    { upToKw: 10, perMonth: 400 },
    { upToKw: null, perMonth: 800 },
  ],
};

function slots(prices: number[], slotMinutes = 60): PriceSlot[] {
  const len = slotMinutes * 60_000;
  return prices.map((price, i) => ({ startMs: T0 + i * len, endMs: T0 + (i + 1) * len, spot: price, delta: 0, fees: 0, price, source: 'actual' }));
}

/** A car that needs `kWh` by 6 h from now, any power up to 11 kW, 1 kW of base load. */
function evInput(prices: number[], kWh: number, slotMinutes = 60): PlanInput {
  return {
    slots: slots(prices, slotMinutes),
    timezone: 'UTC',
    currency: 'NOK',
    tank: null,
    ev: { energyNeededKwh: kWh, departureMs: T0 + 6 * H, minPowerKw: 0, maxPowerKw: 11, efficiency: 1 },
    location: { limitKw: 25, baseLoadKw: 1 },
  };
}

/** Earlier days of the month with one peak hour each. */
function peaks(...kWh: number[]): { startMs: number; kWh: number }[] {
  return kWh.map((v, i) => ({ startMs: Date.parse('2026-11-01T17:00:00Z') + i * 24 * H, kWh: v }));
}

function ctx(rule: CapacityModel, meteredHours: { startMs: number; kWh: number }[]): CapacityContext {
  return { rule, timezone: 'UTC', holidays: [], meteredHours, vatRate: 1 };
}

const evEnergy = (p: ReturnType<typeof planWithCapacity>, i: number): number => p.slots[i]?.evs?.ev?.energyKwh ?? 0;

describe('capacity measure', () => {
  it('takes one peak per day for dailyPeaks and any hours for hourlyPeaks', () => {
    const day = Date.parse('2026-11-02T00:00:00Z');
    const hours = [
      { startMs: day + 17 * H, kWh: 9 },
      { startMs: day + 18 * H, kWh: 8 },
      { startMs: day + 19 * H, kWh: 7 }, // one day
      { startMs: day + 24 * H, kWh: 3 },
      { startMs: day + 48 * H, kWh: 2 },
    ];
    expect(capacityMeasure(norway, hours, 'UTC', [])).toBeCloseTo((9 + 3 + 2) / 3, 9);
    expect(capacityMeasure({ ...norway, measure: 'hourlyPeaks' }, hours, 'UTC', [])).toBeCloseTo((9 + 8 + 7) / 3, 9);
  });

  it('sums 15-minute energies into the hour before measuring', () => {
    const q = [1.5, 2, 1, 0.5].map((kWh, i) => ({ startMs: T0 + i * 15 * 60_000, kWh }));
    expect(hourlyEnergies(q)).toEqual([{ startMs: T0, kWh: 5 }]);
    expect(capacityMeasure({ ...norway, count: 1 }, hourlyEnergies(q), 'UTC', [])).toBe(5);
  });

  it('counts night hours at their weight and skips hours outside the rule', () => {
    const rule: CapacityModel = {
      measure: 'hourlyPeaks',
      count: 1,
      days: 'weekdays',
      nightWeight: { weight: 0.5, hours: { from: 22, to: 6 } },
      perKwPerMonth: 50,
    };
    const saturday = Date.parse('2026-11-07T12:00:00Z');
    expect(capacityMeasure(rule, [{ startMs: T0 + 23 * H, kWh: 8 }], 'UTC', [])).toBe(4);
    expect(capacityMeasure(rule, [{ startMs: saturday, kWh: 8 }], 'UTC', [])).toBe(0);
    expect(capacityFee(rule, 4, 11)).toBe(200);
  });

  it('puts a measure on a step boundary in the lower step', () => {
    expect(stepIndex(norway, 5)).toBe(1);
    expect(stepIndex(norway, 5.01)).toBe(2);
    expect(capacityFee(norway, 50, 11)).toBe(800);
  });

  it('prices a per-kW fee by the season of the month', () => {
    const seasonal: CapacityModel = {
      ...norway,
      steps: undefined,
      seasons: [
        { months: [11, 12, 1, 2, 3], perKwPerMonth: 80 },
        { months: [4, 5, 6, 7, 8, 9, 10], perKwPerMonth: 40 },
      ],
    };
    expect(capacityFee(seasonal, 2.5, 1)).toBe(200);
    expect(capacityFee(seasonal, 2.5, 7)).toBe(100);
  });
});

describe('planWithCapacity', () => {
  const prices = [0.1, 0.2, 0.3, 0.3, 0.3, 0.3];

  it('spreads a cheap hour that would raise the step', () => {
    // Unheld: 10 kWh in hour 0 → 11 kWh/h, measure (11+4+4)/3 = 6.33 → 400/month.
    // Held at step ≤ 5: today's peak may be 7 ((7+4+4)/3 = 5), so 6 kWh of car in hour 0, 4 in hour 1.
    const p = capacityPlan(evInput(prices, 10), T0, ctx(norway, peaks(4, 4, 4)));
    expect(evEnergy(p, 0)).toBeCloseTo(6, 4);
    expect(evEnergy(p, 1)).toBeCloseTo(4, 4);
    expect(p.capacity).toMatchObject({ step: 1, feePerMonth: 200 });
    expect(p.capacity!.measureKw).toBeCloseTo(5, 4);
    expect(p.capacity!.heldAtKwhPerH).toBeCloseTo(7, 4);
    expect(p.capacity!.bill).toBeCloseTo(6 * 0.1 + 4 * 0.2 + 200, 4);
    expect(p.capacity!.unheldBill).toBeCloseTo(10 * 0.1 + 400, 4);
    expect(p.slots[0]!.binding).toContain('capacityStep');
    expect(p.slots[0]!.reason).toContain("held at 7.0 kWh/h: the month's capacity step");
    expect(p.slots[1]!.binding).not.toContain('capacityStep');
    // Control's hourly guard keeps every held hour within its allowance, binding or not.
    expect(p.slots[0]!.hourAllowanceKwh).toBeCloseTo(7, 4);
    expect(p.slots[1]!.hourAllowanceKwh).toBeCloseTo(7, 4);
  });

  it('takes the step when the price gap is worth more than the step', () => {
    const cheapStep: CapacityModel = {
      ...norway,
      steps: [
        { upToKw: 5, perMonth: 200 },
        { upToKw: null, perMonth: 201 },
      ],
    };
    const p = capacityPlan(evInput([0, 1, 1, 1, 1, 1], 10), T0, ctx(cheapStep, peaks(4, 4, 4)));
    expect(evEnergy(p, 0)).toBeCloseTo(10, 4);
    expect(p.capacity).toMatchObject({ step: 1, heldAtKwhPerH: null, feePerMonth: 201 });
    expect(p.slots.some((s) => s.binding.includes('capacityStep'))).toBe(false);
    expect(p.slots.some((s) => s.hourAllowanceKwh !== undefined)).toBe(false);
  });

  it('lets peaks already metered above a step make that step free', () => {
    // Metered 8, 8, 8: the month is in the 5–10 step whatever happens; 10 kWh in hour 0 gives (11+8+8)/3 = 9.
    const p = capacityPlan(evInput(prices, 10), T0, ctx(norway, peaks(8, 8, 8)));
    expect(evEnergy(p, 0)).toBeCloseTo(10, 4);
    expect(p.capacity).toMatchObject({ step: 2, heldAtKwhPerH: null });
  });

  it('holds only as far as the step needs: low other days leave a high cap (three different days)', () => {
    // Metered 6, 6, 6 (step 5–10). A 22 kW car unheld: hour 0 at 23 kWh/h → (23+6+6)/3 = 11.67 → step > 10.
    // Every hour of today is one day, so one peak: held to ≤ 10 it may reach (C+6+6)/3 = 10 → C = 18.
    const input = evInput(prices, 30);
    const big = { ...input, ev: { ...input.ev!, maxPowerKw: 22 } };
    const p = capacityPlan(big, T0, ctx(norway, peaks(6, 6, 6)));
    expect(p.capacity!.heldAtKwhPerH).toBeCloseTo(18, 4);
    expect(evEnergy(p, 0)).toBeCloseTo(17, 4);
    expect([1, 2, 3, 4, 5].reduce((a, i) => a + evEnergy(p, i), 0)).toBeCloseTo(13, 4);
    expect(p.capacity).toMatchObject({ step: 2 });
  });

  it("holds the sum of four quarter-hours, not each quarter, to the hour's cap", () => {
    const quarters = [0.1, 0.1, 0.1, 0.1, ...Array<number>(20).fill(0.2)];
    const p = capacityPlan(evInput(quarters, 10, 15), T0, ctx(norway, peaks(4, 4, 4)));
    const hour0 = [0, 1, 2, 3].reduce((a, i) => a + evEnergy(p, i), 0) + 1; // + base load
    expect(hour0).toBeCloseTo(7, 3);
    expect(p.capacity!.step).toBe(1);
  });

  it('never holds the car below what it needs by departure', () => {
    // 60 kWh in 6 h needs 10 kWh/h on average: holding to ≤ 5 (7 kWh/h) would miss it, so it is not chosen.
    const p = capacityPlan(evInput(prices, 60), T0, ctx(norway, peaks(4, 4, 4)));
    expect(p.shortfalls).toEqual([]);
    expect(p.slots.reduce((a, _, i) => a + evEnergy(p, i), 0)).toBeCloseTo(60, 3);
  });

  it('with a fee per kW, holds the month at what is already metered when that is cheapest', () => {
    // 29 per kW: every kW of measure costs far more than spreading 10 kWh over dearer hours.
    const perKw: CapacityModel = { measure: 'dailyPeaks', count: 3, days: 'all', perKwPerMonth: 29 };
    const p = capacityPlan(evInput(prices, 10), T0, ctx(perKw, peaks(4, 4, 4)));
    expect(p.capacity!.measureKw).toBeCloseTo(4, 4);
    expect(p.capacity!.feePerMonth).toBeCloseTo(116, 3);
    expect(p.capacity!.heldAtKwhPerH).toBeCloseTo(4, 4);
    expect(p.capacity!.unheldBill).toBeCloseTo(1 + (29 * (11 + 8)) / 3, 3);
  });

  it("with seasonal per-kW prices, holds where the month's season makes the kW dear and not where it is cheap", () => {
    const months = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const winterDear: CapacityModel = {
      measure: 'dailyPeaks',
      count: 3,
      days: 'all',
      seasons: [
        { months: months(10, 12), perKwPerMonth: 29 },
        { months: months(1, 9), perKwPerMonth: 0.001 },
      ],
    };
    const held = capacityPlan(evInput(prices, 10), T0, ctx(winterDear, peaks(4, 4, 4)));
    expect(held.capacity!.heldAtKwhPerH).toBeCloseTo(4, 4);
    expect(held.capacity!.feePerMonth).toBeCloseTo(116, 3);
    // The same rule with November in the cheap season: the cheap hour is worth the kW.
    const summerNow: CapacityModel = {
      ...winterDear,
      seasons: [
        { months: months(1, 11), perKwPerMonth: 0.001 },
        { months: [12], perKwPerMonth: 29 },
      ],
    };
    const free = capacityPlan(evInput(prices, 10), T0, ctx(summerNow, peaks(4, 4, 4)));
    expect(free.capacity!.heldAtKwhPerH).toBeNull();
    expect(evEnergy(free, 0)).toBeCloseTo(10, 4);
  });

  it('lets night hours take twice as much when they count at half', () => {
    // Hours 0–5 UTC are night (22–6 weighted 0.5). A 22 kW car needing 30 kWh: unheld, hour 0 takes
    // 23 kWh/h, weighted 11.5 → (11.5+4+4)/3 = 6.5 → the 5–10 step. Held to ≤ 5 the weighted cap
    // is 7, so 14 kWh/h a night hour: 13 of car in hours 0 and 1, 4 in the dearer ones.
    const night: CapacityModel = { ...norway, nightWeight: { weight: 0.5, hours: { from: 22, to: 6 } } };
    const input = evInput(prices, 30);
    const p = capacityPlan({ ...input, ev: { ...input.ev!, maxPowerKw: 22 } }, T0, ctx(night, peaks(4, 4, 4)));
    expect(p.capacity).toMatchObject({ step: 1 });
    expect(p.capacity!.heldAtKwhPerH).toBeCloseTo(14, 4);
    expect(evEnergy(p, 0)).toBeCloseTo(13, 4);
    expect(evEnergy(p, 1)).toBeCloseTo(13, 4);
    expect([2, 3, 4, 5].reduce((a, i) => a + evEnergy(p, i), 0)).toBeCloseTo(4, 4);
  });

  it('gives a day that needs it the room another day leaves unused', () => {
    // Metered 2, 2; tomorrow only base load (1 kWh/h). Unheld: 11 kW car + 1 → 12 → (12+2+2)/3 = 5.33.
    // Every planned day at the same cap C: (C+C+2)/3 ≤ 5 → C = 6.5. Tomorrow stays at 1, so today
    // may reach (C+2+2)/3 = 5 → C = 11: 10 kWh of car in the cheap hour, 2 in the next.
    const twoDays = [0.1, 0.2, ...Array<number>(46).fill(0.3)];
    const p = capacityPlan(evInput(twoDays, 12), T0, ctx(norway, peaks(2, 2)));
    expect(evEnergy(p, 0)).toBeCloseTo(10, 3);
    expect(evEnergy(p, 1)).toBeCloseTo(2, 3);
    expect(p.capacity!.measureKw).toBeCloseTo(5, 3);
    expect(p.capacity!.heldAtKwhPerH).toBeCloseTo(11, 3);
  });

  it('gives a car held just above its minimum power what it needs, not every slot at full power', () => {
    // Held at 6 kWh/h the cheap hours leave the car 4.4 kWh (base 1.6), the others 5: two cheap
    // hours (8.8) fall short of 9 kWh and three minimums (12) overshoot, so one cheap hour and one
    // at 0.5 (4.4 + 4.6). Before, the car was planned at full power everywhere (28.8 kWh).
    const rule: CapacityModel = {
      measure: 'dailyPeaks',
      count: 1,
      days: 'all',
      steps: [
        { upToKw: 6, perMonth: 100 },
        { upToKw: null, perMonth: 1000 },
      ],
    };
    const input = evInput([0.1, 0.1, 0.5, 0.5, 0.9, 0.9], 9);
    const held: PlanInput = { ...input, ev: { ...input.ev!, minPowerKw: 4 }, location: { limitKw: 25, baseLoadKw: [1.6, 1.6, 1, 1, 1, 1] } };
    const p = capacityPlan(held, T0, ctx(rule, []));
    expect(p.slots.reduce((a, _, i) => a + evEnergy(p, i), 0)).toBeCloseTo(9, 4);
    expect(evEnergy(p, 0) + evEnergy(p, 1)).toBeCloseTo(4.4, 4);
    expect(evEnergy(p, 2) + evEnergy(p, 3)).toBeCloseTo(4.6, 4);
    expect(p.capacity).toMatchObject({ step: 0, feePerMonth: 100 });
    expect(p.capacity!.bill).toBeCloseTo(4.4 * 0.1 + 4.6 * 0.5 + 100, 4);
  });

  it('does not hold the tank so that it ends the plan cooler than it started', () => {
    // 1 kWh drawn each hour; held at 1.5 kWh/h (base 1) the tank gets 0.5 kWh/h and would end
    // some 9 K cooler (above its floor, so no shortfall): that hold passes the cost on to later.
    const rule: CapacityModel = {
      measure: 'hourlyPeaks',
      count: 1,
      days: 'all',
      steps: [
        { upToKw: 1.5, perMonth: 100 },
        { upToKw: null, perMonth: 200 },
      ],
    };
    const input: PlanInput = {
      slots: slots([0.1, 0.2, 0.3, 0.3]),
      timezone: 'UTC',
      currency: 'NOK',
      ev: null,
      tank: {
        volumeL: 200,
        powerKw: 2,
        coldWaterC: 10,
        ambientC: 20,
        heatLossWPerK: 0,
        minC: 45,
        maxC: 75,
        currentTempC: 65,
        control: 'continuous',
        drawProfileKwh: Array<number>(24).fill(1),
      },
      location: { limitKw: 25, baseLoadKw: 1 },
    };
    const p = capacityPlan(input, T0, ctx(rule, []));
    expect(p.slots.at(-1)!.tanks!.tank!.endTempC).toBeGreaterThanOrEqual(65 - 1e-3);
    expect(p.capacity).toMatchObject({ step: 1, heldAtKwhPerH: null });
  });

  it("lets a day held below the month's third peak rise to it: the measure stays the same", () => {
    // Metered 5 and 4; a car needing 12 kWh over two days (cheap hour 0 today, 0.2 tomorrow).
    // Held to ≤ 5: today + 5 + max(4, tomorrow) ≤ 15, so today 6 and tomorrow up to 4 for free:
    // 5 kWh of car today, 3 tomorrow, 4 at 0.5. Held at its base load (1), tomorrow took only 1.
    const prices = [0.1, ...Array<number>(23).fill(0.5), 0.2, ...Array<number>(23).fill(0.5)];
    const input = evInput(prices, 12);
    const p = capacityPlan({ ...input, ev: { ...input.ev!, departureMs: T0 + 48 * H } }, T0, ctx(norway, peaks(5, 4)));
    expect(evEnergy(p, 0)).toBeCloseTo(5, 3);
    expect(evEnergy(p, 24)).toBeCloseTo(3, 3);
    expect(p.capacity).toMatchObject({ step: 1 });
    expect(p.capacity!.bill).toBeCloseTo(5 * 0.1 + 3 * 0.2 + 4 * 0.5 + 200, 3);
  });

  it('finds a level between the one that starves the car and the one that starves the tank', () => {
    // Metered 6: held to ≤ 5, today + tomorrow ≤ 9. The car (today only, at least 4.6 kW over a
    // 1 kW base) needs today ≥ 5.6; the tank must heat tomorrow to end where it started. All
    // alike (4.5 each) starves the car; tomorrow at its base load starves the tank. A level in
    // between keeps both.
    const prices = [...Array<number>(6).fill(0.1), ...Array<number>(42).fill(0.3)];
    const input: PlanInput = {
      slots: slots(prices),
      timezone: 'UTC',
      currency: 'NOK',
      ev: { energyNeededKwh: 10, departureMs: T0 + 24 * H, minPowerKw: 4.6, maxPowerKw: 11, efficiency: 1 },
      tank: {
        volumeL: 200,
        powerKw: 2.5,
        coldWaterC: 10,
        ambientC: 20,
        heatLossWPerK: 0,
        minC: 45,
        maxC: 75,
        currentTempC: 70,
        control: 'continuous',
        drawProfileKwh: Array<number>(24).fill(0.2),
      },
      location: { limitKw: 25, baseLoadKw: 1 },
    };
    const p = capacityPlan(input, T0, ctx(norway, peaks(6)));
    expect(p.shortfalls).toEqual([]);
    expect(p.capacity).toMatchObject({ step: 1 });
    expect(p.slots.reduce((a, _, i) => a + evEnergy(p, i), 0)).toBeCloseTo(10, 3);
    expect(p.slots.at(-1)!.tanks!.tank!.endTempC).toBeGreaterThanOrEqual(70 - 1e-3);
  });
});
