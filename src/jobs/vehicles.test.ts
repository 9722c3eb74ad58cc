import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { defaultConfig } from '../config/load.js';
import { memoryLogger } from '../../test/fixtures/modbus/servers.js';
import { openStore } from '../store/open-store.js';
import type { DeviceReading } from '../devices/supervisor.js';
import type { ControlSnapshot } from './control-loop.js';
import { Wishes } from './home-state.js';
import { createHomeTracker } from './home-tracker.js';
import { buildPlanInput } from './plan-inputs.js';
import { createVehicleMetering, vehicleSubject } from './vehicle-metering.js';

// Wednesday 14 January 2026, 17:00 in Oslo.
const T0 = Date.UTC(2026, 0, 14, 16);
const H = 3_600_000;
const goe = (id: string) => ({
  id,
  kind: 'evCharger' as const,
  charger: { type: 'goe' as const, topicPrefix: `go-eCharger/${id}` },
  model: { capacityKwh: 50, targetEnergyKwh: 10, departure: '07:00' },
});
const config = defaultConfig({
  site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 22 },
  mqtt: { url: 'mqtt://127.0.0.1' },
  vehicles: [
    {
      id: 'car-a',
      name: 'Car A',
      capacityKwh: 80,
      targetSocPct: 70,
      soc: { topic: 'cars/a' },
      departures: [{ cron: '30 6 * * 1-5', targetSocPct: 90 }],
      identify: { goeCards: [0] },
    },
    { id: 'car-b', capacityKwh: 40, targetEnergyKwh: 12, departure: '09:15', efficiency: 0.8, identify: { goeCards: [1] } },
  ],
  devices: [goe('east'), goe('west')],
});
const prices = { forecast: null, advice: null, actual: null };

function tick(atMs: number, readings: Record<string, Omit<DeviceReading, 'errors' | 'atMs'>>): ControlSnapshot {
  return {
    atMs,
    slotStartMs: atMs,
    slotEnergyKwh: new Map(),
    locationPowerW: undefined,
    capKw: 22,
    readings: new Map(Object.entries(readings).map(([id, r]) => [id, { atMs, errors: [], ...r }])),
    decision: { setpoints: [], expectedDeviceKw: 0, baseLoadKw: 0, guarded: [] },
  };
}

function tracker(socOf: Record<string, number | undefined> = {}) {
  const store = openStore({ path: ':memory:' });
  const { logger, lines } = memoryLogger();
  const t = createHomeTracker({
    config,
    store,
    clock: new ManualClock(T0),
    wishes: new Wishes(store, ['east', 'west']),
    logger,
    vehicleSocPct: (id) => socOf[id],
  });
  return { t, lines };
}

