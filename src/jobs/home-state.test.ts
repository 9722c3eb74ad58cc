import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../store/index.js';
import { applyCommand, Wishes, type DeviceWishes } from './home-state.js';

const none: DeviceWishes = { mode: 'auto', boostUntilMs: null, floorC: null, departureMs: null, targetKwh: null, targetSocPct: null };
const t0 = Date.UTC(2025, 9, 25, 10);

describe('applyCommand', () => {
  it('boost with minutes, with the default, and by minutes alone', () => {
    expect(applyCommand(none, { deviceId: 'tank', mode: 'boost', boostMinutes: 30 }, t0)).toEqual({
      ...none,
      mode: 'boost',
      boostUntilMs: t0 + 30 * 60_000,
    });
    expect(applyCommand(none, { deviceId: 'tank', mode: 'boost' }, t0)).toEqual({ ...none, mode: 'boost', boostUntilMs: t0 + 60 * 60_000 });
    expect(applyCommand(none, { deviceId: 'tank', mode: 'boost' }, t0, 15).boostUntilMs).toBe(t0 + 15 * 60_000);
    expect(applyCommand(none, { deviceId: 'tank', boostMinutes: 45 }, t0)).toEqual({ ...none, mode: 'boost', boostUntilMs: t0 + 45 * 60_000 });
  });
  it('another mode ends a boost', () => {
    const boosted = applyCommand(none, { deviceId: 'tank', mode: 'boost' }, t0);
    expect(applyCommand(boosted, { deviceId: 'tank', mode: 'off' }, t0 + 1)).toEqual({ ...none, mode: 'off' });
    expect(applyCommand(boosted, { deviceId: 'tank', mode: 'auto' }, t0 + 1)).toEqual(none);
  });
  it('sets floor, departure and targets, leaving the rest', () => {
    const w = applyCommand(none, { deviceId: 'ev', departure: '2025-10-26T07:30:00+01:00', targetKwh: 20, targetSocPct: 80 }, t0);
    expect(w).toEqual({ ...none, departureMs: Date.UTC(2025, 9, 26, 6, 30), targetKwh: 20, targetSocPct: 80 });
    const f = applyCommand(w, { deviceId: 'ev', floorC: 45 }, t0);
    expect(f).toEqual({ ...w, floorC: 45 });
    expect(w.floorC).toBeNull(); // not mutated
  });
});

describe('Wishes', () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ws-wishes-'));
    store = openStore({ path: join(dir, 'db.sqlite') });
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts with no wishes; a boost is in force until it runs out, then auto', () => {
    const w = new Wishes(store, ['tank']);
    expect(w.get('tank')).toEqual(none);
    expect(w.intent('tank', t0)).toEqual({ mode: 'auto', boostUntilMs: null });
    w.apply({ deviceId: 'tank', mode: 'boost', boostMinutes: 20 }, t0);
    const until = t0 + 20 * 60_000;
    expect(w.intent('tank', t0 + 1)).toEqual({ mode: 'boost', boostUntilMs: until });
    expect(w.intent('tank', until - 1)).toEqual({ mode: 'boost', boostUntilMs: until });
    expect(w.intent('tank', until)).toEqual({ mode: 'auto', boostUntilMs: null });
    w.apply({ deviceId: 'tank', mode: 'off' }, t0);
    expect(w.intent('tank', until + 1)).toEqual({ mode: 'off', boostUntilMs: null });
  });

  it('keeps wishes across a new instance and a reopened store, per device', () => {
    const w = new Wishes(store, ['tank', 'ev']);
    w.apply({ deviceId: 'tank', mode: 'boost', boostMinutes: 90 }, t0);
    w.apply({ deviceId: 'tank', floorC: 50 }, t0);
    w.apply({ deviceId: 'ev', departure: '2025-10-26T06:00:00Z', targetSocPct: 90 }, t0);
    store.close();
    store = openStore({ path: join(dir, 'db.sqlite') });
    const again = new Wishes(store, ['tank', 'ev', 'new-device']);
    expect(again.get('tank')).toEqual({ ...none, mode: 'boost', boostUntilMs: t0 + 90 * 60_000, floorC: 50 });
    expect(again.get('ev')).toEqual({ ...none, departureMs: Date.UTC(2025, 9, 26, 6), targetSocPct: 90 });
    expect(again.get('new-device')).toEqual(none);
    expect(again.intent('tank', t0 + 60 * 60_000).mode).toBe('boost');
    // An unknown device id reads as no wishes.
    expect(again.get('ghost')).toEqual(none);
  });

  it('an unreadable departure or boost length changes nothing and never breaks the next start', () => {
    const w = new Wishes(store, ['ev']);
    w.apply({ deviceId: 'ev', departure: '2025-10-26T06:00:00Z' }, t0);
    w.apply({ deviceId: 'ev', departure: 'tomorrow-ish' }, t0);
    w.apply({ deviceId: 'ev', boostMinutes: Number.NaN }, t0);
    expect(w.get('ev')).toEqual({ ...none, departureMs: Date.UTC(2025, 9, 26, 6) });
    expect(new Wishes(store, ['ev']).get('ev')).toEqual({ ...none, departureMs: Date.UTC(2025, 9, 26, 6) });
  });
});
