import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { startSandbox, type Sandbox } from '../src/sandbox/server.js';
import { auditResponses, type ResponseAudit } from './helpers/openapi-validate.js';
import { api, fetchToken } from './fixtures/sandbox/raw-client.js';

/**
 * docs/sandbox.md shows a partner how to trigger events. Every curl example in it is run here
 * against a real sandbox, in both path casings, so the page cannot drift from the routes.
 */
const page = readFileSync(new URL('../docs/sandbox.md', import.meta.url), 'utf8');

interface Example {
  path: string;
  body: unknown;
}

function curlExamples(markdown: string): Example[] {
  const out: Example[] = [];
  for (const block of markdown.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const text = (block[1] as string).replace(/\\\n/g, ' ');
    const m = /curl[^\n]*?\/energy-coordination\/v1(\/simulation\/[^\s]+)\s+-d\s+'([\s\S]*?)'/.exec(text);
    if (m) out.push({ path: m[1] as string, body: JSON.parse(m[2] as string) });
  }
  return out;
}

const expectedType: Record<string, string> = {
  '/simulation/events/pricecurve': 'PriceCurve',
  '/simulation/events/lpc/locations': 'LocationLPC',
  '/simulation/events/lpc/resources': 'ResourceLPC',
  '/simulation/events/lpc/reservations': 'LPCReservation',
};

let sb: Sandbox;
let audit: ResponseAudit;
let call: ReturnType<typeof api>;

beforeAll(async () => {
  sb = await startSandbox({ clock: new ManualClock(Date.UTC(2026, 10, 23, 15)), autoTick: false, seed: 3 });
  audit = auditResponses(sb);
  call = api(sb, await fetchToken(sb));
  expect((await call('POST', '/users', { userId: 'user-1' })).status).toBe(201);
  expect((await call('POST', '/users/user-1/locations', { locationId: 'home-1', meterPointIds: ['707057500000000001'] })).status).toBe(201);
  for (const [resourceId, resourceType] of [
    ['tank-1', 'HotWaterTank'],
    ['charger-1', 'Charger'],
  ]) {
    expect((await call('POST', '/users/user-1/locations/home-1/resources', { resourceId, resourceType })).status).toBe(201);
  }
});
afterAll(() => sb.close());

describe('docs/sandbox.md simulation examples', () => {
  const examples = curlExamples(page);

  it('shows an example for each event endpoint with a body', () => {
    expect(examples.map((e) => e.path.toLowerCase()).sort()).toEqual(Object.keys(expectedType).sort());
  });

  it.each(examples)('$path answers as the page says, in both casings', async ({ path, body }) => {
    for (const p of [path, path.toLowerCase()]) {
      const res = await call('POST', p, body);
      expect(res.status, res.text).toBe(200);
      const event = (res.json as { simulatedEvent: { id: string; payload: { payloadType: string } } }).simulatedEvent;
      expect(event.payload.payloadType).toBe(expectedType[path.toLowerCase()]);
      expect((await call('GET', `/events/${event.id}`)).status).toBe(200);
    }
    expect(audit.failures).toEqual([]);
  });

  it('lists every route the page names, and the body-less ones answer as documented', async () => {
    for (const route of ['/simulation/events/userEligibility', '/simulation/events/usereligibility']) {
      const res = await call('POST', route);
      expect((res.json as { simulatedEvent: { payload: { payloadType: string } } }).simulatedEvent.payload.payloadType).toBe('UserEligibility');
    }
    expect((await call('POST', '/simulation/partner')).status).toBe(201);
    expect((await call('DELETE', '/simulation/partner')).status).toBe(200);
    expect((await call('GET', '/users/user-1')).status).toBe(200);
    expect(
      (await call('POST', '/simulation/events/lpc/locations', { locations: [{ points: [{ timestamp: 'soon', maxPowerInKiloWatts: 1 }] }] })).status,
    ).toBe(400);
    expect(audit.failures).toEqual([]);
  });
});
