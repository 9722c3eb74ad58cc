import { describe, expect, it } from 'vitest';
import { decide, type SiteNow } from './control.js';
import { afterState, emptyBudget, heatPumpAsTank, lockAllowed, wantedSgState, type HeatPumpNow, type LockLimits } from './heat-pump.js';
import { planHome } from './home-plan.js';
import type { HomePlanInput, TankParams } from './types.js';
import { hourlySlots, osloMidnight as T0 } from '../../test/fixtures/price-slots.js';

const MIN = 60_000;
const cheapNights = Array.from({ length: 24 }, (_, h) => (h >= 1 && h < 5 ? 0.05 : 0.4));
const tank: TankParams & { id: string } = {
  id: 'hw',
  volumeL: 200,
  powerKw: 1,
  coldWaterC: 8,
  ambientC: 18,
  heatLossWPerK: 1.6,
  minC: 45,
  maxC: 65,
  currentTempC: 47,
  control: 'continuous',
  drawProfileKwh: Array.from({ length: 24 }, (_, h) => (h === 7 || h === 20 ? 2 : 0.1)),
};
const home = (t: TankParams & { id: string }): HomePlanInput => ({
  slots: hourlySlots(cheapNights),
  timezone: 'Europe/Oslo',
  currency: 'EUR',
  tanks: [t],
  evs: [],
  location: { limitKw: 17, baseLoadKw: 1 },
});
const energy = (p: ReturnType<typeof planHome>): number => p.slots.reduce((kwh, s) => kwh + (s.tanks?.hw?.energyKwh ?? 0), 0);

describe('planning a heat pump as a tank in electric energy', () => {
  it("needs the element tank's heat over the COP, in the same cheap hours, with the same temperatures", () => {
    const element = planHome(home(tank), T0);
    const pump = planHome(home(heatPumpAsTank(tank, 2.8)), T0);
    // The same heat: the electric energy is the element's over the COP (the DP's grid is discrete).
    expect(energy(pump)).toBeLessThan(energy(element) / 2.5);
    expect(energy(pump)).toBeGreaterThan(energy(element) / 3.2);
    // Boost in the cheap night hours (01–05 local).
    const cheapHours = pump.slots.filter((s) => (s.tanks?.hw?.energyKwh ?? 0) > 0.01).map((s) => new Date(s.startMs).getUTCHours() + 1);
    expect(cheapHours.length).toBeGreaterThan(0);
    for (const h of cheapHours.filter((h) => h < 6)) expect(h).toBeGreaterThanOrEqual(1);
    const nightKwh = pump.slots.filter((_, i) => i >= 1 && i < 5).reduce((kwh, s) => kwh + (s.tanks?.hw?.energyKwh ?? 0), 0);
    expect(nightKwh / energy(pump)).toBeGreaterThan(0.6);
    // Never below the floor, by the plan's own temperatures.
    for (const s of pump.slots) expect(s.tanks!.hw!.endTempC).toBeGreaterThanOrEqual(45 - 1e-6);
  });
});

const limits: LockLimits = { maxMinutes: 120, perDay: 3, maxMinutesPerDay: 360, minGapMinutes: 60 };
const day = '2025-01-15';

describe('the lock budget', () => {
  it('ends a lock at its maximum length, keeps a gap, and refuses past the locks of a day', () => {
    let b = afterState(emptyBudget(day), 'block', T0, day);
    expect(lockAllowed(b, limits, T0 + 119 * MIN, day).ok).toBe(true);
    expect(lockAllowed(b, limits, T0 + 120 * MIN, day)).toEqual({ ok: false, why: 'a lock lasts at most 120 minutes' });
    b = afterState(b, 'normal', T0 + 120 * MIN, day);
    expect(lockAllowed(b, limits, T0 + 150 * MIN, day).ok).toBe(false);
    let t = T0 + 180 * MIN;
    for (let i = 2; i <= 3; i++) {
      expect(lockAllowed(b, limits, t, day).ok).toBe(true);
      b = afterState(afterState(b, 'block', t, day), 'normal', t + 10 * MIN, day);
      t += 120 * MIN;
    }
    expect(lockAllowed(b, limits, t, day)).toEqual({ ok: false, why: '3 locks a day used' });
    // A new local day starts a new budget.
    expect(lockAllowed(b, limits, t, '2025-01-16').ok).toBe(true);
  });

  it('refuses past the lock minutes of a day', () => {
    const b = afterState(afterState(emptyBudget(day), 'block', T0, day), 'normal', T0 + 100 * MIN, day);
    expect(lockAllowed(b, { ...limits, maxMinutesPerDay: 100 }, T0 + 300 * MIN, day).ok).toBe(false);
  });
});

const pumpNow = (over: Partial<HeatPumpNow> = {}): HeatPumpNow => ({
  kind: 'heatPump',
  id: 'hp',
  available: true,
  mode: 'auto',
  temperatureC: 55,
  floorC: 45,
  normalC: 50,
  maxC: 65,
  electricKw: 0.5,
  powerW: 0,
  slotEnergyKwh: 0,
  planned: { energyKwh: 0, powerKw: 0 },
  expensive: false,
  lock: { ok: true },
  ...over,
});
const roomy: SiteNow = { capKw: 17, locationPowerW: undefined, baseLoadKw: 1 };
const stateOf = (d: HeatPumpNow, site = roomy): string => {
  const s = decide([d], site).setpoints[0]!;
  if (s.kind !== 'heatPump') throw new Error('no heat pump setpoint');
  return s.state;
};

