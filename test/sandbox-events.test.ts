import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { dailyIncentiveCurve } from '../src/sandbox/price-curves.js';
import { startSandbox, type Sandbox } from '../src/sandbox/server.js';
import { hoursOfLocalDay, localDayStartMs, localTimeToUtcMs } from '../src/core/zoned-time.js';
import { auditResponses, checkResponse, validateComponent, type ResponseAudit } from './helpers/openapi-validate.js';
import { api, fetchToken } from './fixtures/sandbox/raw-client.js';

// Saturday 2025-10-25 11:03 Oslo; the next day has 25 hours (DST ends).
const start = Date.UTC(2025, 9, 25, 9, 3);
let sb: Sandbox;
let clock: ManualClock;
let audit: ResponseAudit;
let call: ReturnType<typeof api>;
type Ev = { id: string; payload: Record<string, unknown> & { payloadType: string } };
const events = async (): Promise<Ev[]> => ((await call('GET', '/events?pageSize=1000')).json as { events: Ev[] }).events;
const eligible = async (): Promise<string[]> =>
  ((await call('GET', '/users/eligible')).json as { users: { userId: string }[] }).users.map((u) => u.userId);

beforeAll(async () => {
  clock = new ManualClock(start);
  sb = await startSandbox({ clock, autoTick: false, seed: 7 });
  audit = auditResponses(sb);
  call = api(sb, await fetchToken(sb));
});
afterAll(() => sb.close());
afterEach(() => expect(audit.failures).toEqual([]));

describe('the validator itself', () => {
  it('fails bodies that break the document', () => {
    const base = { method: 'GET', path: '/energy-coordination/v1/users/u1', status: 200, headers: { 'content-type': 'application/json' } };
    expect(checkResponse({ ...base, body: '{"userId":"u1"}' })).toEqual([]);
    expect(checkResponse({ ...base, body: '{"userId":1}' })).not.toEqual([]);
    expect(checkResponse({ ...base, body: '{"userId":"u1","extra":1}' })).not.toEqual([]);
    expect(checkResponse({ ...base, status: 418, body: '' })).not.toEqual([]);
    expect(checkResponse({ ...base, status: 404, body: '"x"' })).not.toEqual([]);
    expect(
      validateComponent('EventNotification', {
        notificationId: 'n',
        eventId: 'e',
        eventCreatedAtUtc: 'yesterday',
        notificationSentUtc: '2025-01-01T00:00:00+00:00',
        notificationType: 'PriceCurveCreated',
        payload: { payloadType: 'UserEligibility', lastUpdated: '2025-01-01T00:00:00+00:00', addedUsers: [], removedUsers: [] },
      }),
    ).not.toEqual([]);
  });
});

describe('eligibility batch', () => {
  it('publishes changes once per window with added and removed users', async () => {
    await call('POST', '/users', { userId: 'alice' });
    await call('POST', '/users', { userId: 'bob' });
    await call('POST', '/users/alice/locations', { locationId: 'home-a', coordinates: { latitude: 78.22094, longitude: 15.61946 } });
    await call('POST', '/users/bob/locations', { locationId: 'home-b', meterPointIds: ['707057500000000011'] });
    await sb.tick();
    expect(await eligible()).toEqual([]);
    expect((await call('GET', '/users/alice/eligibility')).json).toEqual({ userId: 'alice', isEligible: false });
    await clock.advance(7 * 60_000); // 09:10 UTC, the window's end
    await sb.tick();
    expect((await eligible()).sort()).toEqual(['alice', 'bob']);
    let ev = (await events()).filter((e) => e.payload.payloadType === 'UserEligibility');
    expect(ev).toHaveLength(1);
    expect(ev[0]?.payload).toMatchObject({ addedUsers: expect.arrayContaining(['alice', 'bob']), removedUsers: [] });
    // Two changes in one window collapse into one event.
    await call('PATCH', '/users/bob/locations/home-b', { meterPointIds: ['999'] });
    await call('POST', '/users', { userId: 'carol' });
    await call('POST', '/users/carol/locations', { locationId: 'home-c', coordinates: { latitude: 78.18, longitude: 15.9 } });
    await clock.advance(10 * 60_000);
    await sb.tick();
    ev = (await events()).filter((e) => e.payload.payloadType === 'UserEligibility');
    expect(ev).toHaveLength(2);
    expect(ev[0]?.payload).toMatchObject({ addedUsers: ['carol'], removedUsers: ['bob'] });
    // A change that changes nothing publishes nothing.
    await call('PATCH', '/users/alice/locations/home-a', { locationType: 'Residential' });
    await clock.advance(10 * 60_000);
    await sb.tick();
    expect((await events()).filter((e) => e.payload.payloadType === 'UserEligibility')).toHaveLength(2);
    expect((await call('GET', '/meters/707057500000000011/eligible')).json).toEqual({ meterPointId: '707057500000000011', isEligible: true });
    expect((await call('GET', '/meters/123/eligible')).json).toEqual({ meterPointId: '123', isEligible: false });
  });
});

