import { describe, expect, it } from 'vitest';
import { chargerWantsCurrent, decide, type ChargerNow, type HeaterNow } from './control.js';

const tank = (over: Partial<HeaterNow> = {}): HeaterNow => ({
  kind: 'hotWaterTank',
  id: 'tank',
  available: true,
  mode: 'auto',
  temperatureC: 60,
  floorC: 45,
  elementKw: 2,
  powerW: 0,
  slotEnergyKwh: 0,
  planned: { energyKwh: 2, powerKw: 2 },
  ...over,
});
const car = (over: Partial<ChargerNow> = {}): ChargerNow => ({
  kind: 'evCharger',
  id: 'ev',
  available: true,
  mode: 'auto',
  plugged: true,
  powerW: 0,
  slotEnergyKwh: 0,
  planned: { energyKwh: 7, powerKw: 7.36 },
  phases: 1,
  voltageV: 230,
  minCurrentA: 6,
  maxCurrentA: 32,
  safeCurrentA: 6,
  ...over,
});
const roomy = { capKw: 50, locationPowerW: undefined, baseLoadKw: 0.5 };

function heater(d: ReturnType<typeof decide>) {
  const s = d.setpoints.find((x) => x.kind === 'heater');
  if (s?.kind !== 'heater') throw new Error('no heater setpoint');
  return s;
}
function charger(d: ReturnType<typeof decide>) {
  const s = d.setpoints.find((x) => x.kind === 'charger');
  if (s?.kind !== 'charger') throw new Error('no charger setpoint');
  return s;
}

describe('decide: heater', () => {
  it('runs while the slot energy is not yet metered and stops once it is', () => {
    expect(heater(decide([tank({ slotEnergyKwh: 1.5 })], roomy)).allow).toBe(true);
    expect(heater(decide([tank({ slotEnergyKwh: 2 })], roomy)).allow).toBe(false);
  });
  it('is blocked in an unplanned slot but allowed below the floor or with unknown temperature', () => {
    const unplanned = { energyKwh: 0, powerKw: 0 };
    expect(heater(decide([tank({ planned: unplanned })], roomy)).allow).toBe(false);
    expect(heater(decide([tank({ planned: unplanned, temperatureC: 44 })], roomy)).allow).toBe(true);
    expect(heater(decide([tank({ planned: unplanned, temperatureC: undefined })], roomy)).allow).toBe(true);
  });
  it('falls back to allowed when unavailable or without a plan', () => {
    expect(heater(decide([tank({ available: false, planned: { energyKwh: 0, powerKw: 0 } })], roomy)).allow).toBe(true);
    expect(heater(decide([tank({ planned: null })], roomy)).allow).toBe(true);
  });
  it('runs on to the maximum temperature in a paid-to-consume slot, and only there', () => {
    const paid = { energyKwh: 1, powerKw: 2, paidToConsume: true };
    expect(heater(decide([tank({ planned: paid, slotEnergyKwh: 1.5, temperatureC: 72, maxC: 75 })], roomy))).toMatchObject({ allow: true });
    expect(heater(decide([tank({ planned: paid, slotEnergyKwh: 1.5, temperatureC: 75, maxC: 75, powerW: 2000 })], roomy)).allow).toBe(false);
    // Within 1 K of the maximum: heating goes on to it, but a tank that stopped is not restarted.
    expect(heater(decide([tank({ planned: paid, slotEnergyKwh: 1.5, temperatureC: 74.5, maxC: 75, powerW: 2000 })], roomy)).allow).toBe(true);
    expect(heater(decide([tank({ planned: paid, slotEnergyKwh: 1.5, temperatureC: 74.5, maxC: 75, powerW: 0 })], roomy)).allow).toBe(false);
    expect(heater(decide([tank({ planned: { ...paid, paidToConsume: false }, slotEnergyKwh: 1.5, temperatureC: 72, maxC: 75 })], roomy)).allow).toBe(
      false,
    );
    // Paid or not, the cap holds.
    expect(heater(decide([tank({ planned: paid, slotEnergyKwh: 1.5, temperatureC: 72, maxC: 75, capKw: 0 })], roomy)).allow).toBe(false);
  });
  it('honours modes, keeping the floor in mode off', () => {
    expect(heater(decide([tank({ mode: 'off' })], roomy)).allow).toBe(false);
    expect(heater(decide([tank({ mode: 'off', temperatureC: 40 })], roomy)).allow).toBe(true);
    expect(heater(decide([tank({ mode: 'boost', planned: { energyKwh: 0, powerKw: 0 } })], roomy)).allow).toBe(true);
  });
  it("marks a block as the cap's whatever the plan, the floor or the mode wants, and only then", () => {
    const zero = { capKw: 0, locationPowerW: undefined, baseLoadKw: 0 };
    const unplanned = { energyKwh: 0, powerKw: 0 };
    expect(heater(decide([tank({ planned: unplanned })], zero))).toMatchObject({ allow: false, reason: 'not planned', heldByCap: true });
    expect(heater(decide([tank({ temperatureC: 30 })], zero))).toMatchObject({ allow: false, heldByCap: true });
    expect(heater(decide([tank({ mode: 'boost' })], zero))).toMatchObject({ allow: false, heldByCap: true });
    expect(heater(decide([tank({ capKw: 1.5 })], roomy))).toMatchObject({ allow: false, reason: 'device cap 1.5 kW', heldByCap: true });
    // Blocked by the plan with room under the cap: an ordinary block, renewed as a short lease.
    expect(heater(decide([tank({ planned: unplanned })], roomy)).heldByCap).toBeUndefined();
  });
  it('is blocked when the cap leaves no room, even below the floor', () => {
    const d = decide([tank({ temperatureC: 30 })], { capKw: 0, locationPowerW: undefined, baseLoadKw: 0 });
    expect(heater(d).allow).toBe(false);
    expect(d.expectedDeviceKw).toBe(0);
  });
});

