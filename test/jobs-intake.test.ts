/** The event intake against a real SQLite store: stored before acted on, deduped, ignored kept. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { createLogger } from '../src/log.js';
import { WattshiftError } from '../src/errors.js';
import { openStore, type Store } from '../src/store/index.js';
import { createEventIntake } from '../src/jobs/event-intake.js';
import type { HomeEvent, Identity } from '../src/spark/event-normalise.js';

const me: Identity = { userId: 'user-1', locationId: 'home-1', resources: new Map([['res-tank', 'tank']]), meterPointIds: [] };
const t0 = Date.UTC(2025, 9, 25, 11, 10);

const curve = (id: string, resourceId = 'res-tank', locationId = 'home-1') => ({
  id,
  createdAt: '2025-10-25T11:05:00Z',
  payload: {
    payloadType: 'PriceCurve',
    priceArea: 'NO1',
    targets: [{ resourceId, locationId }],
    priceCurveDelta: { currency: 'NOK', energyUnit: 'kWh', resolution: '01:00:00', points: [{ price: -1, timestamp: '2025-10-26T02:00:00' }] },
  },
});

let dir: string;
let store: Store;
let lines: Record<string, unknown>[];
let seen: { event: HomeEvent; storedState: string | undefined }[];
let throwInOnEvent: Error | null;

const makeIntake = () =>
  createEventIntake({
    store,
    identity: () => me,
    clock: new ManualClock(t0),
    logger: createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } }),
    onEvent: (event) => {
      seen.push({ event, storedState: store.getEvent(event.id)?.state });
      if (throwInOnEvent) throw throwInOnEvent;
    },
  });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ws-intake-'));
  store = openStore({ path: join(dir, 'db.sqlite') });
  lines = [];
  seen = [];
  throwInOnEvent = null;
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('event intake', () => {
  it('stores a relevant event before handing it on, with its span and targets', () => {
    const intake = makeIntake();
    const r = intake.accept(curve('e1'), 'event');
    expect(r.outcome).toBe('new');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.storedState).toBe('received');
    const row = store.getEvent('e1');
    expect(row).toMatchObject({
      payloadType: 'PriceCurve',
      notificationType: null,
      state: 'received',
      receivedAtMs: t0,
      createdAtMs: Date.UTC(2025, 9, 25, 11, 5),
      startMs: Date.UTC(2025, 9, 26, 2),
      endMs: Date.UTC(2025, 9, 26, 3),
      resourceIds: ['res-tank'],
      locationIds: ['home-1'],
    });
    expect(row?.raw).toEqual(curve('e1'));
  });

  it('keeps the raw JSON exactly as received when given', () => {
    const rawJson = ` ${JSON.stringify(curve('e-raw'))}\n`;
    makeIntake().accept(JSON.parse(rawJson), 'event', rawJson);
    expect(store.getEvent('e-raw')?.rawJson).toBe(rawJson);
  });

  it('dedupes by event id: stored once, acted on once, also across a restart', () => {
    const intake = makeIntake();
    expect(intake.accept(curve('e1'), 'event').outcome).toBe('new');
    expect(intake.accept(curve('e1'), 'event').outcome).toBe('duplicate');
    const notification = {
      notificationId: 'n1',
      eventId: 'e1',
      eventCreatedAtUtc: '2025-10-25T11:05:00Z',
      notificationSentUtc: '2025-10-25T11:06:00Z',
      notificationType: 'PriceCurveCreated',
      payload: curve('e1').payload,
    };
    expect(intake.accept(notification, 'notification').outcome).toBe('duplicate');
    store.close();
    store = openStore({ path: join(dir, 'db.sqlite') });
    expect(makeIntake().accept(curve('e1'), 'event').outcome).toBe('duplicate');
    expect(seen).toHaveLength(1);
    expect(store.listEvents()).toHaveLength(1);
  });

  it('stores events for other homes and unknown types as ignored, without acting', () => {
    const intake = makeIntake();
    expect(intake.accept(curve('e-other', 'res-x', 'home-9'), 'event').outcome).toBe('ignored');
    expect(intake.accept({ id: 'e-unknown', payload: { payloadType: 'Mystery', x: 1 } }, 'event').outcome).toBe('ignored');
    expect(seen).toEqual([]);
    expect(store.getEvent('e-other')?.state).toBe('ignored');
    expect(store.getEvent('e-unknown')).toMatchObject({ state: 'ignored', payloadType: 'Mystery' });
    const msgs = lines.map((l) => l.msg);
    expect(msgs).toContain('event for other targets ignored');
    expect(msgs).toContain('event of unknown type kept');
  });

  it('malformed input is invalid and leaves no row', () => {
    const intake = makeIntake();
    const bad: unknown[] = [
      null,
      'text',
      42,
      [],
      {},
      { id: 7 },
      { id: '' },
      { eventId: 'x' },
      { id: 'b1', payload: { payloadType: 'PriceCurve', targets: [] } },
      { id: 'b2', createdAt: 'not a date', payload: null },
      {
        id: 'b3',
        payload: {
          payloadType: 'LocationLPC',
          targets: [{ locationId: 'home-1', resolution: '01:00:00', points: [{ timestamp: 'soon', maxPowerInKiloWatts: 1 }] }],
        },
      },
    ];
    for (const raw of bad) expect(intake.accept(raw, 'event').outcome, JSON.stringify(raw)).toBe('invalid');
    expect(intake.accept({ notificationId: 'n', eventId: '' }, 'notification').outcome).toBe('invalid');
    expect(store.listEvents()).toEqual([]);
    expect(seen).toEqual([]);
    expect(lines.filter((l) => l.code === 'API_BAD_RESPONSE').length).toBeGreaterThanOrEqual(bad.length);
  });

  it('a failing action is logged; the event stays stored as received for a later scan', () => {
    throwInOnEvent = new WattshiftError('INTERNAL', 'boom');
    const r = makeIntake().accept(curve('e-fail'), 'event');
    expect(r.outcome).toBe('new');
    expect(store.getEvent('e-fail')?.state).toBe('received');
    expect(lines.some((l) => l.level === 'error' && l.code === 'INTERNAL')).toBe(true);
  });

  it('a store failure is "unstored": acted on in memory, logged STORE_FAILED, and not stored', () => {
    store.close();
    const acted: HomeEvent[] = [];
    const intake = createEventIntake({
      store,
      identity: () => me,
      clock: new ManualClock(t0),
      logger: createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } }),
      onEvent: (event, stored) => {
        expect(stored).toBe(false);
        acted.push(event);
      },
    });
    expect(intake.accept(curve('e1'), 'event').outcome).toBe('unstored');
    expect(acted.map((e) => e.id)).toEqual(['e1']);
    expect(lines.some((l) => l.level === 'error' && l.code === 'STORE_FAILED')).toBe(true);
    store = openStore({ path: join(dir, 'db.sqlite') });
    expect(store.hasEvent('e1')).toBe(false);
  });

  const hostile: [string, Record<string, unknown>][] = [
    ['a price of 1e308', { price: 1e308 }],
    ['a price of -1e308', { price: -1e308 }],
    ['a resolution of 36,500 days', { resolution: '36500.00:00:00' }],
    ['a timestamp in year 9999', { timestamp: '9999-01-01T00:00:00Z' }],
  ];
  it.each(hostile)('a price curve with %s is stored, refused (EVENT_OUT_OF_RANGE) and never acted on', (_name, patch) => {
    const intake = makeIntake();
    const ev = curve('e-bad');
    const d = ev.payload.priceCurveDelta as Record<string, unknown>;
    const point = { ...(d['points'] as Record<string, unknown>[])[0], ...patch };
    delete point['resolution'];
    Object.assign(d, 'resolution' in patch ? { resolution: patch['resolution'] } : {}, { points: [point] });
    expect(intake.accept(ev, 'event').outcome).toBe('refused');
    expect(store.getEvent('e-bad')?.state).toBe('ignored');
    expect(seen).toEqual([]);
    expect(lines.some((l) => l.code === 'EVENT_OUT_OF_RANGE')).toBe(true);
  });

  it('an LPC with a negative cap, or 3,000 points, is refused; a 0 kW cap within bounds is taken', () => {
    const intake = makeIntake();
    const lpc = (id: string, points: { timestamp: string; maxPowerInKiloWatts: number }[]) => ({
      id,
      createdAt: '2025-10-25T11:05:00Z',
      payload: { payloadType: 'LocationLPC', targets: [{ locationId: 'home-1', resolution: '01:00:00', points }] },
    });
    const hour = (h: number) => new Date(Date.UTC(2025, 9, 26) + h * 3_600_000).toISOString();
    expect(intake.accept(lpc('l-neg', [{ timestamp: hour(1), maxPowerInKiloWatts: -5 }]), 'event').outcome).toBe('refused');
    const many = Array.from({ length: 3000 }, (_, h) => ({ timestamp: hour(h % 700), maxPowerInKiloWatts: 1 }));
    expect(intake.accept(lpc('l-many', many), 'event').outcome).toBe('refused');
    expect(intake.accept(lpc('l-ok', [{ timestamp: hour(1), maxPowerInKiloWatts: 0 }]), 'event').outcome).toBe('new');
    expect(seen.map((x) => x.event.id)).toEqual(['l-ok']);
  });
});