describe('simulation endpoints', () => {
  it('accept both path casings, list and change no eligibility', async () => {
    const before = await eligible();
    for (const path of ['/simulation/events/priceCurve', '/simulation/events/pricecurve']) {
      const res = await call('POST', path, {});
      expect(res.status).toBe(200);
      expect((res.json as { simulatedEvent: Ev }).simulatedEvent.payload.payloadType).toBe('PriceCurve');
    }
    for (const path of ['/simulation/events/userEligibility', '/simulation/events/usereligibility']) {
      expect((await call('POST', path)).status).toBe(200);
    }
    const lpc = await call('POST', '/simulation/events/lpc/locations', {
      locations: [
        {
          location: { locationId: 'home-a', meterPointId: '707057500000000001' },
          points: [{ maxPowerInKiloWatts: 0, timestamp: '2025-10-25T12:00:00Z' }],
        },
      ],
    });
    expect((lpc.json as { simulatedEvent: Ev }).simulatedEvent.payload).toMatchObject({
      payloadType: 'LocationLPC',
      targets: [{ locationId: 'home-a', resolution: '01:00:00' }],
    });
    const reservation = await call('POST', '/simulation/events/lpc/Reservations', {
      locations: [
        {
          location: { locationId: 'home-a', meterPointId: '707057500000000001' },
          points: [{ maxPowerInKiloWatts: 1, timestamp: '2025-10-25T17:00:00Z' }],
        },
      ],
    });
    expect((reservation.json as { simulatedEvent: Ev }).simulatedEvent.payload).toMatchObject({
      payloadType: 'LPCReservation',
      targets: [{ locationId: 'home-a', resolution: '01:00:00' }],
    });
    // Left-out points start three whole hours on (11:03 Oslo is 09:03 UTC: 13:00 UTC).
    const byDefault = await call('POST', '/simulation/events/lpc/reservations', { locations: [{ location: { locationId: 'home-a' } }] });
    expect(
      (byDefault.json as { simulatedEvent: { payload: { targets: { points: { timestamp: string }[] }[] } } }).simulatedEvent.payload.targets[0]
        ?.points[0]?.timestamp,
    ).toBe('2025-10-25T13:00:00+00:00');
    expect((await call('POST', '/simulation/events/lpc/resources', {})).status).toBe(200);
    expect((await call('POST', '/simulation/events/pricecurve', { priceArea: 'XX1' })).status).toBe(400);
    expect(await eligible()).toEqual(before);
    const list = await events();
    expect(list[0]?.payload.payloadType).toBe('ResourceLPC'); // newest first
    expect((await call('GET', `/events/${list[0]?.id}`)).status).toBe(200);
    expect((await call('GET', '/events/nope')).status).toBe(404);
  });
});

