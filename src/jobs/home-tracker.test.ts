import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp-dir.js';
import { ManualClock } from '../clock.js';
import { defaultConfig } from '../config/load.js';
import { openStore } from '../store/open-store.js';
import { Wishes } from './home-state.js';
import { createHomeTracker } from './home-tracker.js';
import type { ControlSnapshot } from './control-loop.js';
import type { DeviceReading } from '../devices/supervisor.js';

const T0 = Date.UTC(2026, 0, 14, 9);
const H = 3_600_000;

/** A stored plan of one tank `boiler`, estimated from 60 °C, its first slot ending at 61 °C. */
function storedPlan(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    createdMs: T0,
    slotMinutes: 60,
    startMs: T0,
    endMs: T0 + 2 * H,
    tanks: { boiler: { startTempC: 60, tempSource: 'estimated' } },
    slots: [0, 1].map((i) => ({
      startMs: T0 + i * H,
      endMs: T0 + (i + 1) * H,
      tanks: { boiler: { energyKwh: 1, powerKw: 1, on: true, endTempC: 61 + i } },
      baselineTanks: { boiler: { energyKwh: 0.5, endTempC: 60.5 } },
    })),
    ...over,
  };
}

function trackerWith(plan: Record<string, unknown>) {
  const store = openStore({ path: ':memory:' });
  store.savePlan({ createdAtMs: T0, horizonStartMs: T0, horizonEndMs: T0 + 2 * H, json: plan });
  const config = defaultConfig();
  return createHomeTracker({ config, store, clock: new ManualClock(T0), wishes: new Wishes(store, []) });
}

describe('the previous plan read back at start', () => {
  it("gives each tank's estimate from its own slots", () => {
    const tracker = trackerWith(storedPlan());
    const plan = tracker.loadPlan();
    expect(plan?.slots[0]?.tanks?.boiler?.endTempC).toBe(61);
    expect(tracker.estimatedTankC('boiler', T0 + H + 60_000, plan)).toBe(61);
    expect(tracker.estimatedTankC('boiler', T0 + 60_000, plan)).toBe(60);
    expect(tracker.estimatedTankC('other', T0 + H + 60_000, plan)).toBeUndefined();
  });

  it('refuses a plan whose carried device figures are not numbers, rather than plan on from them', () => {
    const bad = storedPlan();
    (bad.slots as Array<Record<string, unknown>>)[0]!.baselineTanks = { boiler: { energyKwh: 0.5, endTempC: null } };
    expect(trackerWith(bad).loadPlan()).toBeNull();
    const worse = storedPlan({ tanks: { boiler: { startTempC: 'hot', tempSource: 'estimated' } } });
    expect(trackerWith(worse).loadPlan()).toBeNull();
  });

  it('reads a plan of an older version (one tank under `tank`) without estimating from it', () => {
    const old = {
      createdMs: T0,
      slotMinutes: 60,
      startMs: T0,
      endMs: T0 + H,
      tankStartTempC: 60,
      tankTempSource: 'estimated',
      slots: [
        { startMs: T0, endMs: T0 + H, tank: { energyKwh: 1, powerKw: 1, on: true, endTempC: 61 }, baselineTank: { energyKwh: 1, endTempC: 60 } },
      ],
    };
    const tracker = trackerWith(old);
    const plan = tracker.loadPlan();
    expect(plan?.startMs).toBe(T0);
    // Without a sensor the control then allows heating until the first new plan (made at start).
    expect(tracker.estimatedTankC('boiler', T0 + 60_000, plan)).toBeUndefined();
  });

  it('reads a plan stored by a version that spelt the units `KWh` and `KW` in its keys', () => {
    const storedText =
      `{"createdMs":${T0},"slotMinutes":60,"startMs":${T0},"endMs":${T0 + 2 * H},` +
      `"tanks":{"boiler":{"startTempC":60,"tempSource":"estimated"}},"capacity":{"heldAtKWhPerH":7},"slots":[` +
      `{"startMs":${T0},"endMs":${T0 + H},"headroomKW":9,"baselineKWh":1.5,` +
      `"tanks":{"boiler":{"energyKWh":1,"powerKW":1,"on":true,"endTempC":61}},"baselineTanks":{"boiler":{"energyKWh":0.5,"endTempC":60.5}}},` +
      `{"startMs":${T0 + H},"endMs":${T0 + 2 * H},"headroomKW":9,"baselineKWh":1.5,` +
      `"tanks":{"boiler":{"energyKWh":1,"powerKW":1,"on":true,"endTempC":62}},"baselineTanks":{"boiler":{"energyKWh":0.5,"endTempC":60.5}}}]}`;
    const tracker = trackerWith(JSON.parse(storedText) as Record<string, unknown>);
    const plan = tracker.loadPlan();
    expect(plan?.slots[0]).toMatchObject({ headroomKw: 9, baselineKwh: 1.5, tanks: { boiler: { energyKwh: 1, powerKw: 1, endTempC: 61 } } });
    expect(plan?.capacity?.heldAtKwhPerH).toBe(7);
    expect(tracker.estimatedTankC('boiler', T0 + H + 60_000, plan)).toBe(61);
  });
});

