/**
 * The HAN meter's phase currents, the chargers' current limit and the main fuse in the view, on
 * MQTT (state and Home Assistant discovery) and on the status page: all say the same.
 */
import { describe, expect, it } from 'vitest';
import { homeView } from './app-view.js';
import { parseConfig } from './config/load.js';
import { discoveryMessages } from './ha/discovery.js';
import { stateMessages } from './ha/state.js';
import { haTopics } from './ha/topics.js';
import type { ControlSnapshot } from './jobs/control-loop.js';
import { renderStatusPage } from './status/page.js';

const now = Date.UTC(2026, 0, 12, 17, 5);

function view(opts: { fuse: boolean; reason: string; currentsA: number[]; phases?: 1 | 3 }) {
  const { config } = parseConfig(
    {
      version: 1,
      site: {
        timezone: 'Europe/Oslo',
        priceArea: 'NO1',
        currency: 'NOK',
        locationLimitKw: 17,
        ...(opts.fuse ? { fuse: { mainFuseA: 25, phases: 3, supply: 'IT', meter: 'han' } } : {}),
      },
      spark: { clientId: 'c', clientSecret: 'x' },
      storage: { path: ':memory:' },
      mqtt: { url: 'mqtt://127.0.0.1:1883' },
      ocpp: { host: '127.0.0.1', port: 8887 },
      devices: [
        { id: 'han', kind: 'meter', meter: { type: 'amsreader', topic: 'ams/meter' } },
        {
          id: 'car',
          kind: 'evCharger',
          charger: { type: 'ocpp', chargePointId: 'cp1', password: 'home-charger-secret-1' },
          model: { capacityKwh: 60 },
        },
      ],
    },
    { env: {} },
  );
  const control = {
    atMs: now,
    slotStartMs: now,
    slotEnergyKwh: new Map(),
    locationPowerW: 9000,
    capKw: 17,
    readings: new Map([
      ['han', { atMs: now, powerW: 9000, phases: { currentsA: opts.currentsA, voltagesV: [], atMs: now }, errors: [] }],
      ['car', { atMs: now, powerW: 4000, ev: { plugged: true, charging: true, sessionKwh: 12.345 }, errors: [] }],
    ]),
    decision: {
      setpoints: [{ kind: 'charger', id: 'car', currentA: 10, reason: opts.reason, ...(opts.phases ? { phases: opts.phases } : {}) }],
      expectedDeviceKw: 4,
      baseLoadKw: 5,
      guarded: [],
    },
  } as ControlSnapshot;
  return homeView({
    config,
    nowMs: now,
    plan: null,
    control,
    devices: new Map(),
    jobs: [],
    locationId: 'loc',
    wishes: () => ({ mode: 'auto', boostUntilMs: null, floorC: null, departureMs: null, targetKwh: null, targetSocPct: null }),
    outbox: { pending: 0, sending: 0, accepted: 0, rejected: 0, oldestPendingDeadlineMs: null, nextAttemptMs: null },
    events: [],
    resources: new Map(),
  });
}

const t = haTopics('wattshift');
const discovered = (v: ReturnType<typeof view>) =>
  new Map(
    discoveryMessages({
      baseTopic: 'wattshift',
      prefix: 'homeassistant',
      location: v.location,
      devices: v.devices,
      currency: 'NOK',
      swVersion: 'test',
    }).map((m) => [m.topic.split('/')[3] as string, m]),
  );