describe('the SG Ready state each tick', () => {
  it('boosts a planned slot, starts the pump where consuming is paid for, and is normal otherwise', () => {
    expect(stateOf(pumpNow({ planned: { energyKwh: 0.5, powerKw: 0.5 } }))).toBe('boost');
    expect(stateOf(pumpNow({ planned: { energyKwh: 0.5, powerKw: 0.5 }, slotEnergyKwh: 0.5 }))).toBe('normal');
    expect(stateOf(pumpNow({ planned: { energyKwh: 0, powerKw: 0, paidToConsume: true } }))).toBe('forced');
    expect(stateOf(pumpNow())).toBe('normal');
  });

  it('locks an expensive unplanned slot only within the budget and never below the floor', () => {
    expect(stateOf(pumpNow({ expensive: true }))).toBe('block');
    const refused = wantedSgState(pumpNow({ expensive: true, lock: { ok: false, why: '3 locks a day used' } }));
    expect(refused).toMatchObject({ state: 'normal', refused: '3 locks a day used' });
    expect(stateOf(pumpNow({ expensive: true, temperatureC: 44 }))).toBe('normal');
    expect(stateOf(pumpNow({ expensive: true, temperatureC: undefined }))).toBe('normal');
    // A cap that leaves no room locks the pump, but not below the floor.
    expect(stateOf(pumpNow(), { ...roomy, capKw: 1 })).toBe('block');
    expect(stateOf(pumpNow({ temperatureC: 40 }), { ...roomy, capKw: 1 })).toBe('normal');
  });

  it('falls back to normal operation when the pump is unavailable or there is no plan, and boosts below a floor above its setpoint', () => {
    expect(stateOf(pumpNow({ available: false, expensive: true }))).toBe('normal');
    expect(stateOf(pumpNow({ planned: null, expensive: true }))).toBe('normal');
    expect(stateOf(pumpNow({ temperatureC: 52, floorC: 55 }))).toBe('boost');
    expect(stateOf(pumpNow({ mode: 'boost' }))).toBe('boost');
  });

  it('keeps room under the main fuse for a pump that may start on its own and is not in the phase reading yet', () => {
    const car = {
      kind: 'evCharger' as const,
      id: 'ev',
      available: true,
      mode: 'boost' as const,
      plugged: true,
      powerW: 0,
      slotEnergyKwh: 0,
      planned: null,
      phases: 1 as const,
      voltageV: 230,
      minCurrentA: 6,
      maxCurrentA: 16,
      safeCurrentA: 6,
      fuse: { maxA: 16, reason: 'main fuse' },
    };
    const amps = (pump: HeatPumpNow): number => {
      const s = decide([pump, car], roomy).setpoints.find((x) => x.kind === 'charger');
      return s?.kind === 'charger' ? s.currentA : NaN;
    };
    // Boosted or in normal operation, an idle pump may start its compressor at any moment: 0.5 kW, 2.2 A kept.
    expect(amps(pumpNow({ mode: 'boost', powerW: 0 }))).toBe(13);
    expect(amps(pumpNow({ powerW: 0 }))).toBe(13);
    // Drawing, and in the reading: nothing kept; drawing only since the reading: kept.
    expect(amps(pumpNow({ mode: 'boost', powerW: 500 }))).toBe(16);
    expect(amps(pumpNow({ powerW: 500, sincePhaseReading: false }))).toBe(16);
    expect(amps(pumpNow({ powerW: 500, sincePhaseReading: true }))).toBe(13);
    // Locked, it cannot start.
    expect(amps(pumpNow({ expensive: true, powerW: 0 }))).toBe(16);
  });

  it("gives way to the hourly energy guard for what the plan asks, with the heater's margin to start again", () => {
    const planned = pumpNow({ planned: { energyKwh: 0.5, powerKw: 0.5 } });
    const budget = { allowanceKwh: 2, usedKwh: 1.45, remainingMs: 30 * MIN };
    const site = { ...roomy, baseLoadKw: 0, hourBudget: budget };
    // 0.55 kWh left in half an hour: 1.1 kW of room, enough for the pump...
    expect(stateOf(planned, site)).toBe('boost');
    // ...not with 0.2 kWh left, and with 0.35 kWh but not 0.28 once the guard held it back (margin 25 %).
    expect(stateOf(planned, { ...site, hourBudget: { ...budget, usedKwh: 1.8 } })).toBe('normal');
    expect(stateOf(planned, { ...site, hourBudget: { ...budget, usedKwh: 1.65 }, guardedBefore: ['hp'] })).toBe('boost');
    expect(stateOf(planned, { ...site, hourBudget: { ...budget, usedKwh: 1.72 }, guardedBefore: ['hp'] })).toBe('normal');
    // The floor is never throttled.
    expect(stateOf(pumpNow({ temperatureC: 52, floorC: 55 }), { ...site, hourBudget: { ...budget, usedKwh: 2 } })).toBe('boost');
  });
});
