import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { normaliseNotification } from './event-normalise.js';
import { normaliseEvent, parseApiTimeMs, parseIncoming, parseTimeSpanMs, type Identity } from './event-normalise.js';
import { verifySignature } from './webhook-signature.js';

const me: Identity = {
  userId: 'user-1',
  locationId: 'home-1',
  resources: new Map([
    ['res-tank', 'tank'],
    ['res-ev', 'charger'],
  ]),
  meterPointIds: ['707057500000000011'],
};

const dataDir = fileURLToPath(new URL('../../spec/webhook-test-data/', import.meta.url));
const fixture = (name: string): Buffer => readFileSync(dataDir + name);

const priceCurve = (targets: { resourceId: string; locationId: string }[], resolution: string | null = '01:00:00') => ({
  id: 'ev-price',
  createdAt: '2025-10-24T11:05:00Z',
  payload: {
    payloadType: 'PriceCurve',
    priceArea: 'NO1',
    targets,
    priceCurveDelta: {
      currency: 'NOK',
      energyUnit: 'kWh',
      resolution,
      points: [
        { price: -0.5, timestamp: '2025-10-25T00:00:00Z' },
        { price: 0.25, timestamp: '2025-10-25T01:00:00' },
      ],
    },
  },
});

describe('parseApiTimeMs', () => {
  it('reads UTC with and without an offset, and other offsets', () => {
    const t = Date.UTC(2025, 9, 25, 1);
    expect(parseApiTimeMs('2025-10-25T01:00:00Z')).toBe(t);
    expect(parseApiTimeMs('2025-10-25T01:00:00')).toBe(t);
    expect(parseApiTimeMs('2025-10-25T01:00:00.000')).toBe(t);
    expect(parseApiTimeMs('2025-10-25T03:00:00+02:00')).toBe(t);
    expect(parseApiTimeMs('2025-10-25T03:00:00+0200')).toBe(t);
    expect(parseApiTimeMs('2025-10-25T01:00:00.1936858+00:00')).toBe(t + 193);
  });
  it('throws on text that is no timestamp', () => {
    expect(() => parseApiTimeMs('yesterday')).toThrow(/not a timestamp/);
    expect(() => parseApiTimeMs('')).toThrow();
  });
});

describe('parseTimeSpanMs', () => {
  it('reads the .NET TimeSpan forms', () => {
    expect(parseTimeSpanMs('01:00:00')).toBe(3_600_000);
    expect(parseTimeSpanMs('00:15:00')).toBe(900_000);
    expect(parseTimeSpanMs('1:30:00')).toBe(5_400_000);
    expect(parseTimeSpanMs('1.00:00:00')).toBe(86_400_000);
    expect(parseTimeSpanMs('2.01:00:05')).toBe((49 * 3600 + 5) * 1000);
    expect(parseTimeSpanMs('00:30:00.0000000')).toBe(1_800_000);
  });
  it('falls back to an hour when absent, zero or unreadable', () => {
    for (const t of [null, undefined, '', '00:00:00', 'PT1H', '1h', '01:00', '-01:00:00']) expect(parseTimeSpanMs(t)).toBe(3_600_000);
  });
});

describe('price curves', () => {
  it('keeps the points of targets that are ours, one delta per target and point', () => {
    const e = normaliseEvent(
      priceCurve([
        { resourceId: 'res-tank', locationId: 'home-1' },
        { resourceId: 'res-other', locationId: 'home-9' },
      ]) as never,
      me,
    );
    expect(e).toMatchObject({ id: 'ev-price', payloadType: 'PriceCurve', relevant: true, createdAtMs: Date.UTC(2025, 9, 24, 11, 5) });
    expect(e.startMs).toBe(Date.UTC(2025, 9, 25, 0));
    expect(e.endMs).toBe(Date.UTC(2025, 9, 25, 2));
    expect(e.resourceIds).toEqual(['res-tank']);
    expect(e.locationIds).toEqual(['home-1']);
    expect(e.priceDeltas).toEqual([
      { startMs: Date.UTC(2025, 9, 25, 0), durationMs: 3_600_000, price: -0.5, currency: 'NOK', energyUnit: 'kWh', resourceId: 'res-tank' },
      { startMs: Date.UTC(2025, 9, 25, 1), durationMs: 3_600_000, price: 0.25, currency: 'NOK', energyUnit: 'kWh', resourceId: 'res-tank' },
    ]);
    expect(e.lpcCaps).toEqual([]);
  });
  it('accepts a target of our behind-the-meter location with any resource id', () => {
    const e = normaliseEvent(priceCurve([{ resourceId: 'whatever', locationId: 'home-1' }], '00:15:00') as never, me);
    expect(e.relevant).toBe(true);
    expect(e.priceDeltas.map((p) => p.durationMs)).toEqual([900_000, 900_000]);
    expect(e.endMs).toBe(Date.UTC(2025, 9, 25, 1, 15));
  });
  it('ignores a curve for other homes, keeping nothing of it', () => {
    const e = normaliseEvent(priceCurve([{ resourceId: 'res-x', locationId: 'home-9' }]) as never, me);
    expect(e).toMatchObject({ relevant: false, priceDeltas: [], resourceIds: [], locationIds: [] });
  });
  it('defaults currency and unit when the curve omits them', () => {
    const ev = priceCurve([{ resourceId: 'res-ev', locationId: 'home-1' }]);
    const delta = ev.payload.priceCurveDelta as Record<string, unknown>;
    delete delta.currency;
    delete delta.energyUnit;
    const e = parseIncoming(ev, 'event', me);
    expect(e.priceDeltas[0]).toMatchObject({ currency: 'EUR', energyUnit: 'kWh', resourceId: 'res-ev' });
  });
});

