/** A heated zone in the view, on MQTT and on the status page: its preset, its band now, its plan and a thermostat's setpoint. */
import { describe, expect, it } from 'vitest';
import { homeView, planView } from './app-view.js';
import { renderPlan } from './cli/plan-render.js';
import { parseConfig } from './config/load.js';
import { stateMessages } from './ha/state.js';
import { discoveryMessages } from './ha/discovery.js';
import { haTopics } from './ha/topics.js';
import type { Plan } from './core/types.js';
import type { SupervisedDevice } from './devices/supervisor.js';
import { renderStatusPage } from './status/page.js';

// Monday 12 January 2026, 18:05 in Oslo.
const now = Date.UTC(2026, 0, 12, 17, 5);
const hourMs = 3_600_000;

const { config } = parseConfig(
  {
    version: 1,
    site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 17 },
    spark: { clientId: 'c', clientSecret: 'x' },
    storage: { path: ':memory:' },
    mqtt: { url: 'mqtt://127.0.0.1:1883' },
    devices: [
      {
        id: 'bedroom',
        kind: 'zone',
        thermostat: { type: 'mqtt', commandTopic: 'z2m/bedroom/set', stateTopic: 'z2m/bedroom' },
        model: { powerKw: 0.8 },
      },
    ],
  },
  { env: {} },
);

const slot = (i: number, on: boolean) => ({
  startMs: now - 5 * 60_000 + i * hourMs,
  endMs: now - 5 * 60_000 + (i + 1) * hourMs,
  zones: { bedroom: { energyKwh: on ? 0.8 : 0, powerKw: on ? 0.8 : 0, on, endTempC: 19, minC: 18, maxC: 20 } },
});
const plan = {
  createdMs: now - 5 * 60_000,
  currency: 'NOK',
  slotMinutes: 60,
  startMs: now - 5 * 60_000,
  endMs: now - 5 * 60_000 + 3 * hourMs,
  mode: 'optimal',
  slots: [slot(0, true), slot(1, false), slot(2, true)].map((s) => ({
    ...s,
    price: 1,
    delta: 0,
    source: 'actual',
    headroomKw: 16,
    binding: [],
    reason: 'test',
  })),
  cost: 0,
  baselineCost: 0,
  baselineRespectsLimits: true,
  incentiveEarned: 0,
  shortfalls: [],
} as unknown as Plan;
const thermostat = {
  health: () => ({ state: 'up', sinceMs: 0, consecutiveFailures: 0, blocked: false, setpointC: 20 }),
} as unknown as SupervisedDevice;

const view = homeView({
  config,
  nowMs: now,
  plan,
  control: null,
  devices: new Map([['bedroom', thermostat]]),
  jobs: [],
  locationId: 'loc',
  wishes: () => ({ mode: 'auto', boostUntilMs: null, floorC: null, departureMs: null, targetKwh: null, targetSocPct: null, preset: 'eco' }),
  outbox: { pending: 0, sending: 0, accepted: 0, rejected: 0, oldestPendingDeadlineMs: null, nextAttemptMs: null },
  events: [],
  resources: new Map(),
});

describe('a heated zone in the view', () => {
  it('carries its preset, the band of the preset now, its frost floor, its setpoint and its plan', () => {
    const d = view.devices[0]!;
    expect(d.zone).toEqual({ preset: 'eco', minC: 18, maxC: 20, frostC: 7, targetC: 20, setpointC: 20 });
    expect(d.plannedOn).toBe(true);
    expect(d.nextStartMs).toBe(plan.slots[2]!.startMs);
  });

  it('says the same on MQTT and on the status page', () => {
    const t = haTopics('wattshift');
    const m = stateMessages(t, view);
    expect(m.get(t.deviceField('bedroom', 'planned_on'))).toBe('true');
    expect(m.get(t.deviceField('bedroom', 'preset'))).toBe('eco');
    expect(m.get(t.deviceField('bedroom', 'target_temp'))).toBe('20');
    expect(m.get(t.deviceField('bedroom', 'action'))).toBe('heating');
    expect(renderStatusPage(view, { timezone: 'Europe/Oslo' })).toContain('preset eco, band 18.0–20.0 °C (frost 7 °C), setpoint 20.0 °C');
  });
});

