import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../config/load.js';
import type { ZoneConfig } from '../config/schema.js';
import { buildPlanInput, type PlanningSnapshot } from './plan-inputs.js';
import type { ZoneNow } from './zone-inputs.js';
import type { HomeEvent } from '../spark/event-normalise.js';
import { UNKNOWN_OUTDOOR_C } from '../core/outdoor.js';

const hourMs = 3_600_000;
// Wednesday 14 January 2026, 04:00 UTC = 05:00 in Oslo.
const now = Date.UTC(2026, 0, 14, 4);
const config = defaultConfig({
  mqtt: { url: 'mqtt://127.0.0.1:1883' },
  site: { slotMinutes: 60 },
  planner: { horizonHours: 24 },
  devices: [
    {
      id: 'living',
      kind: 'zone',
      resourceId: 'res-living',
      switch: { type: 'shelly', topicPrefix: 'shelly-living' },
      model: { powerKw: 2, floorAreaM2: 30 },
      schedule: [
        { cron: '0 6 * * 1-5', minC: 20, maxC: 22.5 },
        { cron: '0 22 * * *', minC: 17, maxC: 21 },
      ],
    },
  ],
});
const living = config.devices[0] as ZoneConfig;

const snap = (zones: ZoneNow[] | undefined, more: Partial<PlanningSnapshot> = {}): PlanningSnapshot => ({
  nowMs: now,
  prices: { forecast: null, advice: null, actual: null },
  events: [],
  tanks: [],
  evs: [],
  baseLoadKw: 0.5,
  ...(zones ? { zones } : {}),
  ...more,
});
const zone = (over: Partial<ZoneNow> = {}): ZoneNow => ({ config: living, measuredC: 19.5, preset: 'comfort', ...over });

describe('plan inputs of a heated zone', () => {
  it("bands each slot by the schedule in the site's time: the night band until 06:00, the day band until 22:00", () => {
    const input = buildPlanInput(config, snap([zone()]), new Map());
    const z = input.zones?.[0];
    expect(z?.band).toHaveLength(input.slots.length);
    const at = (localHour: number) => z?.band[localHour - 5];
    expect(at(5)).toEqual({ minC: 17, maxC: 21 });
    expect(at(6)).toEqual({ minC: 20, maxC: 22.5 });
    expect(at(21)).toEqual({ minC: 20, maxC: 22.5 });
    expect(at(22)).toEqual({ minC: 17, maxC: 21 });
    expect(z).toMatchObject({ id: 'living', powerKw: 2, cop: 1, control: 'relay', currentTempC: 19.5, frostC: 7 });
  });

  it("holds a preset's band all day", () => {
    const z = buildPlanInput(config, snap([zone({ preset: 'away' })]), new Map()).zones?.[0];
    expect(new Set(z?.band.map((b) => `${b.minC}..${b.maxC}`))).toEqual(new Set(['12..16']));
  });

  it('takes the outdoor temperature of each slot from the forecast and says where it came from', () => {
    const outdoor = {
      source: 'metno' as const,
      updatedMs: now,
      points: Array.from({ length: 30 }, (_, i) => ({ startMs: now + i * hourMs, tempC: -10 + i })),
    };
    const z = buildPlanInput(config, snap([zone()], { outdoor }), new Map()).zones?.[0];
    expect(z?.outdoorTempC.slice(0, 3)).toEqual([-10, -9, -8]);
    expect(z?.outdoorSource).toBe('metno');
    const none = buildPlanInput(config, snap([zone()]), new Map()).zones?.[0];
    expect(none?.outdoorSource).toBe('none');
    expect(new Set(none?.outdoorTempC)).toEqual(new Set([UNKNOWN_OUTDOOR_C]));
  });

  it('plans with the default model from the floor area and class until one is learnt, and with no reading as null', () => {
    const z = buildPlanInput(config, snap([zone({ measuredC: null })]), new Map()).zones?.[0];
    expect(z?.currentTempC).toBeNull();
    // EN ISO 13790 medium: 165 kJ/(m²·K) × 30 m² = 1.375 kWh/K; 2 kW holds 21 °C at −20 °C.
    expect(z?.model.source).toBe('default');
    expect(z?.model.heatCapacityKwhPerK).toBeCloseTo(1.375, 3);
    expect(z?.model.heatLossKwPerK).toBeCloseTo(2 / 41, 4);
  });

  it("scopes a cap on the zone's resource to the zone", () => {
    const event: HomeEvent = {
      id: 'lpc-living',
      createdAtMs: now,
      notificationType: null,
      payloadType: 'ResourceLPC',
      relevant: true,
      startMs: now + 2 * hourMs,
      endMs: now + 3 * hourMs,
      locationIds: ['home'],
      resourceIds: ['res-living'],
      priceDeltas: [],
      eligibility: null,
      refusal: null,
      lpcCaps: [{ startMs: now + 2 * hourMs, durationMs: hourMs, maxKw: 0, resourceId: 'res-living', locationId: 'home', meterPointId: 'm1' }],
    };
    const input = buildPlanInput(config, snap([zone()], { events: [event] }), new Map([['res-living', 'living']]));
    expect(input.location.lpc).toEqual([{ startMs: now + 2 * hourMs, endMs: now + 3 * hourMs, maxKw: 0, scope: 'zone', deviceId: 'living' }]);
  });

  it('leaves the input of a home without zones as it was', () => {
    expect(buildPlanInput(config, snap(undefined), new Map())).not.toHaveProperty('zones');
    expect(buildPlanInput(config, snap([]), new Map())).not.toHaveProperty('zones');
  });
});
