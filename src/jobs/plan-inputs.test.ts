import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../config/load.js';
import { buildPlanInput, type PlanningSnapshot } from './plan-inputs.js';
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
