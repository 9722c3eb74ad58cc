import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../config/load.js';
import { buildPlanInput, frozenSlotsAfterCurrent, nextDepartureMs, type EvNow, type PlanningSnapshot } from './plan-inputs.js';
import type { HomeEvent } from './event-normalise.js';

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
    id: `lpc-${resourceId ?? 'home'}`, createdAtMs: now, notificationType: null, payloadType: resourceId ? 'ResourceLPC' : 'LocationLPC',
    relevant: true, startMs: now + 8 * hourMs, endMs: now + 10 * hourMs, locationIds: ['home'], resourceIds: resourceId ? [resourceId] : [],
    priceDeltas: [], eligibility: null, refusal: null,
    lpcCaps: [0, 1].map((h) => ({ startMs: now + (8 + h) * hourMs, durationMs: hourMs, maxKw, resourceId, locationId: 'home', meterPointId: 'm1' })),
  };
}

const snap = (events: HomeEvent[]): PlanningSnapshot => ({
  nowMs: now, prices: { forecast: null, advice: null, actual: null }, events, tank: null, ev: null, baseLoadKw: 0.5,
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
      { startMs: now + 8 * hourMs, endMs: now + 9 * hourMs, maxKW: 0, scope: 'tank' },
      { startMs: now + 9 * hourMs, endMs: now + 10 * hourMs, maxKW: 0, scope: 'tank' },
    ]);
  });

  it('keeps a location cap for the whole location and slots the horizon from the current slot', () => {
    const input = buildPlanInput(config, snap([lpc(null, 3)]), new Map());
    expect(input.location.lpc?.map((c) => c.scope)).toEqual(['location', 'location']);
    expect(input.slots[0]?.startMs).toBe(now);
    expect(input.slots).toHaveLength(config.planner.horizonHours);
    expect(input.slots.every((s) => s.source === 'fallback')).toBe(true);
  });
});

describe('the car\'s departure', () => {
  const car = (model: Record<string, unknown>): EvNow => {
    const c = defaultConfig({
      mqtt: { url: 'mqtt://127.0.0.1:1883' },
      devices: [{ id: 'car', kind: 'evCharger', charger: { type: 'goe', topicPrefix: 'go-e/1' }, model: { capacityKwh: 60, ...model } }],
    }).devices[0];
    if (c?.kind !== 'evCharger') throw new Error('not a charger');
    return { config: c, plugged: true, socPct: null, sessionKwh: 0, departureOverrideMs: null, targetKwhOverride: null, targetSocOverride: null };
  };

  it('a weekday schedule skips the weekend, across the autumn change', () => {
    const weekdays = car({ departureSchedule: { cron: '30 7 * * 1-5' } });
    // Friday 2026-10-23 08:00 Oslo (UTC+2): next is Monday the 26th 07:30, after the change (UTC+1).
    expect(nextDepartureMs(weekdays, Date.UTC(2026, 9, 23, 6), 'Europe/Oslo')).toBe(Date.UTC(2026, 9, 26, 6, 30));
    // Monday 06:00 local: the same morning.
    expect(nextDepartureMs(weekdays, Date.UTC(2026, 9, 26, 5), 'Europe/Oslo')).toBe(Date.UTC(2026, 9, 26, 6, 30));
  });

  it('a schedule in its own zone, a command\'s override first, the daily time without a schedule', () => {
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
    const input = buildPlanInput(config, { ...snap([]), nowMs: sunday, ev: weekdays }, new Map());
    expect(input.ev?.departureMs).toBe(Date.UTC(2026, 0, 12, 6, 30));
  });
});
