import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plan } from '../src/core/planner.js';
import { buildPriceSeries } from '../src/core/prices.js';
import type { EvParams, Plan, PlanInput, PriceSlot, TankParams } from '../src/core/types.js';

const H = 3_600_000;
const T0 = Date.parse('2025-01-14T23:00:00Z'); // local midnight in Oslo

function slotsFrom(prices: number[], slotMinutes: 15 | 60 = 60, fromMs = T0): PriceSlot[] {
  const len = slotMinutes * 60_000;
  return buildPriceSeries({
    slotMinutes,
    fromMs,
    toMs: fromMs + prices.length * len,
    timezone: 'Europe/Oslo',
    currency: 'EUR',
    spot: {
      actual: {
        units: { currency: 'EUR', energyUnit: 'kWh' },
        resolutionMinutes: slotMinutes,
        points: prices.map((p, i) => ({ startMs: fromMs + i * len, price: p })),
      },
    },
    deltas: [],
    fees: { gridFeePerKwh: 0, taxPerKwh: 0 },
  });
}

function tank(over: Partial<TankParams> = {}): TankParams {
  return {
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
  };
}

function ev(over: Partial<EvParams> = {}): EvParams {
  return { energyNeededKwh: 20, departureMs: T0 + 30 * H, minPowerKw: 4.14, maxPowerKw: 11, efficiency: 0.9, ...over };
}

function input(prices: number[], over: Partial<PlanInput> = {}): PlanInput {
  return {
    slots: slotsFrom(prices),
    timezone: 'Europe/Oslo',
    currency: 'EUR',
    tank: tank(),
    ev: null,
    location: { limitKw: 17, baseLoadKw: 0 },
    ...over,
  };
}

