import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../config/load.js';
import {
  buildPlanInput,
  comfortDeadlines,
  frozenSlotsAfterCurrent,
  nextDepartureMs,
  type EvNow,
  type PlanningSnapshot,
  type TankNow,
} from './plan-inputs.js';
import type { HomeEvent } from '../spark/event-normalise.js';

const hourMs = 3_600_000;
const now = Date.UTC(2026, 0, 14, 9);
const config = defaultConfig({
  mqtt: { url: 'mqtt://127.0.0.1:1883' },
  devices: [
    { id: 'tank', kind: 'hotWaterTank', switch: { type: 'shelly', topicPrefix: 'shelly-tank' }, model: { volumeL: 200, elementKw: 2 } },
    { id: 'car', kind: 'evCharger', charger: { type: 'goe', topicPrefix: 'go-e/1' }, model: { capacityKwh: 60 } },
  ],
});

function lpc(resourceId: string | null, maxKw: number): HomeEvent {
  return {
    id: `lpc-${resourceId ?? 'home'}`,
    createdAtMs: now,
    notificationType: null,
    payloadType: resourceId ? 'ResourceLPC' : 'LocationLPC',
    relevant: true,
    startMs: now + 8 * hourMs,
    endMs: now + 10 * hourMs,
    locationIds: ['home'],
    resourceIds: resourceId ? [resourceId] : [],
    priceDeltas: [],
    eligibility: null,
    refusal: null,
    lpcCaps: [0, 1].map((h) => ({ startMs: now + (8 + h) * hourMs, durationMs: hourMs, maxKw, resourceId, locationId: 'home', meterPointId: 'm1' })),
  };
}

const snap = (events: HomeEvent[]): PlanningSnapshot => ({
  nowMs: now,
  prices: { forecast: null, advice: null, actual: null },
  events,
  tanks: [],
  evs: [],
  baseLoadKw: 0.5,
});

describe('the frozen window', () => {
  it('freezes only the slots that start within frozenWindowMinutes of now', () => {
    const hourly = defaultConfig({ site: { slotMinutes: 60 }, planner: { frozenWindowMinutes: 15 } });
    const at = (ms: number) => buildPlanInput(hourly, { ...snap([]), nowMs: ms }, new Map()).options?.frozenSlots;
    expect(at(now)).toBe(0); // 10:00 is an hour away: not frozen (was: the next hourly slot always)
    expect(at(now + 44 * 60_000)).toBe(0);
    expect(at(now + 45 * 60_000)).toBe(1); // 10:00 starts within 15 minutes
    expect(frozenSlotsAfterCurrent(15, 15, now + 5 * 60_000)).toBe(1); // 09:15, not 09:30
    expect(frozenSlotsAfterCurrent(30, 15, now)).toBe(2); // 09:15 and 09:30
    expect(frozenSlotsAfterCurrent(0, 15, now + 14 * 60_000)).toBe(0);
  });
});