describe('LPC events', () => {
  const resourceLpc = {
    id: 'ev-rlpc',
    createdAt: '2025-10-25T08:00:00',
    payload: {
      payloadType: 'ResourceLPC',
      targets: [
        {
          resourceId: 'res-ev',
          locationId: 'home-1',
          meterPointId: 'mp',
          resolution: '00:30:00',
          points: [
            { timestamp: '2025-10-25T10:00:00Z', maxPowerInKiloWatts: 3.5 },
            { timestamp: null, maxPowerInKiloWatts: 1 },
            { timestamp: '2025-10-25T10:30:00Z', maxPowerInKiloWatts: null },
            { timestamp: '2025-10-25T10:30:00', maxPowerInKiloWatts: 0 },
          ],
        },
        {
          resourceId: 'res-foreign',
          locationId: 'home-1',
          resolution: '01:00:00',
          points: [{ timestamp: '2025-10-25T09:00:00Z', maxPowerInKiloWatts: 1 }],
        },
      ],
    },
  };
  it('keeps caps of our resources only, skipping points without time or value', () => {
    const e = parseIncoming(resourceLpc, 'event', me);
    expect(e).toMatchObject({ payloadType: 'ResourceLPC', relevant: true, resourceIds: ['res-ev'], locationIds: ['home-1'] });
    expect(e.createdAtMs).toBe(Date.UTC(2025, 9, 25, 8));
    expect(e.lpcCaps).toEqual([
      { startMs: Date.UTC(2025, 9, 25, 10), durationMs: 1_800_000, maxKw: 3.5, resourceId: 'res-ev', locationId: 'home-1', meterPointId: 'mp' },
      { startMs: Date.UTC(2025, 9, 25, 10, 30), durationMs: 1_800_000, maxKw: 0, resourceId: 'res-ev', locationId: 'home-1', meterPointId: 'mp' },
    ]);
    expect([e.startMs, e.endMs]).toEqual([Date.UTC(2025, 9, 25, 10), Date.UTC(2025, 9, 25, 11)]);
  });
  it('keeps a location cap of our location, ignores other locations', () => {
    const ev = {
      id: 'ev-llpc',
      payload: {
        payloadType: 'LocationLPC',
        targets: [
          {
            locationId: 'home-1',
            meterPointId: null,
            resolution: '01:00:00',
            points: [{ timestamp: '2025-10-25T17:00:00Z', maxPowerInKiloWatts: 2 }],
          },
          { locationId: 'home-2', resolution: '01:00:00', points: [{ timestamp: '2025-10-25T17:00:00Z', maxPowerInKiloWatts: 1 }] },
        ],
      },
    };
    const e = parseIncoming(ev, 'event', me);
    expect(e.createdAtMs).toBe(0);
    expect(e.lpcCaps).toEqual([
      { startMs: Date.UTC(2025, 9, 25, 17), durationMs: 3_600_000, maxKw: 2, resourceId: null, locationId: 'home-1', meterPointId: null },
    ]);
    expect(e.resourceIds).toEqual([]);
    const other = parseIncoming({ ...ev, payload: { ...ev.payload, targets: [ev.payload.targets[1]] } }, 'event', me);
    expect(other).toMatchObject({ relevant: false, lpcCaps: [], startMs: null, endMs: null });
  });
});

