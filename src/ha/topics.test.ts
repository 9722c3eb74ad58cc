import { describe, expect, it } from 'vitest';
import { parseCommand } from './commands.js';
import { stateMessages, unknownPayload } from './state.js';
import { haTopics, parseCommandTopic, topicMatches } from './topics.js';
import type { HomeView } from '../view/model.js';

const devices = [
  { id: 'tank', kind: 'hotWaterTank' as const },
  { id: 'ev', kind: 'evCharger' as const },
];

describe('topics', () => {
  it('parses command topics and ignores everything else', () => {
    expect(parseCommandTopic('ws', 'ws/tank/set')).toEqual({ kind: 'set', deviceId: 'tank' });
    expect(parseCommandTopic('ws', 'ws/tank/set/floor')).toEqual({ kind: 'setField', deviceId: 'tank', field: 'floor' });
    expect(parseCommandTopic('ws', 'ws/request/ev/set')).toEqual({ kind: 'request', deviceId: 'ev' });
    expect(parseCommandTopic('ws', 'ws/tank/set/bogus')).toBeNull();
    expect(parseCommandTopic('ws', 'ws/tank/set/__proto__')).toBeNull();
    expect(parseCommandTopic('ws', 'ws/tank')).toBeNull();
    expect(parseCommandTopic('ws', 'ws/response/ev/set')).toBeNull();
    expect(parseCommandTopic('ws', 'other/tank/set')).toBeNull();
    expect(parseCommandTopic('a/b', 'a/b/tank/set')).toEqual({ kind: 'set', deviceId: 'tank' });
  });

  it('matches MQTT wildcards', () => {
    expect(topicMatches('a/+/set', 'a/x/set')).toBe(true);
    expect(topicMatches('a/+/set', 'a/x/y/set')).toBe(false);
    expect(topicMatches('a/#', 'a/x/y')).toBe(true);
    expect(topicMatches('a/b', 'a/b/c')).toBe(false);
  });

  it('rejects unusable base topics', () => {
    for (const bad of ['', '/x', 'x/', 'a/#', 'a/+/b']) expect(() => haTopics(bad)).toThrow(TypeError);
  });
});

describe('command parsing', () => {
  it('accepts a bare mode only on plain /set', () => {
    expect(parseCommand({ kind: 'set', deviceId: 'tank' }, ' boost ', devices).command).toEqual({ deviceId: 'tank', mode: 'boost' });
    expect(() => parseCommand({ kind: 'request', deviceId: 'tank' }, 'boost', devices)).toThrow(/neither JSON/);
  });

  it('accepts the departure format Home Assistant datetime entities send', () => {
    expect(parseCommand({ kind: 'setField', deviceId: 'ev', field: 'departure' }, '2026-03-02T06:30:00+00:00', devices).command).toEqual({
      deviceId: 'ev',
      departure: '2026-03-02T06:30:00+00:00',
    });
    expect(() => parseCommand({ kind: 'setField', deviceId: 'ev', field: 'departure' }, '06:30', devices)).toThrow(/departure/);
  });

  it('turns a boost length alone into a boost', () => {
    expect(parseCommand({ kind: 'setField', deviceId: 'tank', field: 'boost_minutes' }, '30', devices).command).toEqual({
      deviceId: 'tank',
      mode: 'boost',
      boostMinutes: 30,
    });
  });

  it('rejects non-numbers, arrays and fractional boost lengths', () => {
    expect(() => parseCommand({ kind: 'setField', deviceId: 'ev', field: 'target_kwh' }, '1e3', devices)).toThrow(/not a number/);
    expect(() => parseCommand({ kind: 'set', deviceId: 'ev' }, '[1]', devices)).toThrow(/JSON object/);
    expect(() => parseCommand({ kind: 'set', deviceId: 'ev' }, '{"boostMinutes":1.5}', devices)).toThrow(/boostMinutes/);
    expect(() => parseCommand({ kind: 'request', deviceId: 'ev' }, '{"transaction":{},"mode":"off"}', devices)).toThrow(/transaction/);
  });
});

describe('state messages', () => {
  it('publishes unknown values as None and no timestamps that change by themselves', () => {
    const view: HomeView = {
      location: { id: 'l', name: 'L', limitKw: 10 },
      price: null,
      devices: [{ id: 'tank', name: 'T', kind: 'hotWaterTank', available: false, mode: 'off', plannedOn: false }],
      plan: null,
      health: { ok: true, jobs: [] },
      outbox: { pending: 0, accepted: 0, rejected: 0 },
      limits: [],
      events: [],
      nowMs: 1,
    };
    const t = haTopics('ws');
    const a = stateMessages(t, view);
    expect(a.get(t.deviceField('tank', 'temperature'))).toBe(unknownPayload);
    expect(a.get(t.deviceAvailability('tank'))).toBe('offline');
    expect(a.has(t.priceTotal)).toBe(false);
    expect(JSON.parse(a.get(t.plan)!)).toMatchObject({ expected_cost: null, slots: [] });
    expect(stateMessages(t, { ...view, nowMs: 999_999 })).toEqual(a);
  });
});