describe('buildPlanInput', () => {
  it('scopes a resource LPC cap to the device its registered resource id belongs to', () => {
    // The config names no resource ids: they come from `wattshift register`.
    const input = buildPlanInput(config, snap([lpc('reg-tank', 0), lpc('someone-else', 0)]), new Map([['reg-tank', 'tank']]));
    expect(input.location.lpc).toEqual([
      { startMs: now + 8 * hourMs, endMs: now + 9 * hourMs, maxKw: 0, scope: 'tank', deviceId: 'tank' },
      { startMs: now + 9 * hourMs, endMs: now + 10 * hourMs, maxKw: 0, scope: 'tank', deviceId: 'tank' },
    ]);
  });

  it('plans a reservation as a location cap marked with its event, until an LPC for the same hours replaces it', () => {
    const reservation: HomeEvent = {
      ...lpc(null, 1),
      id: 'res-1',
      payloadType: 'LPCReservation',
      lpcReservations: lpc(null, 1).lpcCaps,
      lpcCaps: [],
    };
    const alone = buildPlanInput(config, snap([reservation]), new Map());
    expect(alone.location.lpc).toEqual([
      { startMs: now + 8 * hourMs, endMs: now + 9 * hourMs, maxKw: 1, scope: 'location', reservationId: 'res-1' },
      { startMs: now + 9 * hourMs, endMs: now + 10 * hourMs, maxKw: 1, scope: 'location', reservationId: 'res-1' },
    ]);
    // The LPC asks only for the first hour: the second stays reserved.
    const asked: HomeEvent = { ...lpc(null, 2), lpcCaps: lpc(null, 2).lpcCaps.slice(0, 1) };
    expect(buildPlanInput(config, snap([reservation, asked]), new Map()).location.lpc).toEqual([
      { startMs: now + 8 * hourMs, endMs: now + 9 * hourMs, maxKw: 2, scope: 'location' },
      { startMs: now + 9 * hourMs, endMs: now + 10 * hourMs, maxKw: 1, scope: 'location', reservationId: 'res-1' },
    ]);
  });

  it("gives the planner the car's session (plug-in time and energy so far) for the bill's baseline", () => {
    const car = config.devices[1];
    if (car?.kind !== 'evCharger') throw new Error('not a charger');
    const evNow = (sessionStartMs: number | null): EvNow => ({
      config: car,
      plugged: true,
      socPct: null,
      sessionKwh: 4.2,
      sessionStartMs,
      departureOverrideMs: null,
      targetKwhOverride: null,
      targetSocOverride: null,
    });
    expect(buildPlanInput(config, { ...snap([]), evs: [evNow(now - hourMs)] }, new Map()).evs[0]?.session).toEqual({
      startMs: now - hourMs,
      deliveredKwh: 4.2,
    });
    expect(buildPlanInput(config, { ...snap([]), evs: [evNow(null)] }, new Map()).evs[0]?.session).toBeUndefined();
  });

  it('plans a 3-phase charger on an IT supply at √3·U·I, the power it can draw (3·U·I on TN)', () => {
    const car = config.devices[1];
    if (car?.kind !== 'evCharger') throw new Error('not a charger');
    const plugged: EvNow = {
      config: car,
      plugged: true,
      socPct: null,
      sessionKwh: 0,
      sessionStartMs: null,
      departureOverrideMs: null,
      targetKwhOverride: null,
      targetSocOverride: null,
    };
    const it = defaultConfig({
      ...config,
      site: { ...config.site, fuse: { mainFuseA: 25, phases: 3, supply: 'IT', meter: 'han' } },
      devices: [...config.devices, { id: 'han', kind: 'meter', meter: { type: 'amsreader', topic: 'ams/1' } }],
    });
    const range = (c: typeof config) => {
      const ev = buildPlanInput(c, { ...snap([]), evs: [plugged] }, new Map()).evs[0]!;
      return [ev.minPowerKw, ev.maxPowerKw].map((kw) => Math.round(kw * 100) / 100);
    };
    expect(range(config)).toEqual([4.14, 11.04]); // 6 and 16 A × 3 × 230 V
    expect(range(it)).toEqual([2.39, 6.37]); // 6 and 16 A × √3 × 230 V
  });

  it('keeps the plan within what the main fuse carries with the 1-phase tank on its lines', () => {
    const fused = (locationLimitKw: number) =>
      defaultConfig({
        ...config,
        site: { ...config.site, locationLimitKw, fuse: { mainFuseA: 25, phases: 3, supply: 'IT', meter: 'han', marginA: 2 } },
        devices: [...config.devices, { id: 'han', kind: 'meter', meter: { type: 'amsreader', topic: 'ams/1' } }],
      });
    const limit = (c: typeof config) => buildPlanInput(c, snap([]), new Map()).location.limitKw;
    // √3·230 V·23 A = 9.16 kW, less 0.73 × the 2 kW element: 7.7 kW.
    expect(limit(fused(17))).toBeCloseTo(9.163 - (Math.sqrt(3) - 1) * 2, 3);
    // A lower location limit (a tariff step) still binds; without a fuse the location limit is all.
    expect(limit(fused(5))).toBe(5);
    expect(limit(config)).toBe(config.site.locationLimitKw);
  });

  it('keeps a location cap for the whole location and slots the horizon from the current slot', () => {
    const input = buildPlanInput(config, snap([lpc(null, 3)]), new Map());
    expect(input.location.lpc?.map((c) => c.scope)).toEqual(['location', 'location']);
    expect(input.slots[0]?.startMs).toBe(now);
    expect(input.slots).toHaveLength(config.planner.horizonHours);
    expect(input.slots.every((s) => s.source === 'fallback')).toBe(true);
  });
});