describe('the car at each charger, planned as itself', () => {
  it('plans each charger with the car its card names: capacity, SoC topic, weekday departure and target', () => {
    const { t } = tracker({ 'car-a': 35, 'car-b': 99 });
    expect(
      t.observe(
        tick(T0, {
          east: { energyKwh: 10, ev: { plugged: true, charging: false, goeCard: 1 } },
          west: { energyKwh: 20, ev: { plugged: true, charging: false, goeCard: 0 } },
        }),
        null,
      ),
    ).toBe(true);
    const snap = t.snapshot(T0, prices, []);
    expect(snap.evs.map((e) => [e.config.id, e.vehicle?.id, e.identifiedBy])).toEqual([
      ['east', 'car-b', 'card'],
      ['west', 'car-a', 'card'],
    ]);
    const input = buildPlanInput(config, snap, new Map());
    const [east, west] = input.evs ?? [];
    // car-b has no SoC topic: the charger's own SoC is none, so the energy estimate (12 kWh), by 09:15 Thursday.
    expect(east).toMatchObject({ id: 'east', energyNeededKwh: 12, efficiency: 0.8, departureMs: Date.UTC(2026, 0, 15, 8, 15) });
    expect(east).not.toHaveProperty('socPct');
    // car-a: its own SoC topic, its weekday departure (06:30 Thursday) with that departure's 90 %.
    expect(west).toMatchObject({ id: 'west', socPct: 35, targetSocPct: 90, capacityKwh: 80, departureMs: Date.UTC(2026, 0, 15, 5, 30) });
  });

  it("swaps the cars when they swap chargers, and counts a car's SoC only while it is at a charger", () => {
    const { t } = tracker({ 'car-a': 50 });
    t.observe(
      tick(T0, {
        east: { energyKwh: 10, ev: { plugged: true, charging: false, goeCard: 0 } },
        west: { energyKwh: 20, ev: { plugged: false, charging: false } },
      }),
      null,
    );
    expect(t.vehicleAt('east')).toBe('car-a');
    expect(
      t.observe(
        tick(T0 + H, {
          east: { energyKwh: 15, ev: { plugged: false, charging: false } },
          west: { energyKwh: 20, ev: { plugged: false, charging: false } },
        }),
        null,
      ),
    ).toBe(true);
    expect(t.vehicleAt('east')).toBeNull();
    expect(buildPlanInput(config, t.snapshot(T0 + H, prices, []), new Map()).evs).toEqual([]);
    t.observe(
      tick(T0 + 2 * H, {
        east: { energyKwh: 15, ev: { plugged: true, charging: false, goeCard: 1 } },
        west: { energyKwh: 20, ev: { plugged: true, charging: false, goeCard: 0 } },
      }),
      null,
    );
    expect([t.vehicleAt('east'), t.vehicleAt('west')]).toEqual(['car-b', 'car-a']);
    const snap = t.snapshot(T0 + 2 * H, prices, []);
    expect(snap.evs.map((e) => [e.config.id, e.socPct])).toEqual([
      ['east', null],
      ['west', 50],
    ]);
  });

  it("keeps the car named for the session when the charger stops naming it, and falls back to the charger's model for an unknown card, logged once", () => {
    const { t, lines } = tracker();
    t.observe(tick(T0, { east: { energyKwh: 10, ev: { plugged: true, charging: true, goeCard: 1 } } }), null);
    expect(t.observe(tick(T0 + 60_000, { east: { energyKwh: 11, ev: { plugged: true, charging: false } } }), null)).toBe(false);
    expect(t.vehicleAt('east')).toBe('car-b');
    t.observe(tick(T0 + 120_000, { west: { energyKwh: 1, ev: { plugged: true, charging: false, goeCard: 7 } } }), null);
    t.observe(tick(T0 + 180_000, { west: { energyKwh: 1, ev: { plugged: true, charging: false, goeCard: 7 } } }), null);
    expect(t.vehicleAt('west')).toBeNull();
    const west = buildPlanInput(config, t.snapshot(T0 + 180_000, prices, []), new Map()).evs?.find((e) => e.id === 'west');
    expect(west).toMatchObject({ energyNeededKwh: 10, efficiency: 0.9 });
    expect(lines.filter((l) => l.code === 'VEHICLE_UNKNOWN')).toEqual([expect.objectContaining({ device: 'west', tag: 'card 7' })]);
  });
});

describe("each car's energy", () => {
  it('is the energy of the charger it is identified at, and zero away from chargers', () => {
    const fed: { subject: string; kwh: number | undefined }[] = [];
    const vm = createVehicleMetering({
      vehicleIds: ['car-a', 'car-b'],
      metering: {
        feed: (subject, r) => void fed.push({ subject, kwh: r.energyKwh }),
        lastValue: (s) => (s === vehicleSubject('car-a') ? 100 : undefined),
      },
    });
    vm.feed(T0, [
      { chargerId: 'east', vehicleId: 'car-a', energyKwh: 10 },
      { chargerId: 'west', vehicleId: null, energyKwh: 50 },
    ]);
    vm.feed(T0 + H, [
      { chargerId: 'east', vehicleId: 'car-a', energyKwh: 14 },
      { chargerId: 'west', vehicleId: 'car-b', energyKwh: 52 },
    ]);
    vm.feed(T0 + 2 * H, [
      { chargerId: 'east', vehicleId: 'car-b', energyKwh: 20 },
      { chargerId: 'west', vehicleId: 'car-b', energyKwh: 55 },
    ]);
    // A charger counter that falls adds nothing.
    vm.feed(T0 + 3 * H, [{ chargerId: 'west', vehicleId: 'car-b', energyKwh: 1 }]);
    expect(Object.fromEntries(vm.totals())).toEqual({ 'car-a': 4, 'car-b': 3 });
    expect(fed.filter((f) => f.subject === 'vehicle:car-a').map((f) => f.kwh)).toEqual([100, 104, 104, 104]);
    expect(fed.filter((f) => f.subject === 'vehicle:car-b').map((f) => f.kwh)).toEqual([0, 0, 3, 3]);
  });
});