describe('eligibility, unknown and malformed payloads', () => {
  const elig = (added: string[] | null, removed: string[] | null) => ({
    id: 'ev-el',
    createdAt: '2025-10-25T08:00:00Z',
    payload: { payloadType: 'UserEligibility', lastUpdated: '2025-10-25T08:00:00Z', addedUsers: added, removedUsers: removed },
  });
  it('is relevant only when our user was added or removed', () => {
    expect(parseIncoming(elig(['user-1'], []), 'event', me)).toMatchObject({ relevant: true, eligibility: { added: true, removed: false } });
    expect(parseIncoming(elig([], ['user-1']), 'event', me)).toMatchObject({ relevant: true, eligibility: { added: false, removed: true } });
    expect(parseIncoming(elig(['x'], null), 'event', me)).toMatchObject({ relevant: false, eligibility: { added: false, removed: false } });
    expect(parseIncoming(elig(['user-1'], null), 'event', { ...me, userId: null })).toMatchObject({ relevant: false });
  });
  it('keeps unknown types and payload-less events as not relevant', () => {
    const u = parseIncoming({ id: 'ev-u', payload: { payloadType: 'SolarForecast', stuff: [1] } }, 'event', me);
    expect(u).toMatchObject({ payloadType: 'SolarForecast', relevant: false, startMs: null, priceDeltas: [], lpcCaps: [], eligibility: null });
    expect(parseIncoming({ id: 'ev-n', payload: null }, 'event', me)).toMatchObject({ payloadType: 'Unknown', relevant: false });
    const r = parseIncoming({ id: 'ev-r', payload: { payloadType: 'LPCReservation', targets: [] } }, 'event', me);
    expect(r).toMatchObject({ payloadType: 'LPCReservation', relevant: false });
  });
  it('reads an LPCReservation for this location as reserved caps, not as caps to acknowledge', () => {
    const target = (locationId: string) => ({
      locationId,
      meterPointId: '707057500000000011',
      resolution: '01:00:00',
      points: [
        { maxPowerInKiloWatts: 1.5, timestamp: '2025-10-25T17:00:00Z' },
        { maxPowerInKiloWatts: 1.5, timestamp: '2025-10-25T18:00:00Z' },
      ],
    });
    const r = parseIncoming(
      { id: 'ev-res', payload: { payloadType: 'LPCReservation', targets: [target('home-1'), target('elsewhere')] } },
      'event',
      me,
    );
    const at17 = Date.UTC(2025, 9, 25, 17);
    expect(r).toMatchObject({
      payloadType: 'LPCReservation',
      relevant: true,
      lpcCaps: [],
      startMs: at17,
      endMs: at17 + 2 * 3_600_000,
      locationIds: ['home-1'],
    });
    expect(r.lpcReservations).toEqual([
      { startMs: at17, durationMs: 3_600_000, maxKw: 1.5, resourceId: null, locationId: 'home-1', meterPointId: '707057500000000011' },
      { startMs: at17 + 3_600_000, durationMs: 3_600_000, maxKw: 1.5, resourceId: null, locationId: 'home-1', meterPointId: '707057500000000011' },
    ]);
  });
  it('throws on malformed input of a known type or shape', () => {
    expect(() => parseIncoming({ id: 'x', payload: { payloadType: 'PriceCurve', targets: 'no' } }, 'event', me)).toThrow();
    expect(() => parseIncoming({ payload: null }, 'event', me)).toThrow();
    expect(() => parseIncoming('text', 'event', me)).toThrow();
    expect(() => parseIncoming({ eventId: 'e' }, 'notification', me)).toThrow();
  });
});

describe('the signed webhook test bodies', () => {
  it('verify with the published key and normalise', () => {
    const key = fixture('signing-key.txt').toString('utf8').trim();
    const body = fixture('price-curve-event.json');
    const sig = fixture('price-curve-event.json.hmacsha256b64').toString('utf8').trim();
    expect(verifySignature(body, sig, key)).toBe(true);
    const e = parseIncoming(JSON.parse(body.toString('utf8')), 'notification', me);
    // No targets: a curve for nobody in particular is kept but not acted on.
    expect(e).toMatchObject({
      id: '1cc9ea41-59a4-453e-8c3a-2385b900a0a9',
      notificationType: 'PriceCurveCreated',
      payloadType: 'PriceCurve',
      relevant: false,
    });
    expect(e.createdAtMs).toBe(Date.UTC(2000, 0, 1));
    expect(e.startMs).toBe(Date.parse('2024-09-12T13:48:47.193Z'));
  });
  it('eligibility body: our user added, or removed', () => {
    const body = fixture('user-eligibility-event.json');
    const sig = fixture('user-eligibility-event.json.hmacsha256b64').toString('utf8').trim();
    expect(verifySignature(body, sig, fixture('signing-key.txt').toString('utf8').trim())).toBe(true);
    const raw = JSON.parse(body.toString('utf8')) as Parameters<typeof normaliseNotification>[0];
    const added = parseIncoming(raw, 'notification', { ...me, userId: '6d263c2b-2074-4146-121f-67d702a6d9a6' });
    expect(added).toMatchObject({ notificationType: 'UserEligibilityUpdated', relevant: true, eligibility: { added: true, removed: false } });
    const removed = parseIncoming(raw, 'notification', { ...me, userId: 'cc7f94bd-5888-6abb-ce63-cce87228bc33' });
    expect(removed.eligibility).toEqual({ added: false, removed: true });
    expect(parseIncoming(raw, 'notification', me).relevant).toBe(false);
  });
});