describe('decide: charger', () => {
  it('converts planned power to current and clamps to the charger range', () => {
    expect(charger(decide([car()], roomy)).currentA).toBe(32);
    expect(charger(decide([car({ planned: { energyKwh: 1, powerKw: 1 } })], roomy)).currentA).toBe(6);
  });
  it('pauses when not planned, and uses the safe current when unavailable', () => {
    expect(charger(decide([car({ planned: { energyKwh: 0, powerKw: 0 } })], roomy)).currentA).toBe(0);
    expect(charger(decide([car({ available: false })], roomy)).currentA).toBe(6);
    // Unavailable in a slot the plan left empty: the safe state keeps it paused, never starts it.
    expect(charger(decide([car({ available: false, planned: { energyKwh: 0, powerKw: 0 } })], roomy)).currentA).toBe(0);
    expect(charger(decide([car({ available: false, mode: 'off' })], roomy)).currentA).toBe(0);
  });
  it('shares the measured headroom under the cap after the heater', () => {
    // 11 kW cap, 3 kW measured of which the tank draws 2 → base 1 kW; tank takes 2, car gets 8 kW → 34 A capped to 32
    const site = { capKw: 11, locationPowerW: 3000, baseLoadKw: 0 };
    const d = decide([tank({ powerW: 2000 }), car()], site);
    expect(heater(d).allow).toBe(true);
    expect(charger(d).currentA).toBe(32);
    const tight = decide([tank({ powerW: 2000 }), car()], { ...site, capKw: 5 });
    // 5 − 1 − 2 = 2 kW → 8 A at 230 V single phase
    expect(charger(tight).currentA).toBe(8);
    expect(tight.expectedDeviceKw + tight.baseLoadKw).toBeLessThanOrEqual(5 + 1e-9);
  });
  it('holds a device LPC cap of 0 kW on either device', () => {
    const d = decide([tank({ capKw: 0, temperatureC: 40 }), car({ capKw: 0 })], roomy);
    expect(heater(d).allow).toBe(false);
    expect(charger(d).currentA).toBe(0);
    expect(d.expectedDeviceKw).toBe(0);
  });
  it('stops charging when the headroom is below the minimum current', () => {
    const d = decide([car()], { capKw: 1, locationPowerW: 500, baseLoadKw: 0 });
    expect(charger(d).currentA).toBe(0);
  });
});

describe('chargerWantsCurrent', () => {
  const plan = { energyKwh: 2, powerKw: 4 };
  it('is what a plugged-in car is asked for: a boost, energy left in the slot, or the safe current without a plan', () => {
    const car = { plugged: true, mode: 'auto' as const, planned: plan, slotEnergyKwh: 0 };
    expect(chargerWantsCurrent(car)).toBe(true);
    expect(chargerWantsCurrent({ ...car, slotEnergyKwh: 2 })).toBe(false); // the slot's energy is metered
    expect(chargerWantsCurrent({ ...car, planned: { energyKwh: 0, powerKw: 0 } })).toBe(false);
    expect(chargerWantsCurrent({ ...car, planned: null })).toBe(true);
    expect(chargerWantsCurrent({ ...car, mode: 'boost', slotEnergyKwh: 2 })).toBe(true);
    // Mode off wants nothing, with or without a plan; an empty charger wants nothing, even on boost.
    expect(chargerWantsCurrent({ ...car, mode: 'off', planned: null })).toBe(false);
    expect(chargerWantsCurrent({ ...car, plugged: false, mode: 'boost' })).toBe(false);
  });
});