describe('a heated zone in the plan a user reads', () => {
  it('shows its planned temperatures, its room model, its start and the outdoor source in plan --explain', () => {
    const withZone = {
      ...plan,
      zones: {
        bedroom: {
          startTempC: 19.4,
          tempSource: 'measured',
          outdoorSource: 'persistence',
          model: { heatCapacityKwhPerK: 0.7, heatLossKwPerK: 0.02, errorK: 0.4, source: 'learned' },
        },
      },
    } as Plan;
    const pv = planView(withZone, config, now);
    expect(pv.slots[0]!.devices.bedroom).toEqual({ powerKw: 0.8, on: true, temperatureC: 19 });
    expect(pv.zones).toEqual([
      'bedroom: learned room model (heat loss 0.020 kW/K, heat capacity 0.70 kWh/K, temperatures ±0.4 K), from 19.4 °C measured; outdoor: the last known outdoor temperature held (no forecast for these hours)',
    ]);
    const text = renderPlan(pv, { explain: true, timezone: 'Europe/Oslo' });
    expect(text).toContain('Zone bedroom: learned room model');
    expect(text).toMatch(/°C forecast .* 19–19 °C/);
  });
});

/**
 * The configuration variables of Home Assistant's MQTT climate
 * (https://www.home-assistant.io/integrations/climate.mqtt/), and the discovery frame's own keys.
 */
const climateOptions = new Set([
  ...['action_template', 'action_topic', 'availability', 'availability_mode', 'availability_template', 'availability_topic'],
  ...['current_humidity_template', 'current_humidity_topic', 'current_temperature_template', 'current_temperature_topic'],
  ...['default_entity_id', 'device', 'enabled_by_default', 'encoding', 'entity_category', 'icon', 'initial'],
  ...['json_attributes_template', 'json_attributes_topic', 'max_humidity', 'max_temp', 'min_humidity', 'min_temp'],
  ...['mode_command_template', 'mode_command_topic', 'mode_state_template', 'mode_state_topic', 'modes', 'name', 'object_id'],
  ...['optimistic', 'origin', 'payload_available', 'payload_not_available', 'precision', 'qos', 'retain', 'temp_step'],
  ...['preset_mode_command_template', 'preset_mode_command_topic', 'preset_mode_state_topic', 'preset_mode_value_template', 'preset_modes'],
  ...['temperature_command_template', 'temperature_command_topic', 'temperature_state_template', 'temperature_state_topic'],
  ...['temperature_unit', 'unique_id', 'value_template'],
]);
/** The climate's `action_topic` values Home Assistant takes, and its HVAC modes. */
const climateActions = ['off', 'heating', 'cooling', 'drying', 'idle', 'fan', 'preheating', 'defrosting'];
const hvacModes = ['auto', 'off', 'cool', 'heat', 'dry', 'fan_only'];

describe('a heated zone in Home Assistant', () => {
  const messages = discoveryMessages({
    baseTopic: 'wattshift',
    prefix: 'homeassistant',
    location: view.location,
    devices: view.devices,
    currency: 'NOK',
    swVersion: 'test',
  });
  const climate = messages.find((m) => m.topic.startsWith('homeassistant/climate/'));

  it('is a climate entity with only the options its documentation lists', () => {
    expect(climate?.topic).toMatch(/^homeassistant\/climate\/[^/]+\/bedroom_climate\/config$/);
    const payload = climate!.payload as Record<string, unknown>;
    expect(Object.keys(payload).filter((k) => !climateOptions.has(k))).toEqual([]);
    expect((payload['modes'] as string[]).every((m) => hvacModes.includes(m))).toBe(true);
    // `none` is Home Assistant's own "no preset": a preset list must not name it.
    expect(payload['preset_modes']).not.toContain('none');
  });

  it('reads its topics from what the zone publishes, and sets the preset on its set topic', () => {
    const payload = climate!.payload as Record<string, unknown>;
    const t = haTopics('wattshift');
    const m = stateMessages(t, view);
    expect(climateActions).toContain(m.get(payload['action_topic'] as string));
    expect(payload['current_temperature_topic']).toBe(t.deviceField('bedroom', 'temperature'));
    expect(m.get(payload['temperature_state_topic'] as string)).toBe('20');
    expect(payload['preset_modes']).toContain(m.get(payload['preset_mode_state_topic'] as string));
    expect(payload['preset_mode_command_topic']).toBe(t.set('bedroom'));
    expect(payload['preset_mode_command_template']).toBe('{"preset": "{{ value }}"}');
  });
});