/** Re-simulates the tank from the plan's energies with the same one-node model. */
function checkTank(p: Plan, t: TankParams): void {
  const C = t.volumeL * 0.001163;
  const ua = t.heatLossWPerK / 1000;
  const hours = p.slotMinutes / 60;
  let e = C * ((p.tanks?.tank?.startTempC ?? t.minC) - t.coldWaterC);
  for (const s of p.slots) {
    const d = s.tanks!.tank!;
    const hour = Number(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Oslo', hour: '2-digit', hourCycle: 'h23' }).format(s.startMs));
    const draw =
      ([0, 0, 0, 0, 0, 0, 0, 1.61, 0.42, 0.21, 0.105, 0.21, 0.315, 0, 0.105, 0.105, 0.105, 0, 0.315, 0.105, 0.735, 1.505, 0, 0][hour] ?? 0) * hours;
    e = (1 - (ua * hours) / C) * e - draw - ua * hours * (t.coldWaterC - t.ambientC) + d.energyKwh;
    const temp = t.coldWaterC + e / C;
    expect(temp).toBeCloseTo(d.endTempC, 6);
    expect(temp).toBeGreaterThanOrEqual(t.minC - 1e-6);
    expect(temp).toBeLessThanOrEqual(t.maxC + 1e-6);
    expect(d.energyKwh).toBeGreaterThanOrEqual(-1e-12);
    expect(d.energyKwh).toBeLessThanOrEqual(t.powerKw * hours + 1e-9);
  }
}

const priceArb = fc.array(fc.double({ min: -0.2, max: 0.6, noNaN: true, noDefaultInfinity: true }), { minLength: 24, maxLength: 48 });

describe('plan: properties', () => {
  it('keeps the simulated tank temperature within its bounds in every slot', () => {
    fc.assert(
      fc.property(priceArb, fc.double({ min: 50, max: 75, noNaN: true }), fc.boolean(), (prices, temp, relay) => {
        const t = tank({ currentTempC: temp, control: relay ? 'relay' : 'continuous' });
        const p = plan(input(prices, { tank: t }), T0);
        expect(p.shortfalls).toEqual([]);
        checkTank(p, t);
      }),
      { numRuns: 40 },
    );
  });

  it('meets the EV target whenever it is feasible, and keeps every cap in every slot', () => {
    fc.assert(
      fc.property(
        priceArb,
        fc.double({ min: 0, max: 60, noNaN: true }),
        fc.integer({ min: 2, max: 30 }),
        fc.double({ min: 0, max: 12, noNaN: true }),
        fc.integer({ min: 0, max: 20 }),
        (prices, need, depH, lpcKw, lpcAt) => {
          const lpc = [{ startMs: T0 + lpcAt * H, endMs: T0 + (lpcAt + 3) * H, maxKw: lpcKw, scope: 'location' as const }];
          const e = ev({ energyNeededKwh: need, departureMs: T0 + depH * H });
          const inp = input(prices, { tank: tank(), ev: e, location: { limitKw: 11, baseLoadKw: 1, lpc } });
          const p = plan(inp, T0);
          for (const s of p.slots) {
            const total = s.tanks!.tank!.powerKw + s.evs!.ev!.powerKw;
            const capped = s.startMs < lpc[0]!.endMs && s.endMs > lpc[0]!.startMs;
            expect(total).toBeLessThanOrEqual(Math.max(0, (capped ? Math.min(11, lpcKw) : 11) - 1) + 1e-9);
            expect(s.evs!.ev!.powerKw === 0 || s.evs!.ev!.powerKw >= 4.14 - 1e-9).toBe(true);
            if (s.startMs >= e.departureMs) expect(s.evs!.ev!.energyKwh).toBe(0);
          }
          // Feasible if the car alone can take its energy in the uncapped hours before departure.
          let room = 0;
          for (const s of p.slots) {
            const capped = s.startMs < lpc[0]!.endMs && s.endMs > lpc[0]!.startMs;
            const kw = Math.min(11, (capped ? Math.min(11, lpcKw) : 11) - 1);
            if (s.endMs <= e.departureMs && kw >= 4.14) room += kw - 2; // minus the tank's worst case
          }
          const got = p.slots.reduce((x, s) => x + s.evs!.ev!.energyKwh, 0) * 0.9;
          if (room * 0.9 >= need) expect(got).toBeGreaterThanOrEqual(need - 1e-6);
          const evShort = p.shortfalls.find((x) => x.kind === 'evTarget');
          if (got < need - 1e-6) expect(evShort).toBeDefined();
          else expect(evShort).toBeUndefined();
        },
      ),
      { numRuns: 40 },
    );
  });

  it('is never worse than the naive baseline when the baseline keeps the same limits', () => {
    fc.assert(
      fc.property(
        priceArb,
        fc.double({ min: 50, max: 75, noNaN: true }),
        fc.double({ min: 0, max: 40, noNaN: true }),
        fc.boolean(),
        (prices, temp, need, relay) => {
          const p = plan(
            input(prices, {
              tank: tank({ currentTempC: temp, control: relay ? 'relay' : 'continuous' }),
              ev: ev({ energyNeededKwh: need, minPowerKw: 0 }),
              location: { limitKw: 25, baseLoadKw: 0 },
            }),
            T0,
          );
          expect(p.baselineRespectsLimits).toBe(true);
          expect(p.cost).toBeLessThanOrEqual(p.baselineCost + 1e-6 * Math.max(1, Math.abs(p.baselineCost)));
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('plan: cases', () => {
  it('gives a car that leaves inside a slot its power for the time it is there, not spread over the slot', () => {
    // The car leaves at 02:30; a slot's energy at full power for half an hour is 5.5 kWh at 11 kW.
    const p = plan(input([0.5, 0.5, 0.1, 0.5], { tank: null, ev: ev({ energyNeededKwh: 4.95, minPowerKw: 0, departureMs: T0 + 2.5 * H }) }), T0);
    const half = p.slots[2]!.evs!.ev!;
    expect(half.energyKwh).toBeCloseTo(5.5, 6);
    expect(half.powerKw).toBeCloseTo(11, 6);
    // The slot says when the car leaves, so control catches up by then, not by the slot's end.
    expect(half.leavesMs).toBe(T0 + 2.5 * H);
    expect(p.slots[1]!.evs!.ev!.leavesMs).toBeUndefined();
  });

  it('treats a need of a fraction of a milliwatt-hour as met, with no sliver below the charger minimum', () => {
    // Found by the property test above (fast-check seed 23757): 9e-13 kWh planned as 1e-12 kW.
    for (const need of [9e-13, 9e-10]) {
      const p = plan(input(Array(24).fill(0), { ev: ev({ energyNeededKwh: need, departureMs: T0 + 2 * H }) }), T0);
      expect(p.slots.every((s) => s.evs!.ev!.powerKw === 0)).toBe(true);
      expect(p.shortfalls).toEqual([]);
    }
  });

  it('charges the EV in the cheapest slots, ties going to the later slot', () => {
    const prices = Array.from({ length: 24 }, () => 0.1);
    const p = plan(input(prices, { tank: null, ev: ev({ energyNeededKwh: 9.9, minPowerKw: 0, departureMs: T0 + 10 * H }) }), T0);
    const charging = p.slots.filter((s) => s.evs!.ev!.on).map((s) => (s.startMs - T0) / H);
    expect(charging).toEqual([9]);
    expect(p.slots[9]!.evs!.ev!.energyKwh).toBeCloseTo(11, 9);
  });

  it('with all-negative prices fills the tank and takes the allowed extra EV energy', () => {
    const prices = Array.from({ length: 24 }, (_, i) => -0.05 - i * 0.001);
    const p = plan(input(prices, { ev: ev({ energyNeededKwh: 9, maxExtraKwh: 9, minPowerKw: 0, departureMs: T0 + 20 * H }) }), T0);
    expect(p.cost).toBeLessThan(0);
    expect(p.slots.reduce((x, s) => x + s.evs!.ev!.energyKwh, 0)).toBeCloseTo(20, 6);
    expect(Math.max(...p.slots.map((s) => s.tanks!.tank!.endTempC))).toBeCloseTo(75, 3);
    expect(p.incentiveEarned).toBe(0);
  });

  it('counts nothing extra where the plan already fills the paid-to-consume window', () => {
    const prices = Array.from({ length: 24 }, (_, i) => (i >= 10 && i < 14 ? -0.2 : 0.3 + 0.01 * i));
    const p = plan(input(prices), T0);
    expect(p.slots[13]!.tanks!.tank!.endTempC).toBeCloseTo(75, 3);
    expect(p.slots.every((s) => s.tanks!.tank!.runOnKwh === undefined)).toBe(true);
    expect(p.cost).toBeCloseTo(
      p.slots.reduce((c, s) => c + s.price * s.tanks!.tank!.energyKwh, 0),
      9,
    );
  });

  it('counts in its cost the heat control adds in a paid slot it left part empty, and the room that takes later', () => {
    // The tank starts full; by 10:00 draws and losses leave less room than the two hours' power can
    // fill, so the plan puts what it can in the -0.5 hour and only the rest in the -0.05 hour before it.
    // Control heats on to maxC in the first (src/core/control.ts), which leaves the second less room.
    const prices = Array.from({ length: 24 }, (_, i) => (i === 10 ? -0.05 : i === 11 ? -0.5 : 0.3));
    const t = tank({ currentTempC: 75 });
    const p = plan(input(prices, { tank: t }), T0);
    const [a, b] = [p.slots[10]!.tanks!.tank!, p.slots[11]!.tanks!.tank!];
    expect(a.energyKwh).toBeLessThan(2 - 1e-3);
    expect(a.runOnKwh).toBeGreaterThan(0.05);
    expect(b.runOnKwh).toBeLessThan(0);
    // What control does, by the plan's model: the first hour ends at maxC (or at full power), the
    // tank never goes above maxC, and the cost is that energy at each slot's price.
    const C = t.volumeL * 0.001163;
    const ua = t.heatLossWPerK / 1000;
    let e = C * ((p.tanks?.tank?.startTempC ?? t.minC) - t.coldWaterC);
    let cost = 0;
    p.slots.forEach((s, i) => {
      const draw = [0, 0, 0, 0, 0, 0, 0, 1.61, 0.42, 0.21, 0.105, 0.21, 0.315, 0, 0.105, 0.105, 0.105, 0, 0.315, 0.105, 0.735, 1.505, 0, 0][i] ?? 0; // local hour i
      const q = s.tanks!.tank!.energyKwh + (s.tanks!.tank!.runOnKwh ?? 0);
      e = (1 - ua / C) * e - draw - ua * (t.coldWaterC - t.ambientC) + q;
      cost += s.price * q;
      expect(t.coldWaterC + e / C).toBeLessThanOrEqual(t.maxC + 1e-6);
      if (i === 10) expect(Math.min(75 - (t.coldWaterC + e / C), 2 - q)).toBeCloseTo(0, 6);
    });
    expect(p.cost).toBeCloseTo(cost, 9);
    expect(p.slots[10]!.reason).toMatch(/kWh more: heats on to 75 °C \(paid to consume\)/);
  });

  it('with all-equal prices heats no more than needed', () => {
    const t = tank({ currentTempC: 60 });
    const p = plan(
      input(
        Array.from({ length: 24 }, () => 0.2),
        { tank: t },
      ),
      T0,
    );
    checkTank(p, t);
    expect(p.cost).toBeLessThanOrEqual(p.baselineCost + 1e-9);
    expect(p.slots[p.slots.length - 1]!.tanks!.tank!.endTempC).toBeCloseTo(60, 3);
    // Each slot carries the baseline's energy (what the bill's savings are measured against): it prices to the baseline's cost.
    expect(p.slots.reduce((sum, s) => sum + s.price * s.baselineKwh!, 0)).toBeCloseTo(p.baselineCost, 9);
    expect(p.slots.some((s) => s.baselineKwh! > 0)).toBe(true);
  });

  it('falls back when no price is known: tank on its thermostat, EV in the night window', () => {
    const slots = buildPriceSeries({
      slotMinutes: 60,
      fromMs: T0 + 12 * H,
      toMs: T0 + 36 * H,
      timezone: 'Europe/Oslo',
      currency: 'EUR',
      spot: {},
      deltas: [],
      fees: { gridFeePerKwh: 0, taxPerKwh: 0 },
    });
    const p = plan(
      {
        slots,
        timezone: 'Europe/Oslo',
        currency: 'EUR',
        tank: tank({ currentTempC: 55 }),
        ev: ev({ energyNeededKwh: 18, minPowerKw: 0, departureMs: T0 + 31 * H }),
        location: { limitKw: 25, baseLoadKw: 0 },
      },
      T0 + 12 * H,
    );
    expect(p.mode).toBe('fallback');
    expect(p.slots[0]!.tanks!.tank!.on).toBe(true);
    expect(p.slots[0]!.binding).toContain('fallback');
    const evHours = p.slots.filter((s) => s.evs!.ev!.on).map((s) => new Date(s.startMs).getUTCHours() + 1);
    for (const h of evHours) expect(h >= 22 || h < 6).toBe(true);
    expect(p.shortfalls).toEqual([]);
  });

  it('plans only what must be planned inside the known prices when the forecast is missing', () => {
    const slots = buildPriceSeries({
      slotMinutes: 60,
      fromMs: T0,
      toMs: T0 + 24 * H,
      timezone: 'Europe/Oslo',
      currency: 'EUR',
      spot: {
        actual: {
          units: { currency: 'EUR', energyUnit: 'kWh' },
          resolutionMinutes: 60,
          points: Array.from({ length: 12 }, (_, i) => ({ startMs: T0 + i * H, price: 0.1 })),
        },
      },
      deltas: [],
      fees: { gridFeePerKwh: 0, taxPerKwh: 0 },
    });
    expect(slots[12]!.source).toBe('fallback');
    const p = plan(
      {
        slots,
        timezone: 'Europe/Oslo',
        currency: 'EUR',
        ev: ev({ energyNeededKwh: 99, minPowerKw: 0, departureMs: T0 + 22 * H }),
        location: { limitKw: 25, baseLoadKw: 0 },
      },
      T0,
    );
    expect(p.mode).toBe('optimal');
    const known = p.slots.slice(0, 12).reduce((x, s) => x + s.evs!.ev!.energyKwh, 0);
    const unknown = p.slots.slice(12).reduce((x, s) => x + s.evs!.ev!.energyKwh, 0);
    expect(unknown).toBeCloseTo(110, 6); // 10 unknown hours at 11 kW
    expect(known).toBeCloseTo(110 - 110 + 99 / 0.9 - 110, 6);
  });

  it('a 0 kW LPC cap stops everything in its slots and the plan says what falls short', () => {
    const lpc = [{ startMs: T0, endMs: T0 + 24 * H, maxKw: 0, scope: 'location' as const }];
    const p = plan(
      input(
        Array.from({ length: 24 }, () => 0.1),
        { tank: tank({ currentTempC: 51 }), ev: ev(), location: { limitKw: 17, baseLoadKw: 0.5, lpc } },
      ),
      T0,
    );
    for (const s of p.slots) {
      expect(s.tanks!.tank!.energyKwh).toBe(0);
      expect(s.evs!.ev!.energyKwh).toBe(0);
      expect(s.binding).not.toContain('tankPower');
    }
    const kinds = p.shortfalls.map((s) => s.kind);
    expect(kinds).toContain('belowFloor');
    expect(kinds).toContain('evTarget');
    expect(kinds).toContain('baseLoadOverCap');
  });

  it('places the legionella cycle in the cheapest feasible window before its deadline', () => {
    const prices = Array.from({ length: 48 }, (_, i) => (i === 30 || i === 31 || i === 32 ? 0.01 : 0.3));
    const t = tank({ currentTempC: 58, legionella: { tempC: 65, everyDays: 7, lastReachedMs: T0 - 5.5 * 86_400_000 } });
    const p = plan(input(prices, { tank: t }), T0);
    expect(p.shortfalls).toEqual([]);
    const hot = p.slots.findIndex((s) => s.tanks!.tank!.endTempC >= 65 - 1e-6);
    expect(hot).toBeGreaterThanOrEqual(30);
    expect(hot).toBeLessThanOrEqual(32);
    expect(p.tanks?.tank?.legionellaAtMs).toBe(p.slots[hot]!.startMs);
    for (const rel of [false, true]) {
      const pr = plan(input(prices, { tank: { ...t, control: rel ? 'relay' : 'continuous' } }), T0);
      expect(pr.shortfalls).toEqual([]);
      expect(Math.max(...pr.slots.slice(0, 48).map((s) => s.tanks!.tank!.endTempC))).toBeGreaterThanOrEqual(65 - 1e-6);
    }
  });

  it('reports an unreachable EV target as a shortfall instead of throwing', () => {
    const p = plan(
      input(
        Array.from({ length: 24 }, () => 0.1),
        { tank: null, ev: ev({ energyNeededKwh: 80, departureMs: T0 + 3 * H }) },
      ),
      T0,
    );
    expect(p.slots.slice(0, 3).every((s) => s.evs!.ev!.energyKwh === 11)).toBe(true);
    const sf = p.shortfalls.find((s) => s.kind === 'evTarget');
    expect(sf?.amount).toBeCloseTo(80 - 33 * 0.9, 6);
  });

  it('keeps the current slot and the frozen window from the previous plan', () => {
    const prices = Array.from({ length: 24 }, (_, i) => 0.1 + 0.01 * ((i * 7) % 5));
    const first = plan(input(prices), T0);
    const moved = prices.slice();
    moved[0] = prices[0]! + 1; // the current slot becomes dear: without stability it would move
    moved[1] = prices[1]! - 1;
    const again = plan(input(moved, { options: { frozenSlots: 1 } }), T0 + 10 * 60_000, first);
    expect(again.slots[0]!.tanks!.tank!.energyKwh).toBeCloseTo(Math.min(first.slots[0]!.tanks!.tank!.energyKwh, 2 * (50 / 60)), 9);
    expect(again.slots[1]!.tanks!.tank!.energyKwh).toBeCloseTo(first.slots[1]!.tanks!.tank!.energyKwh, 9);
    expect(again.slots[0]!.binding).toContain('frozen');
  });

  it("keeps a slot's whole-slot target through a re-plan at any point inside it", () => {
    // Slot 0 is the cheapest, so the first plan heats in it; the devices meter what they took.
    const prices = [0.01, ...Array.from({ length: 23 }, () => 0.5)];
    const first = plan(input(prices, { tank: tank({ currentTempC: 55 }) }), T0);
    const target = first.slots[0]!.tanks!.tank!.energyKwh;
    expect(target).toBeCloseTo(2, 9);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 59 }), fc.double({ min: 0, max: 1, noNaN: true }), (minute, share) => {
        // Whatever the heater took by then (a thermostat pause means it may be behind its power).
        const delivered = Math.min(target, 2 * (minute / 60)) * share;
        const t = tank({ currentTempC: 55 + delivered / (200 * 0.001163), slotDeliveredKwh: delivered });
        const again = plan(input(prices, { tank: t }), T0 + minute * 60_000, first);
        const s0 = again.slots[0]!.tanks!.tank!;
        // The target still counts the slot from its start: what was taken plus what the time left allows.
        expect(s0.energyKwh).toBeCloseTo(delivered + Math.min(target - delivered, 2 * ((60 - minute) / 60)), 9);
        expect(s0.powerKw).toBeLessThanOrEqual(2 + 1e-9);
      }),
      { numRuns: 30 },
    );
  });

  it('does not ask a slot for its energy twice when the re-plan comes after it was delivered', () => {
    const prices = [0.2, 0.01, ...Array.from({ length: 22 }, () => 0.5)];
    const first = plan(input(prices, { tank: tank({ currentTempC: 55 }) }), T0);
    const target = first.slots[0]!.tanks!.tank!.energyKwh;
    // Already delivered in full by minute 40: the re-plan must not add more to this slot.
    const again = plan(input(prices, { tank: tank({ currentTempC: 56, slotDeliveredKwh: target }) }), T0 + 40 * 60_000, first);
    expect(again.slots[0]!.tanks!.tank!.energyKwh).toBeCloseTo(target, 9);
    expect(again.slots[0]!.tanks!.tank!.powerKw).toBe(0);
  });
  it('plans on 15-minute slots across a 25-hour DST day', () => {
    const from = Date.parse('2024-10-26T22:00:00Z');
    const prices = Array.from({ length: 100 }, (_, i) => 0.1 + 0.05 * Math.sin(i / 7));
    const t = tank();
    const p = plan({ ...input([]), slots: slotsFrom(prices, 15, from), tank: t, ev: ev({ departureMs: from + 20 * H }) }, from);
    expect(p.slots).toHaveLength(100);
    expect(p.shortfalls).toEqual([]);
    for (const s of p.slots) expect(s.tanks!.tank!.endTempC).toBeGreaterThanOrEqual(50 - 1e-6);
    expect(p.slots.reduce((x, s) => x + s.evs!.ev!.energyKwh, 0)).toBeCloseTo(20 / 0.9, 6);
  });

  it('plans an hourly 23-hour DST day with the draws at their local hours', () => {
    const from = Date.parse('2024-03-30T23:00:00Z');
    const prices = Array.from({ length: 23 }, (_, i) => 0.1 + 0.05 * Math.cos(i / 4));
    const t = tank({ currentTempC: 56 });
    const p = plan({ ...input([]), slots: slotsFrom(prices, 60, from), tank: t }, from);
    expect(p.slots).toHaveLength(23);
    expect(p.shortfalls).toEqual([]);
    checkTank(p, t); // re-simulates with the Oslo local hour of every slot
  });

  it('estimates the tank temperature from the energy balance when there is no sensor', () => {
    const t = tank({ currentTempC: null, lastKnown: { tempC: 70, atMs: T0 - 2 * H }, heatedSinceKwh: 0 });
    const p = plan(
      input(
        Array.from({ length: 24 }, () => 0.1),
        { tank: t },
      ),
      T0,
    );
    expect(p.tanks?.tank?.tempSource).toBe('estimated');
    expect(p.tanks?.tank?.startTempC).toBeLessThan(70);
    expect(p.tanks?.tank?.startTempC).toBeGreaterThan(68.5);
    const none = plan(
      input(
        Array.from({ length: 24 }, () => 0.1),
        { tank: tank({ currentTempC: null }) },
      ),
      T0,
    );
    expect(none.tanks?.tank?.tempSource).toBe('assumed');
    expect(none.tanks?.tank?.startTempC).toBe(50);
  });

  it('explains every slot', () => {
    const p = plan(input([0.3, 0.1, 0.2], { ev: ev({ energyNeededKwh: 5, minPowerKw: 0, departureMs: T0 + 3 * H }) }), T0);
    for (const s of p.slots) expect(s.reason).toMatch(/EUR\/kWh \(rank \d\/3/);
    expect(p.slots[1]!.reason).toMatch(/ev 5\.56 kWh/);
  });

  it('keeps minimum on/off durations and the maximum starts per local day', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -0.1, max: 0.5, noNaN: true }), { minLength: 48, maxLength: 48 }), (prices) => {
        const ac = { minOnSlots: 2, minOffSlots: 2, maxStartsPerDay: 2 };
        for (const control of ['relay', 'continuous'] as const) {
          const t = tank({ control, antiCycling: ac, currentTempC: 65 });
          const p = plan(
            input(prices, { tank: t, ev: ev({ energyNeededKwh: 30, minPowerKw: 4.14, departureMs: T0 + 40 * H, antiCycling: { minOnSlots: 3 } }) }),
            T0,
          );
          checkTank(p, t);
          for (const dev of ['tank', 'ev'] as const) {
            const on = p.slots.map((s) => (dev === 'tank' ? s.tanks!.tank! : s.evs!.ev!).on);
            const minOn = dev === 'tank' ? 2 : 3;
            // Runs (except one cut by the horizon end) last at least minOn slots.
            let i = 0;
            const startsPerDay = new Map<string, number>();
            while (i < on.length) {
              if (!on[i]) {
                i++;
                continue;
              }
              let j = i;
              while (j < on.length && on[j]) j++;
              if (j < on.length) expect(j - i).toBeGreaterThanOrEqual(minOn);
              const day = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Oslo' }).format(p.slots[i]!.startMs);
              startsPerDay.set(day, (startsPerDay.get(day) ?? 0) + 1);
              i = j;
            }
            if (dev === 'tank') for (const n of startsPerDay.values()) expect(n).toBeLessThanOrEqual(2);
          }
          const got = p.slots.reduce((x, s) => x + s.evs!.ev!.energyKwh, 0) * 0.9;
          expect(got).toBeGreaterThanOrEqual(30 - 1e-3);
        }
      }),
      { numRuns: 6 },
    );
  });

  it('reports a legionella rule above the thermostat, and an empty or past horizon, without throwing', () => {
    const p = plan(input([0.1, 0.1, 0.1], { tank: tank({ maxC: 55, legionella: { tempC: 60, everyDays: 7, lastReachedMs: null } }) }), T0);
    expect(p.shortfalls.map((x) => x.kind)).toEqual(['legionella']);
    const empty = plan(input([]), T0);
    expect(empty.slots).toEqual([]);
    const past = plan(input([0.1, 0.2]), T0 + 10 * H);
    expect(past.slots).toEqual([]);
    expect(past.cost).toBe(0);
  });

  it('marks a device LPC cap as the binding constraint', () => {
    const lpc = [{ startMs: T0, endMs: T0 + 2 * H, maxKw: 0, scope: 'tank' as const }];
    const p = plan(input([0.1, 0.1, 0.1, 0.1], { tank: tank({ currentTempC: 52 }), location: { limitKw: 17, baseLoadKw: 0, lpc } }), T0);
    expect(p.slots[0]!.tanks!.tank!.energyKwh).toBe(0);
    expect(p.slots[0]!.binding).toContain('lpc');
    expect(p.slots[1]!.binding).toContain('lpc');
  });
});

