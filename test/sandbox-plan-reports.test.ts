/**
 * The sandbox's plan reports over HTTP: a report without an event may hold only
 * LocationEnergyUsagePlan payloads of the partner's own locations, with the same hours in both
 * curves; an accepted one is listed at GET /simulation/reports. Every answer to POST /reports is
 * checked against the OpenAPI document; every body sent conforms to it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { startSandbox, type Sandbox } from '../src/sandbox/server.js';
import { auditResponses, validateComponent, type ResponseAudit } from './helpers/openapi-validate.js';
import { api, fetchToken } from './fixtures/sandbox/raw-client.js';

const now = Date.UTC(2026, 0, 10, 12, 20);
const h = (n: number): string => new Date(Date.UTC(2026, 0, 10, 12 + n)).toISOString();
let sb: Sandbox;
let audit: ResponseAudit;
let call: ReturnType<typeof api>;

const plan = (over: Record<string, unknown> = {}) => ({
  payloadType: 'LocationEnergyUsagePlan',
  locationId: 'home-1',
  meterPointId: '707057500000000001',
  resolution: '01:00:00',
  baseline: [
    { timestamp: h(0), kiloWattHours: 3.5 },
    { timestamp: h(1), kiloWattHours: 0.5 },
  ],
  flexibility: [
    { timestamp: h(0), kiloWattHours: 2 },
    { timestamp: h(1), kiloWattHours: 0 },
  ],
  ...over,
});

beforeAll(async () => {
  sb = await startSandbox({
    clock: new ManualClock(now),
    autoTick: false,
    partners: [
      { clientId: 'a', clientSecret: 'sa' },
      { clientId: 'b', clientSecret: 'sb' },
    ],
  });
  audit = auditResponses(sb);
  call = api(sb, await fetchToken(sb));
  await call('POST', '/users', { userId: 'u1' });
  await call('POST', '/users/u1/locations', { locationId: 'home-1', locationType: 'Residential', meterPointIds: ['707057500000000001'] });
});
afterAll(async () => {
  await sb?.close();
});

describe('plan reports in the sandbox', () => {
  it('accepts a plan without an event and lists it', async () => {
    const body = { payloads: [plan()] };
    expect(validateComponent('PostReportRequest', body)).toEqual([]);
    const res = await call('POST', '/reports', body);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json).toMatchObject({ eventId: null, id: expect.any(String) });
    const listed = await call('GET', '/simulation/reports');
    expect((listed.json as { reports: unknown[] }).reports).toEqual([
      { id: (res.json as { id: string }).id, eventId: null, createdAt: (res.json as { createdAt: string }).createdAt, payloads: [plan()] },
    ]);
    expect(sb.acceptedPlanReports()).toHaveLength(1);
    expect(sb.acceptedReports()).toHaveLength(0);
  });

  const refused: [string, unknown, RegExp][] = [
    [
      'a usage report without an event',
      {
        payloads: [
          {
            payloadType: 'LocationEnergyUsage',
            locationId: 'home-1',
            meterPointId: '707057500000000001',
            resolution: '01:00:00',
            points: [{ timestamp: h(0), kiloWattHours: 1 }],
          },
        ],
      },
      /must name the event it answers/,
    ],
    ['a location of no one', { payloads: [plan({ locationId: 'nowhere' })] }, /location 'nowhere' does not exist/],
    ['another meter point', { payloads: [plan({ meterPointId: '707057500000000099' })] }, /is not a meter point of location/],
    ['a location twice', { payloads: [plan(), plan()] }, /names location 'home-1' twice/],
    ['curves over different hours', { payloads: [plan({ flexibility: [{ timestamp: h(0), kiloWattHours: 2 }] })] }, /same hours/],
    [
      'an hour long past',
      { payloads: [plan({ baseline: [{ timestamp: h(-2), kiloWattHours: 1 }], flexibility: [{ timestamp: h(-2), kiloWattHours: 0 }] })] },
      /in the past/,
    ],
    [
      'a timestamp off the hour',
      {
        payloads: [
          plan({
            baseline: [{ timestamp: '2026-01-10T12:30:00.000Z', kiloWattHours: 1 }],
            flexibility: [{ timestamp: '2026-01-10T12:30:00.000Z', kiloWattHours: 0 }],
          }),
        ],
      },
      /not on the report's resolution/,
    ],
    [
      'negative energy',
      {
        payloads: [
          plan({
            flexibility: [
              { timestamp: h(0), kiloWattHours: -1 },
              { timestamp: h(1), kiloWattHours: 0 },
            ],
          }),
        ],
      },
      /at least 0/,
    ],
    ['no hours', { payloads: [plan({ baseline: [], flexibility: [] })] }, /at least one hour/],
  ];
  for (const [name, body, why] of refused) {
    it(`refuses ${name} with a 400 and changes nothing`, async () => {
      const before = sb.acceptedPlanReports().length;
      const res = await call('POST', '/reports', body);
      expect(res.status).toBe(400);
      expect(String(res.json)).toMatch(why);
      expect(sb.acceptedPlanReports()).toHaveLength(before);
    });
  }

  it("keeps each partner's plans to itself", async () => {
    const other = api(sb, await fetchToken(sb, 1));
    expect((await other('POST', '/reports', { payloads: [plan()] })).status).toBe(400);
    expect(((await other('GET', '/simulation/reports')).json as { reports: unknown[] }).reports).toEqual([]);
  });

  it('answered POST /reports as the document declares', () => {
    expect(audit.failures.filter((f) => f.startsWith('POST'))).toEqual([]);
  });
});
