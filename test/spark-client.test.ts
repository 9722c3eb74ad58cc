/**
 * Every client operation against a local stub: the method, path, query and body it sends, and
 * the parsed answer (the OpenAPI document's own examples where it has one). Plus the event
 * iterator and the forecast client.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { createSparkClient, type SparkClient } from '../src/spark/client.js';
import { createForecastClient } from '../src/spark/forecast-client.js';
import type { SparkEvent } from '../src/spark/wire.js';
import { json, startStub, type StubReply, type StubServer } from './fixtures/spark/stub-server.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const doc: any = JSON.parse(readFileSync(fileURLToPath(new URL('../spec/ec-sandbox-swagger.json', import.meta.url)), 'utf8'));
const example = (path: string, method: string, status: string): unknown =>
  doc.paths[path][method].responses[status].content['application/json'].example;

const base = '/energy-coordination/v1';
const location = example('/users/{userId}/locations/{locationId}', 'get', '200');
const resource = example('/resources/{resourceId}', 'get', '200');
const webhook = example('/webhooks/{webhookId}', 'get', '200');
const events = example('/events', 'get', '200') as { events: SparkEvent[] };
const event = events.events[3]!;
const page = { totalRecords: 1, pageSize: 10, currentPage: 1, totalPages: 1, nextPage: null, previousPage: null };
const enrollment = {
  userId: 'u 1',
  isEnrolled: true,
  enrollmentId: '3f2c8a52-5b7e-4c1e-9d7a-1b2c3d4e5f60',
  enrollmentDate: '2026-03-03T12:00:00+00:00',
};
const log = {
  webhookId: 'h1',
  tenantId: 't1',
  webhookUrl: 'https://example.com/api',
  notificationId: 'n1',
  notificationType: 'PriceCurveCreated',
  responseStatusCode: 200,
  requestTimeout: false,
};

let stub: StubServer;
let client: SparkClient;

beforeEach(async () => {
  stub = await startStub();
  client = createSparkClient({
    baseUrl: `${stub.url}${base}`,
    authUrl: stub.url,
    clientId: 'c',
    clientSecret: 's',
    clock: new ManualClock(Date.UTC(2026, 2, 3)),
    logger: silentLogger(),
  });
});

afterEach(async () => {
  await client.close();
  await stub.close();
});

interface Case {
  name: string;
  call: (c: SparkClient) => Promise<unknown>;
  method: string;
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  reply: StubReply;
  result?: unknown;
}

const loc = { locationId: 'l1', locationType: 'Residential' as const, coordinates: { latitude: 78.22094240482632, longitude: 15.619465054484257 } };
const cases: Case[] = [
  {
    name: 'listUsers',
    call: (c) => c.listUsers({ page: 2, pageSize: 50 }),
    method: 'GET',
    path: '/users',
    query: { page: '2', pageSize: '50' },
    reply: json({ pagination: page, users: [{ userId: 'u1' }] }),
  },
  {
    name: 'createUser',
    call: (c) => c.createUser('u1'),
    method: 'POST',
    path: '/users',
    body: { userId: 'u1' },
    reply: json({ userId: 'u1' }, 201),
    result: { userId: 'u1' },
  },
  {
    name: 'createUser (200, empty)',
    call: (c) => c.createUser('u1'),
    method: 'POST',
    path: '/users',
    body: { userId: 'u1' },
    reply: { status: 200 },
    result: { userId: 'u1' },
  },
  {
    name: 'createUsers',
    call: (c) => c.createUsers([{ userId: 'a' }, { userId: 'b' }]),
    method: 'POST',
    path: '/users/batch',
    body: { users: [{ userId: 'a' }, { userId: 'b' }] },
    reply: json({ users: [{ userId: 'a' }, { userId: 'b' }] }, 201),
  },
  {
    name: 'getUser (id encoded)',
    call: (c) => c.getUser('u 1/x'),
    method: 'GET',
    path: '/users/u%201%2Fx',
    reply: json({ userId: 'u 1/x' }),
    result: { userId: 'u 1/x' },
  },
  { name: 'deleteUser', call: (c) => c.deleteUser('u1'), method: 'DELETE', path: '/users/u1', reply: { status: 204 }, result: undefined },
  {
    name: 'listLocations',
    call: (c) => c.listLocations('u1'),
    method: 'GET',
    path: '/users/u1/locations',
    reply: json([location]),
    result: [location],
  },
  {
    name: 'createLocation',
    call: (c) => c.createLocation('u1', loc),
    method: 'POST',
    path: '/users/u1/locations',
    body: loc,
    reply: json(location, 201),
    result: location,
  },
  {
    name: 'createLocations',
    call: (c) => c.createLocations([{ ...loc, userId: 'u1', meterPointIds: ['707057500012345678'] }]),
    method: 'POST',
    path: '/users/locations/batch',
    body: { locations: [{ ...loc, userId: 'u1', meterPointIds: ['707057500012345678'] }] },
    reply: json({ locations: [location] }, 201),
  },
  {
    name: 'getLocation',
    call: (c) => c.getLocation('u1', 'l1'),
    method: 'GET',
    path: '/users/u1/locations/l1',
    reply: json(location),
    result: location,
  },
  {
    name: 'putLocation',
    call: (c) => c.putLocation('u1', 'l1', loc),
    method: 'PUT',
    path: '/users/u1/locations/l1',
    body: loc,
    reply: json(location),
  },
  {
    name: 'patchLocation',
    call: (c) => c.patchLocation('u1', 'l1', { coordinates: loc.coordinates }),
    method: 'PATCH',
    path: '/users/u1/locations/l1',
    body: { coordinates: loc.coordinates },
    reply: json(location),
  },
  { name: 'deleteLocation', call: (c) => c.deleteLocation('u1', 'l1'), method: 'DELETE', path: '/users/u1/locations/l1', reply: { status: 204 } },
  {
    name: 'listLocationResources',
    call: (c) => c.listLocationResources('u1', 'l1'),
    method: 'GET',
    path: '/users/u1/locations/l1/resources',
    reply: json(example('/users/{userId}/locations/{locationId}/resources', 'get', '200')),
  },
  {
    name: 'createLocationResource',
    call: (c) => c.createLocationResource('u1', 'l1', { resourceId: 'r1', resourceType: 'HotWaterTank' }),
    method: 'POST',
    path: '/users/u1/locations/l1/resources',
    body: { resourceId: 'r1', resourceType: 'HotWaterTank' },
    reply: json({ resourceId: 'r1', resourceType: 'HotWaterTank', locationId: 'l1', userId: 'u1', meterPointId: null }, 201),
  },
  {
    name: 'createVehicle',
    call: (c) => c.createVehicle('u1', { resourceId: 'v1', resourceType: 'Vehicle' }),
    method: 'POST',
    path: '/users/u1/vehicles',
    body: { resourceId: 'v1', resourceType: 'Vehicle' },
    reply: json({ resourceId: 'v1', resourceType: 'Vehicle', userId: 'u1', locationId: null, meterPointId: null }, 201),
  },
  {
    name: 'listUserResources',
    call: (c) => c.listUserResources('u1'),
    method: 'GET',
    path: '/users/u1/resources',
    reply: json(example('/users/{userId}/resources', 'get', '200')),
  },
  { name: 'getResource', call: (c) => c.getResource('r1'), method: 'GET', path: '/resources/r1', reply: json(resource), result: resource },
  { name: 'deleteResource', call: (c) => c.deleteResource('r1'), method: 'DELETE', path: '/resources/r1', reply: { status: 204 } },
  {
    name: 'getEnrollment',
    call: (c) => c.getEnrollment('u1'),
    method: 'GET',
    path: '/users/u1/enrollment',
    reply: json(enrollment),
    result: enrollment,
  },
  {
    name: 'enroll',
    call: (c) => c.enroll('u1'),
    method: 'POST',
    path: '/users/u1/enrollment',
    body: '',
    reply: json(enrollment),
    result: enrollment,
  },
  { name: 'unenroll', call: (c) => c.unenroll('u1'), method: 'DELETE', path: '/users/u1/enrollment', reply: { status: 204 } },
  {
    name: 'getEligibility',
    call: (c) => c.getEligibility('u1'),
    method: 'GET',
    path: '/users/u1/eligibility',
    reply: json({ userId: 'u1', isEligible: true }),
  },
  {
    name: 'listEligibleUsers',
    call: (c) => c.listEligibleUsers({ pageSize: 1000 }),
    method: 'GET',
    path: '/users/eligible',
    query: { pageSize: '1000' },
    reply: json({ pagination: page, users: [{ userId: 'u1' }] }),
  },
  {
    name: 'getMeterEligibility',
    call: (c) => c.getMeterEligibility('707057500012345678'),
    method: 'GET',
    path: '/meters/707057500012345678/eligible',
    reply: json({ meterPointId: '707057500012345678', isEligible: false }),
  },
  {
    name: 'getCompensation',
    call: (c) => c.getCompensation('u1'),
    method: 'GET',
    path: '/users/u1/compensation',
    reply: json({
      userId: 'u1',
      period: { from: '2026-03-01', to: '2026-03-31' },
      locationCompensations: [
        {
          locationId: 'l1',
          meterPointIds: [],
          activeAmount: 0,
          blockedAmount: 1.25,
          currency: 'NOK',
          problems: [{ problemType: 'MissingMpidOnLocation', message: 'no meter point id' }],
        },
      ],
    }),
  },
  {
    name: 'listEvents',
    call: (c) => c.listEvents({ page: 1, pageSize: 4 }),
    method: 'GET',
    path: '/events',
    query: { page: '1', pageSize: '4' },
    reply: json(events),
    result: events,
  },
  { name: 'getEvent', call: (c) => c.getEvent(event.id), method: 'GET', path: `/events/${event.id}`, reply: json(event), result: event },
  {
    name: 'postReport',
    call: (c) =>
      c.postReport({
        eventId: 'e1',
        payloads: [
          {
            payloadType: 'EnergyUsage',
            resourceId: 'r1',
            resolution: '01:00:00',
            points: [{ timestamp: '2026-03-04T00:00:00+00:00', kiloWattHours: 1.5 }],
          },
        ],
      }),
    method: 'POST',
    path: '/reports',
    body: {
      eventId: 'e1',
      payloads: [
        {
          payloadType: 'EnergyUsage',
          resourceId: 'r1',
          resolution: '01:00:00',
          points: [{ timestamp: '2026-03-04T00:00:00+00:00', kiloWattHours: 1.5 }],
        },
      ],
    },
    reply: json({ id: 'rep1', eventId: 'e1', createdAt: '2026-03-05T08:00:00+00:00' }),
  },
  {
    name: 'createWebhook',
    call: (c) =>
      c.createWebhook({
        webhookUrl: 'https://home.example/spark/notify',
        notificationTypes: ['PriceCurveCreated'],
        webhookSecret: 'k',
        name: 'hems',
      }),
    method: 'POST',
    path: '/webhooks',
    body: { webhookUrl: 'https://home.example/spark/notify', notificationTypes: ['PriceCurveCreated'], webhookSecret: 'k', name: 'hems' },
    reply: json(webhook, 201),
    result: webhook,
  },
  { name: 'listWebhooks', call: (c) => c.listWebhooks(), method: 'GET', path: '/webhooks', reply: json({ webhooks: [webhook] }), result: [webhook] },
  { name: 'getWebhook', call: (c) => c.getWebhook('h1'), method: 'GET', path: '/webhooks/h1', reply: json(webhook) },
  {
    name: 'putWebhook',
    call: (c) => c.putWebhook('h1', { webhookUrl: 'https://new.example/x', notificationTypes: ['UserEligibilityUpdated'], enabled: false }),
    method: 'PUT',
    path: '/webhooks/h1',
    body: { webhookUrl: 'https://new.example/x', notificationTypes: ['UserEligibilityUpdated'], enabled: false },
    reply: json(webhook),
  },
  {
    name: 'patchWebhook',
    call: (c) => c.patchWebhook('h1', { enabled: true }),
    method: 'PATCH',
    path: '/webhooks/h1',
    body: { enabled: true },
    reply: json(webhook),
  },
  { name: 'deleteWebhook', call: (c) => c.deleteWebhook('h1'), method: 'DELETE', path: '/webhooks/h1', reply: { status: 204 } },
  {
    name: 'setWebhookEnabled',
    call: (c) => c.setWebhookEnabled('h1', false),
    method: 'PUT',
    path: '/webhooks/h1/enabled',
    query: { enabled: 'false' },
    reply: { status: 204 },
  },
  {
    name: 'listWebhookLogs',
    call: (c) => c.listWebhookLogs({ webhookId: 'h1', page: 1, pageSize: 20 }),
    method: 'GET',
    path: '/webhooks/logs',
    query: { webhookId: 'h1', page: '1', pageSize: '20' },
    reply: json({ webhookNotificationLogs: [log], pagination: page }),
  },
  {
    name: 'getWebhookLog',
    call: (c) => c.getWebhookLog('n1'),
    method: 'GET',
    path: '/webhooks/logs/n1',
    reply: json({ webhookNotificationLog: log, notificationContent: '{"a":1}' }),
  },
  {
    name: 'simulatePriceCurve',
    call: (c) => c.simulatePriceCurve(),
    method: 'POST',
    path: '/simulation/events/pricecurve',
    body: {},
    reply: json({ simulatedEvent: event }),
    result: event,
  },
  {
    name: 'simulatePriceCurve (targets)',
    call: (c) => c.simulatePriceCurve({ targets: [{ resourceId: 'r1', locationId: 'l1' }], priceArea: 'NO1' }),
    method: 'POST',
    path: '/simulation/events/pricecurve',
    body: { targets: [{ resourceId: 'r1', locationId: 'l1' }], priceArea: 'NO1' },
    reply: json({ simulatedEvent: event }),
  },
  {
    name: 'simulateUserEligibility',
    call: (c) => c.simulateUserEligibility(),
    method: 'POST',
    path: '/simulation/events/usereligibility',
    body: '',
    reply: json({ simulatedEvent: events.events[2] }),
  },
  {
    name: 'simulateLocationLpc',
    call: (c) =>
      c.simulateLocationLpc({
        locations: [
          { location: { locationId: 'l1', meterPointId: 'm1' }, points: [{ maxPowerInKiloWatts: 0, timestamp: '2026-03-03T12:00:00+00:00' }] },
        ],
      }),
    method: 'POST',
    path: '/simulation/events/lpc/locations',
    body: {
      locations: [
        { location: { locationId: 'l1', meterPointId: 'm1' }, points: [{ maxPowerInKiloWatts: 0, timestamp: '2026-03-03T12:00:00+00:00' }] },
      ],
    },
    reply: json({ simulatedEvent: events.events[0] }),
  },
  {
    name: 'simulateResourceLpc',
    call: (c) => c.simulateResourceLpc(),
    method: 'POST',
    path: '/simulation/events/lpc/resources',
    body: {},
    reply: json({ simulatedEvent: events.events[1] }),
  },
  {
    name: 'createSimulatedPartnerData',
    call: (c) => c.createSimulatedPartnerData(),
    method: 'POST',
    path: '/simulation/partner',
    reply: { status: 201 },
  },
  {
    name: 'deleteSimulatedPartnerData',
    call: (c) => c.deleteSimulatedPartnerData(),
    method: 'DELETE',
    path: '/simulation/partner',
    reply: { status: 200 },
  },
];

describe('operations', () => {
  it('covers every operation of the OpenAPI document', () => {
    const ops = Object.entries(doc.paths).flatMap(([p, item]) => Object.keys(item as object).map((m) => `${m.toUpperCase()} ${p}`));
    const covered = new Set(cases.map((c) => `${c.method} ${c.path}`));
    const template = (op: string): RegExp => new RegExp(`^${op.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    const missing = ops.filter((op) => ![...covered].some((c) => template(op).test(c)));
    expect(missing).toEqual([]);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    stub.onRequest = () => c.reply;
    const result = await c.call(client);
    const [req] = stub.apiRequests();
    expect(req?.method).toBe(c.method);
    expect(req?.path).toBe(`${base}${c.path}`);
    expect(Object.fromEntries(req?.query ?? [])).toEqual(c.query ?? {});
    expect(req?.headers.authorization).toBe('Bearer tok-1');
    if (c.body === undefined || c.body === '') expect(req?.body).toBe('');
    else {
      expect(req?.headers['content-type']).toBe('application/json');
      expect(JSON.parse(req?.body ?? '')).toEqual(c.body);
    }
    if ('result' in c) expect(result).toEqual(c.result);
  });
});

describe('iterateEvents', () => {
  /** `count` events, newest first: e{count} … e1. */
  function serveEvents(count: number, pageSizeCap = 1000): void {
    const all = Array.from({ length: count }, (_, i) => ({
      id: `e${count - i}`,
      createdAt: new Date(Date.UTC(2026, 0, 1) + (count - i) * 60_000).toISOString(),
      payload: {
        payloadType: i % 7 === 0 ? 'FutureThing' : 'UserEligibility',
        lastUpdated: '2026-01-01T00:00:00Z',
        addedUsers: [],
        removedUsers: [],
      },
    }));
    stub.onRequest = (r) => {
      const p = Number(r.query.get('page') ?? 1);
      const size = Math.min(Number(r.query.get('pageSize') ?? 100), pageSizeCap);
      const totalPages = Math.ceil(all.length / size);
      return json({
        events: all.slice((p - 1) * size, p * size),
        pagination: {
          totalRecords: all.length,
          pageSize: size,
          currentPage: p,
          totalPages,
          nextPage: p < totalPages ? p + 1 : null,
          previousPage: p > 1 ? p - 1 : null,
        },
      });
    };
  }

  async function collect(isKnown: (id: string) => boolean, pageSize = 10): Promise<string[]> {
    const ids: string[] = [];
    for await (const ev of client.iterateEvents({ isKnown, pageSize })) ids.push(ev.id);
    return ids;
  }

  it('stops paging at the first page made only of known events, yielding the new ones oldest first', async () => {
    serveEvents(45);
    const ids = await collect((id) => Number(id.slice(1)) <= 23);
    expect(ids).toEqual(Array.from({ length: 22 }, (_, i) => `e${24 + i}`));
    // Pages 1 and 2 are new, page 3 is mixed, page 4 is all known: page 5 is never asked for.
    expect(stub.apiRequests().map((r) => r.query.get('page'))).toEqual(['1', '2', '3', '4']);
  });

  it('does not stop at a known event followed by unknown older ones on the same page', async () => {
    serveEvents(30);
    const known = new Set(['e30', 'e29', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e9', 'e10']);
    const ids = await collect((id) => known.has(id));
    expect(ids).toEqual(Array.from({ length: 18 }, (_, i) => `e${11 + i}`));
    expect(stub.apiRequests()).toHaveLength(3);
  });

  it('pages to the end when nothing is known, and keeps unknown payload types', async () => {
    serveEvents(25);
    const seen: SparkEvent[] = [];
    for await (const ev of client.iterateEvents({ isKnown: () => false, pageSize: 10 })) seen.push(ev);
    expect(seen).toHaveLength(25);
    expect(seen[0]?.id).toBe('e1');
    expect(seen.filter((e) => e.payload?.payloadType === 'FutureThing').length).toBeGreaterThan(0);
    expect(stub.apiRequests()).toHaveLength(3);
  });

  it('yields nothing and asks once when the newest page is all known', async () => {
    serveEvents(25);
    expect(await collect(() => true)).toEqual([]);
    expect(stub.apiRequests()).toHaveLength(1);
  });

  it('yields an event once when it moves to the next page while paging', async () => {
    let calls = 0;
    const ev = (id: string) => ({
      id,
      createdAt: '2026-01-01T00:00:00Z',
      payload: { payloadType: 'UserEligibility', lastUpdated: '2026-01-01T00:00:00Z' },
    });
    stub.onRequest = () => {
      calls++;
      // A new event arrives between the two page requests: e2 shifts onto page 2.
      const pages = calls === 1 ? [ev('e3'), ev('e2')] : [ev('e2'), ev('e1')];
      return json({ events: pages, pagination: { totalRecords: 4, pageSize: 2, currentPage: calls, totalPages: 2 } });
    };
    const ids = await collect(() => false, 2);
    expect(ids).toEqual(['e1', 'e2', 'e3']);
  });

  it('allEligibleUserIds pages through the eligible list', async () => {
    stub.onRequest = (r) => {
      const p = Number(r.query.get('page'));
      const users = p === 1 ? [{ userId: 'a' }, { userId: 'b' }] : [{ userId: 'c' }];
      return json({ users, pagination: { totalRecords: 3, pageSize: 2, currentPage: p, totalPages: 2, nextPage: p === 1 ? 2 : null } });
    };
    expect(await client.allEligibleUserIds({ pageSize: 2 })).toEqual(['a', 'b', 'c']);
  });
});