describe('decide: hourly energy guard', () => {
  // Half an hour left, 1 kW base load measured (location 1 kW, devices off).
  const half = 1_800_000;
  const site = (usedKwh: number, allowanceKwh = 5) => ({
    capKw: 50,
    locationPowerW: 1000,
    baseLoadKw: 0,
    hourBudget: { allowanceKwh, usedKwh, remainingMs: half },
  });

  it("leaves the plan alone while the hour's allowance has room for it", () => {
    // 5 − 1 = 4 kWh in 0.5 h = 8 kW; less 1 kW base: 7 kW for tank (2) + car (7.36 wanted → 5 kW = 21 A).
    const d = decide([tank(), car()], site(1));
    expect(heater(d).allow).toBe(true);
    expect(charger(d)).toMatchObject({ currentA: 21, reason: expect.stringContaining('hourly energy guard: 1.00 of 5.00 kWh') });
    expect(d.guarded).toEqual(['ev']);
    expect(decide([tank(), car()], site(0, 8)).guarded).toEqual([]);
  });

  it('sheds the car first, then the tank', () => {
    // 5 − 3 = 2 kWh in 0.5 h = 4 kW − 1 kW base = 3 kW: the tank's 2 kW fit, the car's 1 kW is below its 6 A minimum.
    const carShed = decide([tank(), car()], site(3));
    expect(heater(carShed).allow).toBe(true);
    expect(charger(carShed).currentA).toBe(0);
    // 5 − 4 = 1 kWh → 2 kW − 1 kW base = 1 kW: not enough for the 2 kW element either.
    const both = decide([tank(), car()], site(4));
    expect(heater(both)).toMatchObject({ allow: false, reason: expect.stringContaining('hourly energy guard') });
    expect(both.guarded).toEqual(['tank', 'ev']);
    // Spent (or overspent): nothing the plan runs goes on.
    expect(decide([tank(), car()], site(6)).expectedDeviceKw).toBe(0);
  });

  it('reckons with the forecast base load for the rest of the hour where it is above the base load now', () => {
    // 5 − 3 = 2 kWh in 0.5 h = 4 kW; 1 kW measured leaves 3 kW for the 2 kW element, a 2.5 kW forecast only 1.5 kW.
    expect(heater(decide([tank()], { ...site(3), guardBaseLoadKw: 2.5 }))).toMatchObject({
      allow: false,
      reason: expect.stringContaining('hourly energy guard'),
    });
    // A forecast below the base load now changes nothing: the measured 1 kW stands.
    expect(heater(decide([tank()], { ...site(3), guardBaseLoadKw: 0.2 })).allow).toBe(true);
  });

  it('lets a device it switched off run again only with a quarter more room than it needs (no chatter at the limit)', () => {
    // 5 − 3.4 = 1.6 kWh in 0.5 h = 3.2 kW − 1 kW base = 2.2 kW: room for the 2 kW element, not for 2.5.
    expect(heater(decide([tank()], site(3.4))).allow).toBe(true);
    expect(heater(decide([tank()], { ...site(3.4), guardedBefore: ['tank'] }))).toMatchObject({
      allow: false,
      reason: expect.stringContaining('hourly energy guard'),
    });
    // 5 − 3.2 = 1.8 kWh → 3.6 − 1 = 2.6 kW ≥ 2.5: it runs again.
    expect(heater(decide([tank()], { ...site(3.2), guardedBefore: ['tank'] })).allow).toBe(true);
    // The car at 6 A (its minimum, 1.38 kW) in 1.5 kW of room: kept on, but not restarted once shed.
    expect(charger(decide([car()], site(3.75))).currentA).toBe(6);
    expect(charger(decide([car()], { ...site(3.75), guardedBefore: ['ev'] })).currentA).toBe(0);
    // A car the guard only slowed (still charging) keeps following the room: no margin.
    expect(charger(decide([car({ powerW: 1380 })], { ...site(3.75), locationPowerW: 2380, guardedBefore: ['ev'] })).currentA).toBe(6);
    // Another device throttled before changes nothing for this one.
    expect(heater(decide([tank()], { ...site(3.4), guardedBefore: ['ev'] })).allow).toBe(true);
  });

  it("never throttles the comfort floor, an unknown temperature, a safe state or the user's boost", () => {
    const spent = site(5);
    expect(heater(decide([tank({ temperatureC: 40 })], spent)).allow).toBe(true);
    expect(heater(decide([tank({ temperatureC: undefined })], spent)).allow).toBe(true);
    expect(heater(decide([tank({ available: false })], spent)).allow).toBe(true);
    expect(heater(decide([tank({ mode: 'boost' })], spent)).allow).toBe(true);
    expect(charger(decide([car({ mode: 'boost' })], spent)).currentA).toBe(32);
    expect(charger(decide([car({ available: false })], spent)).currentA).toBe(6);
    expect(decide([tank({ temperatureC: 40 }), car({ mode: 'boost' })], spent).guarded).toEqual([]);
  });

  it("still lets the location cap win over the guard's room", () => {
    const d = decide([car()], { ...site(0, 50), capKw: 3 });
    // Cap 3 kW − 1 kW base = 2 kW → 8 A; the reason is the cap, not the guard.
    expect(charger(d)).toMatchObject({ currentA: 8, reason: 'limited by cap 3 kW' });
    expect(d.guarded).toEqual([]);
  });
});

