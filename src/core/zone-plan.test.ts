import { describe, expect, it } from 'vitest';
import { planWithCapacity, type CapacityContext } from './capacity-plan.js';
import coastWindow from './zone-coast.fixture.json' with { type: 'json' };
import { planHome, slotFlexKw } from './home-plan.js';
import { defaultRoomModel, roomTempAfter } from './room-model.js';
import type { EvParams, HomePlanInput, LpcCap, Plan, TankParams, ZoneParams } from './types.js';
import { H, hourlySlots, osloMidnight as T0 } from '../../test/fixtures/price-slots.js';

/** A day's prices: cheap night, dear 07–09 and 17–20 (local). */
const DAY = [0.05, 0.04, 0.04, 0.04, 0.05, 0.06, 0.1, 0.3, 0.3, 0.12, 0.1, 0.1, 0.1, 0.1, 0.1, 0.11, 0.15, 0.4, 0.45, 0.4, 0.15, 0.1, 0.08, 0.06];
const PRICES = [...DAY, ...DAY];
const n = PRICES.length;

const room = (id: string, over: Partial<ZoneParams> = {}): ZoneParams => ({
  id,
  powerKw: 1.5,
  control: 'continuous',
  model: { ...defaultRoomModel({ powerKw: over.powerKw ?? 1.5, floorAreaM2: 20, construction: 'heavy' }), errorK: 0.3 },
  currentTempC: 20,
  outdoorTempC: new Array<number>(n).fill(-5),
  gainsKw: 0.1,
  band: new Array(n).fill({ minC: 20, maxC: 23 }),
  frostC: 8,
  ...over,
});
const home = (over: Partial<HomePlanInput> = {}): HomePlanInput => ({
  slots: hourlySlots(PRICES),
  timezone: 'Europe/Oslo',
  currency: 'EUR',
  tanks: [],
  evs: [],
  zones: [room('living')],
  location: { limitKw: 17, baseLoadKw: 1 },
  ...over,
});
const temps = (p: Plan, id: string): number[] => p.slots.map((s) => s.zones![id]!.endTempC);
const energy = (p: Plan, id: string): number[] => p.slots.map((s) => s.zones![id]!.energyKwh);
const cost = (p: Plan, id: string): number => p.slots.reduce((x, s) => x + s.price * s.zones![id]!.energyKwh, 0);