describe('what a control tick teaches the tracker about a car', () => {
  const config = defaultConfig({
    mqtt: { url: 'mqtt://127.0.0.1' },
    devices: [{ id: 'car', kind: 'evCharger', charger: { type: 'goe', topicPrefix: 'go-eCharger/x' }, model: { capacityKwh: 60 } }],
  });
  const tick = (atMs: number, reading: Omit<DeviceReading, 'errors'>): ControlSnapshot => ({
    atMs,
    slotStartMs: atMs,
    readings: new Map([['car', { errors: [], ...reading }]]),
    slotEnergyKwh: new Map(),
    locationPowerW: undefined,
    capKw: 17,
    decision: { setpoints: [], expectedDeviceKw: 0, baseLoadKw: 0, guarded: [] },
  });

  it("ends what was asked for a car's session when it leaves: departure, targets and a boost; a charger switched off stays off", () => {
    const store = openStore({ path: ':memory:' });
    const wishes = new Wishes(store, ['car']);
    const tracker = createHomeTracker({ config, store, clock: new ManualClock(T0), wishes });
    tracker.observe(tick(T0, { atMs: T0, energyKwh: 100, ev: { plugged: true, charging: false } }), null);
    wishes.apply({ deviceId: 'car', departure: new Date(T0 + 8 * H).toISOString(), targetKwh: 30, targetSocPct: 90, mode: 'boost' }, T0);
    tracker.observe(tick(T0 + 60_000, { atMs: T0 + 60_000, energyKwh: 101, ev: { plugged: true, charging: true } }), null);
    expect(wishes.get('car')).toMatchObject({ departureMs: T0 + 8 * H, targetKwh: 30, targetSocPct: 90, mode: 'boost' });
    tracker.observe(tick(T0 + 120_000, { atMs: T0 + 120_000, energyKwh: 102, ev: { plugged: false, charging: false } }), null);
    expect(wishes.get('car')).toEqual({ mode: 'auto', boostUntilMs: null, floorC: null, departureMs: null, targetKwh: null, targetSocPct: null });
    expect(new Wishes(store, ['car']).get('car').targetSocPct).toBeNull(); // after a restart too

    wishes.apply({ deviceId: 'car', mode: 'off', targetSocPct: 70 }, T0 + 180_000);
    tracker.observe(tick(T0 + 240_000, { atMs: T0 + 240_000, energyKwh: 102, ev: { plugged: true, charging: false } }), null);
    tracker.observe(tick(T0 + 300_000, { atMs: T0 + 300_000, energyKwh: 102, ev: { plugged: false, charging: false } }), null);
    expect(wishes.get('car')).toMatchObject({ mode: 'off', targetSocPct: null });
  });

  it('keeps a plugged car plugged through a tick its charger tells nothing, and re-plans only on a real change', () => {
    const store = openStore({ path: ':memory:' });
    const tracker = createHomeTracker({ config, store, clock: new ManualClock(T0), wishes: new Wishes(store, ['car']) });
    const snap = () => tracker.snapshot(T0, { forecast: null, advice: null, actual: null }, []).evs[0]!;
    expect(tracker.observe(tick(T0, { atMs: T0, energyKwh: 100, ev: { plugged: true, charging: false, socPct: 40 } }), null)).toBe(true);
    // The charger is down or stale: no car state this tick.
    expect(tracker.observe(tick(T0 + 60_000, { atMs: T0 + 60_000 }), null)).toBe(false);
    expect(snap()).toMatchObject({ plugged: true, socPct: 40 });
    expect(tracker.observe(tick(T0 + 120_000, { atMs: T0 + 120_000, energyKwh: 103, ev: { plugged: true, charging: true, socPct: 45 } }), null)).toBe(
      false,
    );
    expect(snap()).toMatchObject({ plugged: true, socPct: 45, sessionKwh: 3 });
    expect(tracker.observe(tick(T0 + 180_000, { atMs: T0 + 180_000, ev: { plugged: false, charging: false } }), null)).toBe(true);
    expect(snap().plugged).toBe(false);
  });

  it('counts a session from where the charger says it began, so a restart mid-session plans only what remains', () => {
    const store = openStore({ path: ':memory:' });
    const tracker = createHomeTracker({ config, store, clock: new ManualClock(T0), wishes: new Wishes(store, ['car']) });
    const snap = () => tracker.snapshot(T0, { forecast: null, advice: null, actual: null }, []).evs[0]!;
    // The first tick of this run: the car has been charging for a while, the charger counted 5.2 kWh.
    tracker.observe(tick(T0, { atMs: T0, energyKwh: 114.7, ev: { plugged: true, charging: true, sessionKwh: 5.2 } }), null);
    expect(snap().sessionKwh).toBeCloseTo(5.2, 6);
    tracker.observe(tick(T0 + 60_000, { atMs: T0 + 60_000, energyKwh: 115.7, ev: { plugged: true, charging: true, sessionKwh: 6.2 } }), null);
    expect(snap().sessionKwh).toBeCloseTo(6.2, 6);
    // A charger that does not count its session: from this run's first reading, as before.
    tracker.observe(tick(T0 + 120_000, { atMs: T0 + 120_000, energyKwh: 116.7, ev: { plugged: true, charging: true } }), null);
    expect(snap().sessionKwh).toBeCloseTo(7.2, 6);
  });

  it('resumes a session across a restart on the store on disk: plug-in time, counter and the card that named the car', () => {
    const path = join(tempDir('wattshift-tracker-'), 'wattshift.db');
    const withCar = defaultConfig({
      mqtt: { url: 'mqtt://127.0.0.1' },
      devices: [{ id: 'car', kind: 'evCharger', charger: { type: 'goe', topicPrefix: 'go-eCharger/x' }, model: { capacityKwh: 60 } }],
      vehicles: [
        { id: 'van', capacityKwh: 75, identify: { goeCards: [3] } },
        { id: 'mini', capacityKwh: 30, identify: { goeCards: [4] } },
      ],
    });
    const run = (store: ReturnType<typeof openStore>) => {
      const tracker = createHomeTracker({ config: withCar, store, clock: new ManualClock(T0), wishes: new Wishes(store, ['car']) });
      return { tracker, snap: (atMs: number) => tracker.snapshot(atMs, { forecast: null, advice: null, actual: null }, []).evs[0]! };
    };
    const first = openStore({ path });
    const a = run(first);
    a.tracker.observe(tick(T0, { atMs: T0, energyKwh: 100, ev: { plugged: true, charging: true, sessionKwh: 0, goeCard: 3 } }), null);
    // go-e's trx turns null while the car stays plugged: the card seen holds for the session.
    a.tracker.observe(tick(T0 + H, { atMs: T0 + H, energyKwh: 104, ev: { plugged: true, charging: true, sessionKwh: 4 } }), null);
    expect(a.snap(T0 + H)).toMatchObject({ sessionStartMs: T0, sessionKwh: 4, vehicle: { id: 'van' } });
    first.close();

    const second = openStore({ path });
    const b = run(second);
    b.tracker.observe(tick(T0 + 2 * H, { atMs: T0 + 2 * H, energyKwh: 107, ev: { plugged: true, charging: true, sessionKwh: 7 } }), null);
    expect(b.snap(T0 + 2 * H)).toMatchObject({ plugged: true, sessionStartMs: T0, sessionKwh: 7, vehicle: { id: 'van' }, identifiedBy: 'card' });
    second.close();

    // While the daemon was down the van left and another car came: a new session, from this run's first reading.
    const third = openStore({ path });
    const c = run(third);
    c.tracker.observe(tick(T0 + 3 * H, { atMs: T0 + 3 * H, energyKwh: 108, ev: { plugged: true, charging: true, sessionKwh: 0.5 } }), null);
    expect(c.snap(T0 + 3 * H)).toMatchObject({ plugged: true, sessionStartMs: T0 + 3 * H, sessionKwh: 0.5, vehicle: null });
    third.close();
  });

  it('ends a session that ended while the daemon was down, and what was asked for it', () => {
    const path = join(tempDir('wattshift-tracker-'), 'wattshift.db');
    const first = openStore({ path });
    const wishes = new Wishes(first, ['car']);
    const a = createHomeTracker({ config, store: first, clock: new ManualClock(T0), wishes });
    a.observe(tick(T0, { atMs: T0, energyKwh: 100, ev: { plugged: true, charging: true } }), null);
    wishes.apply({ deviceId: 'car', departure: new Date(T0 + 8 * H).toISOString(), targetKwh: 30 }, T0);
    first.close();

    const second = openStore({ path });
    const again = new Wishes(second, ['car']);
    const b = createHomeTracker({ config, store: second, clock: new ManualClock(T0), wishes: again });
    b.observe(tick(T0 + H, { atMs: T0 + H, energyKwh: 100, ev: { plugged: false, charging: false } }), null);
    expect(again.get('car')).toMatchObject({ departureMs: null, targetKwh: null });
    // A car plugged in next is a session of its own, not the stored one.
    b.observe(tick(T0 + 2 * H, { atMs: T0 + 2 * H, energyKwh: 100, ev: { plugged: true, charging: false } }), null);
    expect(b.snapshot(T0 + 2 * H, { forecast: null, advice: null, actual: null }, []).evs[0]).toMatchObject({ sessionStartMs: T0 + 2 * H });
    second.close();
  });
});