describe('decide: a charger behind its slot', () => {
  it("catches up on what is left of the slot's energy in the time left, within the headroom", () => {
    const planned = { energyKwh: 3.68, powerKw: 3.68 };
    // On schedule: the planned power (16 A at 230 V).
    expect(charger(decide([car({ planned: { ...planned, leftH: 0.5 }, slotEnergyKwh: 1.84 })], roomy)).currentA).toBe(16);
    // Half the slot gone and nothing delivered: 3.68 kWh in half an hour is 7.36 kW, 32 A.
    expect(charger(decide([car({ planned: { ...planned, leftH: 0.5 }, slotEnergyKwh: 0 })], roomy))).toMatchObject({
      currentA: 32,
      reason: 'planned 3.7 kW, 7.4 kW to catch up',
    });
    // The headroom still bounds it.
    expect(charger(decide([car({ planned: { ...planned, leftH: 0.5 }, slotEnergyKwh: 0 })], { ...roomy, capKw: 5.5 })).currentA).toBe(21);
    // Without the time left: the planned power.
    expect(charger(decide([car({ planned, slotEnergyKwh: 0 })], roomy)).currentA).toBe(16);
  });
});

describe('decide: main fuse', () => {
  it('lowers the charger to the fuse headroom whatever the plan or boost asks, and pauses below the minimum', () => {
    const fuse = { maxA: 9.6, reason: 'main fuse 25 A: L1 at 30.0 A' };
    expect(charger(decide([car({ fuse })], roomy))).toMatchObject({ currentA: 9, reason: fuse.reason });
    expect(charger(decide([car({ fuse, mode: 'boost' })], roomy))).toMatchObject({ currentA: 9 });
    expect(charger(decide([car({ fuse: { ...fuse, maxA: 5 } })], roomy))).toMatchObject({ currentA: 0, reason: fuse.reason });
    // Room to spare: the plan's current, its own reason.
    expect(charger(decide([car({ fuse: { ...fuse, maxA: 40 } })], roomy)).reason).toBe('planned 7.4 kW');
  });
  it('keeps room for a heater that may start or has started since the phase reading: the meter does not show its current yet', () => {
    const fuse = { maxA: 16, reason: 'main fuse 25 A: L1 at 9.0 A' };
    const full = { planned: { energyKwh: 11, powerKw: 11 }, maxCurrentA: 16, fuse };
    // The tank starts now (2 kW: 8.7 A on its lines): the charger gets 16 − 8.7 A.
    const starting = decide([tank({ powerW: 0 }), car(full)], roomy);
    expect(heater(starting).allow).toBe(true);
    expect(charger(starting)).toMatchObject({ currentA: 7, reason: 'main fuse: 8.7 A kept for a heater switching on' });
    // Already heating: its current is in the reading, nothing more is kept.
    expect(charger(decide([tank({ powerW: 2000 }), car(full)], roomy))).toMatchObject({ currentA: 16 });
    expect(charger(decide([tank({ powerW: 2000, sincePhaseReading: false }), car(full)], roomy))).toMatchObject({ currentA: 16 });
    // Heating, but only since the phase reading was taken (switched on, or its thermostat closed): the reading does not hold it yet.
    expect(charger(decide([tank({ powerW: 2000, sincePhaseReading: true }), car(full)], roomy))).toMatchObject({ currentA: 7 });
    // Not switched on: nothing is kept.
    expect(charger(decide([tank({ powerW: 0, slotEnergyKwh: 2 }), car(full)], roomy))).toMatchObject({ currentA: 16 });
    // Without a fuse, nothing changes.
    expect(charger(decide([tank({ powerW: 0 }), car({ planned: full.planned, maxCurrentA: 16 })], roomy)).currentA).toBe(16);
  });
  it("keeps a heater's room once on lines chargers share, not once for each charger", () => {
    // 25 A fuse, 1 A margin, house 2 A on every line, two 3-phase chargers under it.
    const input = (ownA: number, otherA: number) => ({
      fuseA: 25,
      marginA: 1,
      measuredAtMs: 0,
      nowMs: 0,
      staleAfterMs: 30_000,
      lines: [0, 1, 2],
      chargerNowA: ownA,
      currentsA: [0, 1, 2].map(() => 2 + ownA + otherA),
      sharedBy: [2, 2, 2],
    });
    const at = (ownA: number, otherA: number, maxA = 16) =>
      charger(
        decide(
          [
            tank({ powerW: 0 }),
            car({
              planned: { energyKwh: 11, powerKw: 11 },
              maxCurrentA: 16,
              powerW: ownA * 690,
              fuse: { maxA, reason: 'main fuse 25 A', input: input(ownA, otherA) },
            }),
          ],
          roomy,
        ),
      );
    // Both at 6 A (14 A a line, 10 A free): the tank's 8.7 A leaves 1.3 A, 0.65 A each: 6 A, not 0.
    expect(at(6, 6, 11)).toMatchObject({ currentA: 6, reason: 'main fuse: 8.7 A kept for a heater switching on' });
    // One at 16 A, the other plugged and drawing nothing (18 A a line): the tank's room puts the
    // line 2.7 A over, and the one drawing gives all of it back (half would leave the line over): 13 A.
    expect(at(16, 0)).toMatchObject({ currentA: 13 });
  });
  it('switches off a tank idle near its maximum while a charger under the main fuse charges, and on again once it has cooled', () => {
    const fuse = { maxA: 16, reason: 'main fuse 25 A: L1 at 9.0 A' };
    const charging = car({ planned: { energyKwh: 11, powerKw: 11 }, maxCurrentA: 16, fuse });
    const full = tank({ maxC: 75, temperatureC: 74, powerW: 0 });
    // Left on, its thermostat could start it between ticks: off, and the charger needs no room for it.
    const held = decide([full, charging], roomy);
    expect(heater(held)).toMatchObject({ allow: false, reason: expect.stringMatching(/near its 75 °C maximum/) });
    expect(charger(held).currentA).toBe(16);
    // Heating, it runs on to its maximum (its current is in the reading).
    expect(heater(decide([{ ...full, powerW: 2000 }, charging], roomy)).allow).toBe(true);
    // Cooled by 5 K: on again, and this tick keeps its room.
    const cooled = decide([{ ...full, temperatureC: 69.9 }, charging], roomy);
    expect(heater(cooled).allow).toBe(true);
    expect(charger(cooled).currentA).toBe(7);
    // No charger drawing under a fuse (unplugged, or none): the plan's thermostat as before.
    expect(heater(decide([full, { ...charging, plugged: false }], roomy)).allow).toBe(true);
    expect(heater(decide([full, car({ planned: { energyKwh: 11, powerKw: 11 } })], roomy)).allow).toBe(true);
    // Boosted by the user, it is never held.
    expect(heater(decide([{ ...full, mode: 'boost' }, charging], roomy)).allow).toBe(true);
  });
  it('a 3-phase charger on an IT supply draws √3·U·I: the planned power needs more current than on TN', () => {
    const it3 = { phases: 3 as const, planned: { energyKwh: 7, powerKw: 7 } };
    expect(charger(decide([car(it3)], roomy)).currentA).toBe(10); // 7000 / 690
    expect(charger(decide([car({ ...it3, wattsPerAmp: Math.sqrt(3) * 230 })], roomy)).currentA).toBe(17); // 7000 / 398
  });
});