describe('daily price curve, reports and compensation', () => {
  let curve: Ev;
  it('creates the curve at 13:00 Oslo for the next local day (25 h) for eligible, enrolled users', async () => {
    await call('POST', '/users/alice/locations/home-a/resources', { resourceId: 'tank-a', resourceType: 'HotWaterTank' });
    await call('POST', '/users/alice/vehicles', { resourceId: 'car-a', resourceType: 'Vehicle' });
    await call('POST', '/users/carol/locations/home-c/resources', { resourceId: 'tank-c', resourceType: 'HotWaterTank' });
    expect((await call('POST', '/users/alice/enrollment')).json).toMatchObject({ isEnrolled: true, userId: 'alice' });
    expect((await call('GET', '/users/carol/enrollment')).json).toMatchObject({ isEnrolled: false, enrollmentId: null });
    clock.set(Date.UTC(2025, 9, 25, 10, 59));
    call = api(sb, await fetchToken(sb)); // the clock jumped past the token's expiry
    await sb.tick();
    expect((await events()).filter((e) => e.payload.payloadType === 'PriceCurve')).toHaveLength(2); // the simulated ones
    clock.set(Date.UTC(2025, 9, 25, 11, 0));
    await sb.tick();
    const curves = (await events()).filter((e) => e.payload.payloadType === 'PriceCurve');
    expect(curves).toHaveLength(3);
    curve = curves[0] as Ev;
    const p = curve.payload as unknown as {
      targets: { resourceId: string; locationId: string }[];
      priceArea: string;
      priceCurveDelta: { points: { price: number; timestamp: string }[]; currency: string; resolution: string };
    };
    expect(p.targets).toEqual([
      { resourceId: 'tank-a', locationId: 'home-a' },
      { resourceId: 'car-a', locationId: 'home-a' },
    ]);
    expect(p.priceArea).toBe('NO4');
    expect(p.priceCurveDelta.currency).toBe('NOK');
    expect(p.priceCurveDelta.resolution).toBe('01:00:00');
    const from = Date.UTC(2025, 9, 25, 22);
    const to = Date.UTC(2025, 9, 26, 23); // 25 hours later
    const ts = p.priceCurveDelta.points.map((x) => Date.parse(x.timestamp));
    expect(ts.every((t) => t % 3_600_000 === 0 && t >= from && t < to)).toBe(true);
    expect(p.priceCurveDelta.points.every((x) => x.price !== 0)).toBe(true);
    expect(p.priceCurveDelta.points.some((x) => x.price < 0)).toBe(true);
    expect(ts.length).toBeLessThan(25);
    await clock.advance(3_600_000);
    call = api(sb, await fetchToken(sb));
    await sb.tick();
    expect((await events()).filter((e) => e.payload.payloadType === 'PriceCurve')).toHaveLength(3); // once a day
  });

  it('validates usage reports and computes compensation from accepted ones', async () => {
    const pts = (curve.payload.priceCurveDelta as { points: { price: number; timestamp: string }[] }).points;
    const neg = pts.filter((x) => x.price < 0).slice(0, 2);
    const report = (over: Record<string, unknown> = {}, payload: Record<string, unknown> = {}) => ({
      eventId: curve.id,
      payloads: [
        {
          payloadType: 'EnergyUsage',
          resourceId: 'tank-a',
          locationId: 'home-a',
          resolution: '01:00:00',
          points: neg.map((x) => ({ timestamp: x.timestamp, kiloWattHours: 2 })),
          ...payload,
        },
      ],
      ...over,
    });
    const rejects: [string, unknown][] = [
      ['unknown event', report({ eventId: 'nope' })],
      ['not a target', report({}, { resourceId: 'tank-c' })],
      ['wrong location', report({}, { locationId: 'home-c' })],
      ['off the hour', report({}, { points: [{ timestamp: '2025-10-26T01:30:00Z', kiloWattHours: 1 }] })],
      ['outside the event', report({}, { points: [{ timestamp: '2025-10-28T01:00:00Z', kiloWattHours: 1 }] })],
      ['wrong resolution', report({}, { resolution: '00:15:00' })],
      ['unknown payload type', report({}, { payloadType: 'Mystery' })],
      [
        'ack for a price curve',
        {
          eventId: curve.id,
          payloads: [
            { payloadType: 'ResourceLPCAcknowledged', acknowledgedTargets: [{ resourceId: 'tank-a', locationId: 'home-a', meterPointId: '1' }] },
          ],
        },
      ],
      ['no points', report({}, { points: undefined })],
      ['negative energy', report({}, { points: [{ timestamp: neg[0]?.timestamp, kiloWattHours: -1 }] })],
    ];
    for (const [why, body] of rejects) {
      const res = await call('POST', '/reports', body);
      expect(res.status, why).toBe(400);
      expect(typeof res.json, why).toBe('string');
    }
    expect(sb.acceptedReports()).toHaveLength(0);
    const ok = await call('POST', '/reports', report());
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ eventId: curve.id });
    const dup = await call('POST', '/reports', report());
    expect(dup.status).toBe(400);
    expect(dup.json).toMatch(/duplicate/);
    // The deprecated curvePoints is accepted for another target of the event.
    const car = await call('POST', '/reports', {
      eventId: curve.id,
      payloads: [
        {
          payloadType: 'EnergyUsage',
          resourceId: 'car-a',
          resolution: '01:00:00',
          curvePoints: [{ timestamp: neg[0]?.timestamp, kiloWattHours: 1 }],
        },
      ],
    });
    expect(car.status).toBe(200);
    expect(sb.acceptedReports()).toHaveLength(2);
    clock.set(Date.UTC(2025, 9, 27, 8));
    call = api(sb, await fetchToken(sb));
    const comp = (await call('GET', '/users/alice/compensation')).json as {
      period: { from: string; to: string };
      locationCompensations: { activeAmount: number; blockedAmount: number; currency: string; problems: { problemType: string }[] }[];
    };
    expect(comp.period).toEqual({ from: '2025-10-01', to: '2025-10-31' });
    const expected = -(2 * (neg[0]?.price ?? 0) + 2 * (neg[1]?.price ?? 0) + 1 * (neg[0]?.price ?? 0));
    const c = comp.locationCompensations[0];
    // Alice's location has no meter point id: the amount is blocked, with the problem named.
    expect(c?.activeAmount).toBe(0);
    expect(c?.blockedAmount).toBeCloseTo(expected, 2);
    expect(c?.problems[0]?.problemType).toBe('MissingMpidOnLocation');
    await call('PATCH', '/users/alice/locations/home-a', { meterPointIds: ['707057500000000555'] });
    const after = (await call('GET', '/users/alice/compensation')).json as typeof comp;
    expect(after.locationCompensations[0]?.activeAmount).toBeCloseTo(expected, 2);
    expect(after.locationCompensations[0]?.blockedAmount).toBe(0);
    expect((await call('GET', '/users/nobody/compensation')).status).toBe(404);
  });
});

describe('price curve rules', () => {
  it('uses EUR before the release date and covers a 23-hour day in spring', () => {
    const day = localDayStartMs(Date.UTC(2025, 2, 30, 12));
    expect(hoursOfLocalDay(day)).toHaveLength(23);
    const curve = dailyIncentiveCurve(3, 'SE3', day, localTimeToUtcMs(2025, 6, 1, 0));
    expect(curve.currency).toBe('EUR');
    expect(curve.toMs - curve.fromMs).toBe(23 * 3_600_000);
    expect(curve.points.every((p) => p.timestampMs >= curve.fromMs && p.timestampMs < curve.toMs)).toBe(true);
    expect(dailyIncentiveCurve(3, 'SE3', day, 0).currency).toBe('SEK');
    expect(dailyIncentiveCurve(3, 'SE3', day, 0)).toEqual(dailyIncentiveCurve(3, 'SE3', day, 0));
  });
});