describe('forecast client', () => {
  const units = { currency: 'NOK', vat: { rate: 0.25, hasVAT: true }, energyUnit: 'kWh' };
  const seg = { from: '2026-03-03T00:00:00+01:00', to: '2026-03-03T06:00:00+01:00', averagePrice: 0.81 };

  it('forecast, advice and actual prices hit the smart API paths and share one token', async () => {
    const fc = createForecastClient({
      forecastUrl: `${stub.url}/smart/v1`,
      authUrl: stub.url,
      clientId: 'c',
      clientSecret: 's',
      clock: new ManualClock(0),
      logger: silentLogger(),
      tokens: client.tokens,
    });
    stub.onRequest = (r) => {
      if (r.path.endsWith('/advice'))
        return json({
          priceArea: 'NO1',
          priceUnits: units,
          segmentOptions: { segmentSize: 4 },
          forecastAdvice: [{ ...seg, loss: 0.2, type: 'Avoid' }],
        });
      if (r.path.includes('/actual/')) return json({ priceArea: 'SE3', priceUnits: units, prices: { '2026-03-03T00:00:00+01:00': 0.5 } });
      return json({ priceArea: 'NO1', priceUnits: units, segmentOptions: { segmentSize: 4 }, forecastSegments: [seg] });
    };
    const f = await fc.forecast({ area: 'NO1', segmentSize: 4, currency: 'NOK', vat: 0.25, energyUnit: 'kWh' });
    expect(f.forecastSegments).toEqual([seg]);
    const a = await fc.advice({ area: 'NO1', segmentSize: 4, currency: 'NOK' });
    expect(a.forecastAdvice[0]?.type).toBe('Avoid');
    const p = await fc.actualPrices({ area: 'SE3', currency: 'SEK', timeZone: 'Europe/Stockholm' });
    expect(p.prices['2026-03-03T00:00:00+01:00']).toBe(0.5);

    const [r1, r2, r3] = stub.apiRequests();
    expect(r1?.method).toBe('GET');
    expect(r1?.path).toBe('/smart/v1/prices/forecast/NO1');
    expect(Object.fromEntries(r1?.query ?? [])).toEqual({ segmentSize: '4', Currency: 'NOK', EnergyUnit: 'kWh', VATRate: '0.25' });
    expect(r2?.method).toBe('POST');
    expect(r2?.path).toBe('/smart/v1/prices/forecast/NO1/advice');
    expect(JSON.parse(r2?.body ?? '')).toEqual({
      priceUnitsParameters: { currency: 'NOK', energyUnit: 'kWh', vatRate: null },
      segmentOptionsParameters: { segmentSize: 4 },
    });
    expect(r3?.path).toBe('/smart/v1/prices/actual/SE3');
    expect(Object.fromEntries(r3?.query ?? [])).toEqual({ Currency: 'SEK', TimeZone: 'Europe/Stockholm' });
    expect(stub.tokenRequests()).toHaveLength(1);
    await fc.close();
  });
});