describe("plan: the bill's baseline of a charging session", () => {
  // Plugged in at 17:30 needing 30 kWh (grid) at 11 kW; cheap at night, so wattshift waits.
  const start = T0 + 17 * H;
  const prices = Array.from({ length: 30 }, (_, h) => (h >= 7 && h <= 10 ? 0.05 : 0.5));
  const session = { startMs: start + 0.5 * H, deliveredKwh: 0 };
  const evInput = (nowMs: number) =>
    input(prices, {
      slots: slotsFrom(prices, 60, start).filter((s) => s.endMs > nowMs),
      tank: null,
      ev: ev({ energyNeededKwh: 27, efficiency: 0.9, departureMs: start + 14 * H, session }),
    });
  const baselineAt = (p: Plan, hour: number): number => p.slots.find((s) => s.startMs === start + hour * H)?.baselineKwh ?? Number.NaN;

  it('charges the naive car at full power from its plug-in time, whichever plan of the session states it', () => {
    const first = plan(evInput(start + 0.5 * H), start + 0.5 * H);
    const later = plan(evInput(start + 2.5 * H), start + 2.5 * H); // two hours on, nothing charged yet
    expect(first.slots.slice(0, 4).map((s) => s.baselineKwh)).toEqual([5.5, 11, 11, 2.5]);
    for (const hour of [2, 3, 4]) expect(baselineAt(later, hour)).toBeCloseTo(baselineAt(first, hour), 9);
    // One session's naive energy is its energy, once: 30 kWh, not 30 more for each re-plan.
    expect(first.slots.reduce((sum, s) => sum + (s.baselineKwh ?? 0), 0)).toBeCloseTo(30, 9);
  });

  it("without a session the baseline runs from the plan's own start, as before", () => {
    const { session: _none, ...noSession } = ev({ energyNeededKwh: 27, efficiency: 0.9, departureMs: start + 14 * H });
    const p = plan(input(prices, { slots: slotsFrom(prices, 60, start + 2 * H), tank: null, ev: noSession }), start + 2 * H);
    expect(p.slots.slice(0, 3).map((s) => s.baselineKwh)).toEqual([11, 11, 8]);
  });
});

