import { describe, expect, it } from 'vitest';
import { homeView } from './app-view.js';
import { defaultConfig } from './config/load.js';
import type { HomeEvent } from './jobs/event-normalise.js';
import { renderStatusPage } from './status/page.js';
import { stateMessages } from './ha/state.js';
import { haTopics } from './ha/topics.js';
import type { ControlSnapshot } from './jobs/control-loop.js';

const hour = 3_600_000;
const now = Date.UTC(2026, 2, 2, 17, 30);

function lpc(id: string, caps: { startMs: number; hours: number; maxKw: number; resourceId: string | null }[]): HomeEvent {
  return {
    id, createdAtMs: now - 10 * hour, notificationType: null, payloadType: caps[0]?.resourceId ? 'ResourceLPC' : 'LPC', relevant: true,
    startMs: Math.min(...caps.map((c) => c.startMs)), endMs: Math.max(...caps.map((c) => c.startMs + c.hours * hour)),
    locationIds: ['loc'], resourceIds: [], priceDeltas: [], eligibility: null, refusal: null,
    lpcCaps: caps.map((c) => ({ startMs: c.startMs, durationMs: c.hours * hour, maxKw: c.maxKw, resourceId: c.resourceId, locationId: 'loc', meterPointId: null })),
  };
}

function viewWith(events: HomeEvent[], control: ControlSnapshot | null = null) {
  const config = defaultConfig({
    site: { locationLimitKw: 17 },
    modbus: { main: { type: 'tcp', host: '127.0.0.1' } },
    devices: [{ id: 'tank', name: 'Tank', kind: 'hotWaterTank', switch: { type: 'modbus', bus: 'main', profile: 'generic-relay' }, model: { volumeL: 200, elementKw: 3 } }],
  });
  return homeView({
    config, nowMs: now, plan: null, control, devices: new Map(), jobs: [], locationId: 'loc',
    wishes: () => ({ mode: 'auto', boostUntilMs: null, floorC: null, departureMs: null, targetKwh: null, targetSocPct: null }),
    outbox: { pending: 1, sending: 1, accepted: 7, rejected: 2, oldestPendingDeadlineMs: null, nextAttemptMs: null },
    events, resources: new Map([['res-tank', 'tank']]),
  });
}

describe('limits, events and reports in the view', () => {
  const events = [
    lpc('home-cap', [{ startMs: now - hour, hours: 1, maxKw: 9, resourceId: null }, { startMs: now, hours: 2, maxKw: 6, resourceId: null }]),
    lpc('tank-cap', [{ startMs: now - 30 * 60_000, hours: 3, maxKw: 0, resourceId: 'res-tank' }]),
    lpc('later', [{ startMs: now + 5 * hour, hours: 1, maxKw: 4, resourceId: null }]),
    lpc('stranger', [{ startMs: now - hour, hours: 4, maxKw: 1, resourceId: 'someone-else' }]),
    lpc('over', [{ startMs: now - 3 * hour, hours: 1, maxKw: 2, resourceId: null }]),
  ];

  it('shows the active caps per device and location with their end, coming caps (not ended ones), and reports by state', () => {
    const v = viewWith(events);
    expect(v.location.lpcCapKw).toBe(6);
    expect(v.devices[0]).toMatchObject({ capKw: 0, capUntilMs: now - 30 * 60_000 + 3 * hour });
    expect(v.limits.map((l) => [l.eventId, l.deviceId, l.capKw, l.active])).toEqual([
      ['tank-cap', 'tank', 0, true], ['home-cap', null, 6, true], ['later', null, 4, false],
    ]);
    expect(v.events.map((e) => e.id)).toEqual(['home-cap', 'stranger', 'tank-cap', 'later']);
    expect(v.outbox).toEqual({ pending: 2, accepted: 7, rejected: 2 });
  });

  it('the page, MQTT and the view say the same', () => {
    const v = viewWith(events);
    const html = renderStatusPage(v, { timezone: 'UTC' });
    expect(html).toContain('limited to 0.0 kW (LPC) until 2026-03-02 20:00');
    expect(html).toMatch(/<table id="limits">.*whole home.*6\.0 kW.*<b>active<\/b>.*4\.0 kW.*coming/s);
    expect(html).toContain('ResourceLPC <span class="muted">tank-cap</span>');
    expect(html).toContain('2 pending, 7 accepted, 2 rejected');
    const t = haTopics('ws');
    const m = stateMessages(t, v);
    const location = JSON.parse(m.get(t.location)!) as { lpc_cap_kw: number; limits: { device: string | null; cap_kw: number; end: string; active: boolean }[] };
    expect(location.lpc_cap_kw).toBe(6);
    expect(location.limits).toContainEqual({ device: 'tank', cap_kw: 0, start: '2026-03-02T17:00:00.000Z', end: '2026-03-02T20:00:00.000Z', active: true });
    expect(JSON.parse(m.get(t.device('tank'))!)).toMatchObject({ cap_kw: 0, cap_until: '2026-03-02T20:00:00.000Z' });
    expect(JSON.parse(m.get(t.health)!)).toMatchObject({ outbox: { pending: 2, accepted: 7, rejected: 2 } });
  });

  it('before the first reading, MQTT keeps the last run\'s values instead of publishing unknown', () => {
    const v = viewWith([]);
    expect(v.devices[0]!.notReadYet).toBe(true);
    const t = haTopics('ws');
    const before = stateMessages(t, v);
    for (const f of ['temperature', 'power', 'energy'] as const) expect(before.has(t.deviceField('tank', f))).toBe(false);
    expect(before.get(t.deviceField('tank', 'mode'))).toBe('auto'); // known without a reading
    expect(before.get(t.deviceAvailability('tank'))).toBe('online');
    // Once read, a value the reading lacks is published as unknown.
    const control = { readings: new Map([['tank', { atMs: now, temperatureC: 51.24, errors: [] }]]) } as unknown as ControlSnapshot;
    const read = viewWith([], control);
    expect(read.devices[0]!.notReadYet).toBeUndefined();
    const after = stateMessages(t, read);
    expect(after.get(t.deviceField('tank', 'temperature'))).toBe('51.2');
    expect(after.get(t.deviceField('tank', 'power'))).toBe('None');
  });

  it('without events: no cap, and the page says so', () => {
    const v = viewWith([]);
    expect(v.location.lpcCapKw).toBeUndefined();
    expect(v.devices[0]!.capKw).toBeUndefined();
    expect(renderStatusPage(v, { timezone: 'UTC' })).toContain('No power-limitation (LPC) cap now or coming.');
  });
});
