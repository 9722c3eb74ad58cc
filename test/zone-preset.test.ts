/**
 * A heated zone's preset by command: `{"preset": "away"}` on the zone's `/set` topic is accepted
 * (and nothing else a tank or car takes), persisted with the user's wishes across a restart, and
 * reaches the planner as the band of every slot.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../src/config/load.js';
import { parseCommand } from '../src/ha/commands.js';
import { Wishes } from '../src/jobs/home-state.js';
import { createHomeTracker } from '../src/jobs/home-tracker.js';
import { buildPlanInput } from '../src/jobs/plan-inputs.js';
import { ManualClock } from '../src/clock.js';
import { openStore } from '../src/store/open-store.js';
import { tempDir } from './helpers/temp-dir.js';

const now = Date.UTC(2026, 0, 14, 9);
const config = defaultConfig({
  mqtt: { url: 'mqtt://127.0.0.1:1883' },
  devices: [{ id: 'living', kind: 'zone', switch: { type: 'shelly', topicPrefix: 'shelly-living' }, model: { powerKw: 2 } }],
});
const devices = [{ id: 'living', kind: 'zone' as const }];

describe('a zone preset by command', () => {
  it('is the only thing a zone takes, and only a known preset', () => {
    expect(parseCommand({ kind: 'set', deviceId: 'living' }, '{"preset":"away"}', devices).command).toEqual({ deviceId: 'living', preset: 'away' });
    expect(() => parseCommand({ kind: 'set', deviceId: 'living' }, '{"preset":"party"}', devices)).toThrow(/preset/);
    expect(() => parseCommand({ kind: 'set', deviceId: 'living' }, 'boost', devices)).toThrow(/mode not supported by a zone/);
    expect(() => parseCommand({ kind: 'set', deviceId: 'tank' }, '{"preset":"eco"}', [{ id: 'tank', kind: 'hotWaterTank' }])).toThrow(
      /preset not supported by a hotWaterTank/,
    );
  });

  it('is kept across a restart and plans every slot in its band', () => {
    const path = join(tempDir('wattshift-preset-'), 'state.db');
    const store = openStore({ path });
    new Wishes(store, ['living']).apply({ deviceId: 'living', preset: 'away' }, now);
    store.close();

    const reopened = openStore({ path });
    const wishes = new Wishes(reopened, ['living']);
    expect(wishes.get('living').preset).toBe('away');
    const tracker = createHomeTracker({ config, store: reopened, clock: new ManualClock(now), wishes });
    const snap = tracker.snapshot(now, { forecast: null, advice: null, actual: null }, []);
    expect(snap.zones?.[0]?.preset).toBe('away');
    const bands = buildPlanInput(config, snap, new Map()).zones?.[0]?.band ?? [];
    expect(bands.length).toBeGreaterThan(0);
    expect(new Set(bands.map((b) => `${b.minC}..${b.maxC}`))).toEqual(new Set(['12..16']));
    reopened.close();
  });
});