describe("the car's departure", () => {
  const car = (model: Record<string, unknown>): EvNow => {
    const c = defaultConfig({
      mqtt: { url: 'mqtt://127.0.0.1:1883' },
      devices: [{ id: 'car', kind: 'evCharger', charger: { type: 'goe', topicPrefix: 'go-e/1' }, model: { capacityKwh: 60, ...model } }],
    }).devices[0];
    if (c?.kind !== 'evCharger') throw new Error('not a charger');
    return {
      config: c,
      plugged: true,
      socPct: null,
      sessionKwh: 0,
      sessionStartMs: null,
      departureOverrideMs: null,
      targetKwhOverride: null,
      targetSocOverride: null,
    };
  };

  it('a weekday schedule skips the weekend, across the autumn change', () => {
    const weekdays = car({ departureSchedule: { cron: '30 7 * * 1-5' } });
    // Friday 2026-10-23 08:00 Oslo (UTC+2): next is Monday the 26th 07:30, after the change (UTC+1).
    expect(nextDepartureMs(weekdays, Date.UTC(2026, 9, 23, 6), 'Europe/Oslo')).toBe(Date.UTC(2026, 9, 26, 6, 30));
    // Monday 06:00 local: the same morning.
    expect(nextDepartureMs(weekdays, Date.UTC(2026, 9, 26, 5), 'Europe/Oslo')).toBe(Date.UTC(2026, 9, 26, 6, 30));
  });

  it("a schedule in its own zone, a command's override first, the daily time without a schedule", () => {
    const abroad = car({ departureSchedule: { cron: '0 9 * * *', timezone: 'America/New_York' } });
    // Saturday 10:00 EST; Sunday the 8th New York moves to EDT (UTC-4): 09:00 is 13:00Z.
    expect(nextDepartureMs(abroad, Date.UTC(2026, 2, 7, 15), 'Europe/Oslo')).toBe(Date.UTC(2026, 2, 8, 13));
    const override = { ...abroad, departureOverrideMs: Date.UTC(2026, 2, 7, 20) };
    expect(nextDepartureMs(override, Date.UTC(2026, 2, 7, 12), 'Europe/Oslo')).toBe(Date.UTC(2026, 2, 7, 20));
    expect(nextDepartureMs(car({ departure: '06:45' }), Date.UTC(2026, 2, 7, 12), 'Europe/Oslo')).toBe(Date.UTC(2026, 2, 8, 5, 45));
  });

  it('feeds the planner: the car gets no slot after a Monday departure planned on Sunday', () => {
    const weekdays = car({ departureSchedule: { cron: '30 7 * * 1-5' } });
    const sunday = Date.UTC(2026, 0, 11, 12);
    const input = buildPlanInput(config, { ...snap([]), nowMs: sunday, evs: [weekdays] }, new Map());
    expect(input.evs[0]?.departureMs).toBe(Date.UTC(2026, 0, 12, 6, 30));
  });
});

describe("the tank's comfort windows", () => {
  it('are the occurrences of each schedule within the horizon, in the site zone, across the spring change', () => {
    // Friday 27 March 2026 12:00 Oslo (UTC+1) to Wednesday 1 April; the clocks go forward on Sunday the 29th.
    const from = Date.UTC(2026, 2, 27, 11);
    const deadlines = comfortDeadlines(
      [
        { cron: '30 6 * * 1-5', tempC: 55 },
        { cron: '0 20 * * 0', tempC: 60, label: 'Sunday bath' },
      ],
      from,
      from + 5 * 24 * hourMs,
      'Europe/Oslo',
    );
    expect(deadlines).toEqual([
      // Monday to Wednesday 06:30 CEST (UTC+2); Friday's passed, nothing on the weekend.
      { atMs: Date.UTC(2026, 2, 30, 4, 30), tempC: 55, label: 'hot water ≥ 55 °C by 06:30' },
      { atMs: Date.UTC(2026, 2, 31, 4, 30), tempC: 55, label: 'hot water ≥ 55 °C by 06:30' },
      { atMs: Date.UTC(2026, 3, 1, 4, 30), tempC: 55, label: 'hot water ≥ 55 °C by 06:30' },
      { atMs: Date.UTC(2026, 2, 29, 18), tempC: 60, label: 'Sunday bath' },
    ]);
  });

  it('a window in its own zone is labelled with its own local time', () => {
    const from = Date.UTC(2026, 0, 14, 0);
    expect(comfortDeadlines([{ cron: '0 7 * * *', tempC: 50, timezone: 'America/New_York' }], from, from + 24 * hourMs, 'Europe/Oslo')).toEqual([
      { atMs: Date.UTC(2026, 0, 14, 12), tempC: 50, label: 'hot water ≥ 50 °C by 07:00' },
    ]);
  });

  it('reach the planner with the tank', () => {
    const withComfort = defaultConfig({
      mqtt: { url: 'mqtt://127.0.0.1:1883' },
      devices: [
        {
          id: 'tank',
          kind: 'hotWaterTank',
          switch: { type: 'shelly', topicPrefix: 'shelly-tank' },
          model: { volumeL: 200, elementKw: 2, comfort: [{ cron: '30 6 * * 1-5', tempC: 55 }] },
        },
      ],
    });
    const tankConfig = withComfort.devices[0];
    if (tankConfig?.kind !== 'hotWaterTank') throw new Error('not a tank');
    const tank: TankNow = { config: tankConfig, measuredC: 52, lastKnown: null, heatedSinceKwh: 0, legionellaLastMs: null, floorOverrideC: null };
    // Saturday 10 January 2026 10:00 UTC: Monday 06:30 is inside a horizon of 48 h or more, Sunday has none.
    const saturday = Date.UTC(2026, 0, 10, 10);
    const input = buildPlanInput(withComfort, { ...snap([]), nowMs: saturday, tanks: [tank] }, new Map());
    const horizonEnd = saturday + withComfort.planner.horizonHours * hourMs;
    const expected = [
      Date.UTC(2026, 0, 12, 5, 30),
      Date.UTC(2026, 0, 13, 5, 30),
      Date.UTC(2026, 0, 14, 5, 30),
      Date.UTC(2026, 0, 15, 5, 30),
      Date.UTC(2026, 0, 16, 5, 30),
    ].filter((ms) => ms <= horizonEnd);
    expect(expected.length).toBeGreaterThan(0);
    expect(input.tanks[0]?.comfort?.map((c) => c.atMs)).toEqual(expected);
  });
});