describe('phases, charging current and the main fuse in the view', () => {
  const held = view({ fuse: true, reason: 'main fuse 25 A: L1 at 24.0 A', currentsA: [24, NaN, 5.25] });

  it("the view: per-line headroom (unmeasured L2 unknown), the fuse holding the charger, its limit and the meter's phases", () => {
    expect(held.location.fuse).toEqual({ mainFuseA: 25, headroomA: [1, null, 19.75], limiting: true, reason: 'main fuse 25 A: L1 at 24.0 A' });
    expect(held.devices.find((d) => d.id === 'car')).toMatchObject({ currentLimitA: 10, fuseLimited: true });
    expect(held.devices.find((d) => d.id === 'han')?.phaseCurrentsA).toEqual([24, NaN, 5.25]);
  });

  it('MQTT state and discovery carry the same, and the page says it in words', () => {
    const m = stateMessages(t, held);
    expect(m.get(t.deviceField('car', 'current_limit'))).toBe('10');
    expect(m.get(t.deviceField('car', 'fuse_limited'))).toBe('true');
    expect(m.get(t.deviceField('car', 'session_energy'))).toBe('12.345');
    expect([1, 2, 3].map((n) => m.get(t.deviceField('han', `current_l${n}` as 'current_l1')))).toEqual(['24', 'None', '5.25']);
    expect(JSON.parse(m.get(t.location)!).fuse).toEqual({
      main_fuse_a: 25,
      headroom_a: [1, null, 19.8],
      limiting: true,
      reason: 'main fuse 25 A: L1 at 24.0 A',
    });

    const d = discovered(held);
    expect(d.get('car_current_limit')?.payload).toMatchObject({
      device_class: 'current',
      unit_of_measurement: 'A',
      state_topic: t.deviceField('car', 'current_limit'),
    });
    expect(d.get('car_fuse_limited')?.topic.split('/')[1]).toBe('binary_sensor');
    expect(d.get('car_session_energy')?.payload).toMatchObject({
      device_class: 'energy',
      unit_of_measurement: 'kWh',
      state_topic: t.deviceField('car', 'session_energy'),
    });
    expect(d.get('han_current_l2')?.payload).toMatchObject({ device_class: 'current', state_topic: t.deviceField('han', 'current_l2') });
    expect(d.get('location_fuse_headroom_l3')?.payload).toMatchObject({ state_topic: t.location, unit_of_measurement: 'A' });
    expect(d.get('location_fuse_limiting')?.topic.split('/')[1]).toBe('binary_sensor');

    const html = renderStatusPage(held, { timezone: 'Europe/Oslo' });
    expect(html).toContain('Main fuse 25 A, headroom L1 1.0 A · L2 not measured · L3 19.8 A');
    expect(html).toContain('limiting the charger</b> (main fuse 25 A: L1 at 24.0 A)');
    expect(html).toContain('12.3 kWh this session; limit 10 A (main fuse)');
    expect(html).toContain('L1 24.0 A · L2 not measured · L3 5.3 A');
    // A meter has no mode and no plan: the page shows none.
    const meterRow = /<tr data-device="han">.*?<\/tr>/s.exec(html)?.[0] ?? '';
    expect(meterRow).toContain('<td data-label="Mode">–</td>');
    expect(meterRow).toContain('<td class="wide" data-label="Plan">–</td>');
  });

  it('the phases a charger charges on: the count the control set, else its wiring; on MQTT, in Home Assistant and on the page', () => {
    expect(held.devices.find((d) => d.id === 'car')?.ev?.phases).toBe(3);
    const one = view({ fuse: true, reason: 'plan', currentsA: [10, 10, 10], phases: 1 });
    expect(one.devices.find((d) => d.id === 'car')?.ev?.phases).toBe(1);
    expect(stateMessages(t, one).get(t.deviceField('car', 'phases'))).toBe('1');
    expect(discovered(one).get('car_phases')?.payload).toMatchObject({ state_topic: t.deviceField('car', 'phases') });
    expect(renderStatusPage(one, { timezone: 'UTC' })).toContain('plugged, charging, 1-phase, 12.3 kWh this session');
  });

  it('without a fuse held (or configured): not limiting, no fuse entities, no fuse line on the page', () => {
    const free = view({ fuse: true, reason: 'plan', currentsA: [10, 10, 10] });
    expect(free.location.fuse).toMatchObject({ headroomA: [15, 15, 15], limiting: false });
    expect(free.devices.find((d) => d.id === 'car')?.fuseLimited).toBe(false);
    expect(renderStatusPage(free, { timezone: 'UTC' })).not.toContain('fuse-limiting');

    const none = view({ fuse: false, reason: 'plan', currentsA: [10, 10, 10] });
    expect(none.location.fuse).toBeUndefined();
    expect(JSON.parse(stateMessages(t, none).get(t.location)!).fuse).toBeNull();
    expect([...discovered(none).keys()].some((k) => k.startsWith('location_fuse'))).toBe(false);
    expect(renderStatusPage(none, { timezone: 'UTC' })).not.toContain('id="fuse"');
  });
});