describe("plan: the bill's baseline tank", () => {
  const prices = Array.from({ length: 30 }, (_, h) => (h >= 3 && h <= 5 ? 0.05 : 0.5));
  const tankInput = (fromMs: number, currentTempC: number) =>
    input(prices, { slots: slotsFrom(prices, 60, T0).filter((s) => s.endMs > fromMs), tank: tank({ currentTempC }) });

  it('is carried from plan to plan: a re-plan after wattshift let the tank cool does not reheat the naive one', () => {
    const first = plan(tankInput(T0, 60), T0);
    // An hour on, wattshift has waited for the cheap hours and the real tank cooled to 58 °C.
    const later = plan(tankInput(T0 + H, 58), T0 + H, first);
    const fresh = plan(tankInput(T0 + H, 58), T0 + H);
    expect(first.slots[0]!.baselineTanks?.tank!.energyKwh).toBeGreaterThan(1.9); // the naive tank heats at once...
    for (const hour of [1, 2, 3]) {
      const at = (p: Plan) => p.slots.find((s) => s.startMs === T0 + hour * H)!;
      expect(at(later).baselineKwh).toBeCloseTo(at(first).baselineKwh!, 9); // ...and then stays hot, plan after plan
      expect(at(later).baselineTanks!.tank!.endTempC).toBeCloseTo(at(first).baselineTanks!.tank!.endTempC, 9);
    }
    // Started again from the real tank (58 °C), the naive one would heat from 58 °C a second time.
    const firstHours = (p: Plan) => p.slots.slice(0, 3).reduce((sum, slot) => sum + slot.baselineKwh!, 0);
    expect(firstHours(fresh)).toBeGreaterThan(firstHours(later) + 1.5);
  });
});