describe('a heated zone in the home plan', () => {
  it('says where the outdoor temperatures it planned with came from', () => {
    const input = home();
    const p = planHome({ ...input, zones: input.zones!.map((z) => ({ ...z, outdoorSource: 'persistence' as const })) }, T0);
    expect(p.zones?.living?.outdoorSource).toBe('persistence');
  });

  it('pre-heats before the peaks and coasts through them, within the band, cheaper than the thermostat alone', () => {
    const p = planHome(home(), T0);
    const e = energy(p, 'living');
    // Peak hours 17–20 take less than holding 20 °C would (the thermostat's own), the hours before more.
    const peak = [17, 18, 19];
    const base = p.slots.map((s) => s.baselineKwh ?? 0);
    expect(peak.reduce((x, t) => x + e[t]!, 0)).toBeLessThan(peak.reduce((x, t) => x + base[t]!, 0) - 0.5);
    expect(p.cost).toBeLessThan(p.baselineCost - 0.05);
    for (const [t, temp] of temps(p, 'living').entries()) {
      expect(temp, `slot ${t}`).toBeGreaterThanOrEqual(20 - 1e-6);
      expect(temp, `slot ${t}`).toBeLessThanOrEqual(23 + 1e-6);
    }
    expect(p.shortfalls).toEqual([]);
    expect(p.zones?.living).toEqual({ startTempC: 20, tempSource: 'measured', model: home().zones![0]!.model });
    // The reasons read as what the room does.
    expect(p.slots[15]!.reason).toMatch(/^living \d\.\d\d kWh, pre-heat before 16:00–21:00 peak at /);
    expect(p.slots[18]!.reason).toMatch(/^living coast within band at /);
    expect(p.slots[21]!.reason).toMatch(/^living \d\.\d\d kWh, hold 20\.0 °C at /);
    expect(p.slots[17]!.zones!.living).toMatchObject({ minC: 20, maxC: 23 });
  });

  it('follows the room model: each slot ends where the room gets with that heat', () => {
    const input = home();
    const z = input.zones![0]!;
    const p = planHome(input, T0);
    let temp = 20;
    for (const s of p.slots) {
      temp = roomTempAfter(z.model, { startC: temp, outdoorC: -5, heatKw: s.zones!.living!.powerKw, gainsKw: 0.1, hours: 1 });
      expect(s.zones!.living!.endTempC).toBeCloseTo(temp, 6);
    }
  });

  it('never plans a room below its band when nothing caps it, at any price', () => {
    const cold = home({
      zones: [room('living', { outdoorTempC: new Array<number>(n).fill(-20), band: new Array(n).fill({ minC: 21, maxC: 22 }), currentTempC: 21 })],
    });
    const p = planHome(cold, T0);
    expect(Math.min(...temps(p, 'living'))).toBeGreaterThanOrEqual(21 - 1e-6);
    expect(p.shortfalls).toEqual([]);
  });

  it('has the room within a warmer band when it starts, not an hour later', () => {
    // A bathroom floor (0.6 kW, about +0.5 K an hour at −5 °C): 19–22 °C until 06:00, 22–24 °C from
    // then; the hour from 06:00 far the cheapest, so heating late is what the price asks for.
    const prices = PRICES.map((p, t) => (t === 6 ? 0.01 : t < 6 ? 0.3 : p));
    const band = Array.from({ length: n }, (_, t) => (t >= 6 && t < 9 ? { minC: 22, maxC: 24 } : { minC: 19, maxC: 22 }));
    const model = { heatCapacityKwhPerK: 0.6, heatLossKwPerK: 0.01, errorK: 0.3, source: 'default' as const };
    for (const control of ['relay', 'continuous'] as const) {
      const bath = room('bath', { control, band, model, powerKw: 0.6, gainsKw: 0, currentTempC: 21.5 });
      const p = planHome(home({ slots: hourlySlots(prices), zones: [bath] }), T0);
      // The slot ending at 06:00 ends at the new lower edge; so does every slot of the warmer band.
      for (const t of [5, 6, 7, 8]) expect(temps(p, 'bath')[t], `${control}, slot ${t}`).toBeGreaterThanOrEqual(22 - 1e-6);
      expect(p.shortfalls, control).toEqual([]);
      // The slot still says its own band: the thermostat is set from it.
      expect(p.slots[5]!.zones!.bath, control).toMatchObject({ minC: 19, maxC: 22 });
    }
  });

  it('holds the frost floor under a location cap that takes the room below its band, and says why', () => {
    // 18 hours at 1 kW over the base load: the room cannot hold 20 °C at −15 °C but holds its frost floor.
    const cap: LpcCap = { startMs: T0 + 2 * H, endMs: T0 + 20 * H, maxKw: 2, scope: 'location' };
    const input = home({
      zones: [room('living', { outdoorTempC: new Array<number>(n).fill(-15), frostC: 12, model: { ...room('x').model, heatCapacityKwhPerK: 0.6 } })],
      location: { limitKw: 17, baseLoadKw: 1, lpc: [cap] },
    });
    const p = planHome(input, T0);
    const t = temps(p, 'living');
    expect(Math.min(...t)).toBeGreaterThanOrEqual(12 - 1e-6);
    expect(Math.min(...t)).toBeLessThan(20 - 0.5);
    const below = p.shortfalls.find((f) => f.kind === 'belowBand');
    expect(below).toMatchObject({ device: 'zone', deviceId: 'living' });
    expect(below!.message).toMatch(/power limitation \(LPC\)/);
    expect(p.shortfalls.some((f) => f.kind === 'belowFrost')).toBe(false);
    for (const s of p.slots)
      expect(slotFlexKw(s) + 1).toBeLessThanOrEqual(Math.min(17, s.startMs >= cap.startMs && s.startMs < cap.endMs ? 2 : 17) + 1e-6);
  });

  // Two rooms share too little headroom for both: a heat pump's room (3 kWh of heat a kWh) at the
  // edge of its band and a cellar kept at its frost floor (its band's lower edge) by a panel heater.
  // A kWh does most for the band in the living room, but the frost floor counts ten times the band:
  // the cellar keeps its floor and the living room goes below its band. With the frost floor at the
  // band's weight (FROST_PENALTY_FACTOR 1), the living room would take the heat and the cellar freeze.
  it.each([
    { hours: 6, limitKw: 2 },
    { hours: 24, limitKw: 2 },
    { hours: 24, limitKw: 1.9 },
  ])("holds the frost floor before another room's band ($hours h, limit $limitKw kW)", ({ hours, limitKw }) => {
    const living = room('living', {
      cop: 3,
      model: { ...defaultRoomModel({ powerKw: 1.5, cop: 3, floorAreaM2: 20, construction: 'heavy' }), errorK: 0.3 },
      band: new Array(n).fill({ minC: 20, maxC: 20.5 }),
    });
    const cellar = room('cellar', { currentTempC: 8, band: new Array(n).fill({ minC: 8, maxC: 9 }) });
    const p = planHome(home({ slots: hourlySlots(PRICES.slice(0, hours)), zones: [living, cellar], location: { limitKw, baseLoadKw: 1 } }), T0);
    expect(Math.min(...temps(p, 'cellar'))).toBeGreaterThanOrEqual(8 - 1e-3);
    expect(p.shortfalls.map((f) => `${f.deviceId} ${f.kind}`)).toEqual(['living belowBand']);
  });

  // Planned at midnight; planned again with the first two hours' price raised tenfold, the previous
  // plan given: the running slot and the next keep their energy (the controller is acting on them).
  it.each([{ control: 'continuous' as const }, { control: 'relay' as const }])(
    "keeps a $control zone's frozen slots of the previous plan",
    ({ control }) => {
      const input = home({ zones: [room('living', { control, currentTempC: 21.5 })] });
      const first = planHome(input, T0);
      const dear = PRICES.map((p, t) => (t < 2 ? 10 * p + 1 : p));
      const again = planHome({ ...input, slots: hourlySlots(dear) }, T0, first);
      const unfrozen = planHome({ ...input, slots: hourlySlots(dear) }, T0);
      expect(energy(first, 'living')[1]).toBeGreaterThan(0.1);
      expect(energy(unfrozen, 'living').slice(0, 2)).not.toEqual(energy(first, 'living').slice(0, 2));
      for (const t of [0, 1]) {
        expect(energy(again, 'living')[t], `slot ${t}`).toBeCloseTo(energy(first, 'living')[t]!, 9);
        expect(again.slots[t]!.binding).toContain('frozen');
      }
      expect(again.slots[2]!.binding).not.toContain('frozen');
    },
  );

  it('reports a room below its frost floor when even that cannot be held', () => {
    const cap: LpcCap = { startMs: T0, endMs: T0 + 48 * H, maxKw: 0, scope: 'zone', deviceId: 'living' };
    const input = home({
      zones: [room('living', { outdoorTempC: new Array<number>(n).fill(-25), frostC: 12, model: { ...room('x').model, heatCapacityKwhPerK: 0.6 } })],
      location: { limitKw: 17, baseLoadKw: 1, lpc: [cap] },
    });
    const p = planHome(input, T0);
    expect(energy(p, 'living').every((e) => e === 0)).toBe(true);
    expect(p.shortfalls.map((f) => f.kind).sort()).toEqual(['belowBand', 'belowFrost']);
  });

  it('switches a relay zone for whole slots only', () => {
    const p = planHome(home({ zones: [room('bath', { control: 'relay' })] }), T0);
    // Off, or on for the whole slot (the heater's own thermostat may stop it at the band's top).
    for (const s of p.slots) {
      const z = s.zones!.bath!;
      if (!z.on) expect(z.energyKwh).toBe(0);
      else if (z.energyKwh < 1.5 - 1e-9) expect(z.endTempC).toBeCloseTo(z.maxC, 6);
    }
    expect(Math.min(...temps(p, 'bath'))).toBeGreaterThanOrEqual(20 - 1e-6);
    expect(p.cost).toBeLessThan(p.baselineCost);
  });

  it('shares a tight headroom among three zones, a tank and a car', () => {
    const tank: TankParams & { id: string } = {
      id: 'hw',
      volumeL: 200,
      powerKw: 2,
      coldWaterC: 8,
      ambientC: 18,
      heatLossWPerK: 1.6,
      minC: 50,
      maxC: 75,
      currentTempC: 60,
      control: 'continuous',
    };
    const car: EvParams & { id: string } = {
      id: 'ev',
      energyNeededKwh: 20,
      departureMs: T0 + 31 * H,
      minPowerKw: 4.14,
      maxPowerKw: 7.4,
      efficiency: 0.9,
    };
    const input = home({
      zones: [
        room('living'),
        room('bed', { powerKw: 1, control: 'relay', band: new Array(n).fill({ minC: 17, maxC: 21 }) }),
        room('bath', { powerKw: 0.8 }),
      ],
      tanks: [tank],
      evs: [car],
      location: { limitKw: 8, baseLoadKw: 1 },
    });
    const p = planHome(input, T0);
    for (const s of p.slots) expect(slotFlexKw(s)).toBeLessThanOrEqual(7 + 1e-6);
    expect(p.shortfalls).toEqual([]);
    for (const id of ['living', 'bath']) expect(Math.min(...temps(p, id))).toBeGreaterThanOrEqual(20 - 1e-6);
    expect(Math.min(...temps(p, 'bed'))).toBeGreaterThanOrEqual(17 - 1e-6);
    expect(Object.keys(p.zones!).sort()).toEqual(['bath', 'bed', 'living']);
    expect(cost(p, 'living') + cost(p, 'bed') + cost(p, 'bath')).toBeGreaterThan(0);
    expect(p.cost).toBeLessThan(p.baselineCost);
  });

  it("counts the rooms' energy in the month's capacity step", () => {
    const rule = {
      measure: 'dailyPeaks' as const,
      count: 3,
      days: 'all' as const,
      steps: [
        { upToKw: 2, perMonth: 10 },
        { upToKw: 5, perMonth: 20 },
        { upToKw: null, perMonth: 40 },
      ],
    };
    const p = planWithCapacity(home({ location: { limitKw: 17, baseLoadKw: 0.5 } }), T0, {
      rule,
      timezone: 'Europe/Oslo',
      holidays: [],
      meteredHours: [],
      vatRate: 1,
    });
    // Holding 20 °C at −5 °C takes about 0.8 kWh an hour: each day's peak hour is above the base load by at least that.
    expect(p.capacity!.measureKw).toBeGreaterThan(0.5 + 0.8);
    const peak = Math.max(...p.slots.map((s) => 0.5 + s.zones!.living!.energyKwh));
    expect(p.capacity!.measureKw).toBeLessThanOrEqual(peak + 1e-6);
  });

  // A window of the benchmark's zones family (scripts/bench-zones.ts, DK2 2024-10-15, seed 110897;
  // numbers to 6 digits): three rooms, a tank and a car under the Elvia-like step. The ≤ 5 kW step
  // needs the rooms off in the car's hours; HiGHS's best bill is 28.30.
  it("finds the lower capacity step of a benchmark window with the rooms coasting through the car's hours", () => {
    const { nowMs, input, context } = coastWindow as unknown as { nowMs: number; input: HomePlanInput; context: CapacityContext };
    const p = planWithCapacity(input, nowMs, context);
    expect(p.shortfalls).toEqual([]);
    expect(p.capacity!.measureKw).toBeLessThanOrEqual(5 + 1e-6);
    expect(p.capacity!.bill).toBeLessThan(29.5);
  });

  it('leaves a home without zones as it was', () => {
    const plain = home({ zones: [] });
    const { zones: _, ...without } = plain;
    expect(planHome(plain, T0)).toEqual(planHome(without, T0));
  });
});
