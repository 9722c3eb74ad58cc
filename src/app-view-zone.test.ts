/** A heated zone in the view, on MQTT and on the status page: its preset, its band now, its plan and a thermostat's setpoint. */
import { describe, expect, it } from 'vitest';
import { homeView } from './app-view.js';
import { parseConfig } from './config/load.js';
import { stateMessages } from './ha/state.js';
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
    expect(d.zone).toEqual({ preset: 'eco', minC: 18, maxC: 20, frostC: 7, setpointC: 20 });
    expect(d.plannedOn).toBe(true);
    expect(d.nextStartMs).toBe(plan.slots[2]!.startMs);
  });

  it('says the same on MQTT and on the status page', () => {
    const t = haTopics('wattshift');
    const m = stateMessages(t, view);
    expect(m.get(t.deviceField('bedroom', 'planned_on'))).toBe('true');
    expect(renderStatusPage(view, { timezone: 'Europe/Oslo' })).toContain('preset eco, band 18.0–20.0 °C (frost 7 °C), setpoint 20.0 °C');
  });
});
