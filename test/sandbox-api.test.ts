import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { startSandbox, type Sandbox } from '../src/sandbox/server.js';
import { auditResponses, type ResponseAudit } from './helpers/openapi-validate.js';
import { api, fetchToken, raw } from './fixtures/sandbox/raw-client.js';

const start = Date.UTC(2025, 8, 10, 8, 0); // 2025-09-10 10:00 Oslo
let sb: Sandbox;
let clock: ManualClock;
let audit: ResponseAudit;
let call: ReturnType<typeof api>;

beforeAll(async () => {
  clock = new ManualClock(start);
  sb = await startSandbox({
    clock,
    autoTick: false,
    bodyLimitBytes: 64 * 1024,
    partners: [
      { clientId: 'partner-a', clientSecret: 'secret-a' },
      { clientId: 'partner-b', clientSecret: 'secret-b' },
    ],
  });
  audit = auditResponses(sb);
  call = api(sb, await fetchToken(sb));
});
afterAll(async () => {
  await sb.close();
});
afterEach(() => {
  expect(audit.failures).toEqual([]);
});

const userCount = async (): Promise<number> =>
  ((await call('GET', '/users')).json as { pagination: { totalRecords: number } }).pagination.totalRecords;

describe('token endpoint', () => {
  const form = (fields: Record<string, string>) => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  it('issues an expiring HS256 JWT for client credentials', async () => {
    const res = await raw(
      `${sb.authUrl}/connect/token`,
      form({ grant_type: 'client_credentials', client_id: 'partner-a', client_secret: 'secret-a' }),
    );
    expect(res.status).toBe(200);
    const body = res.json as { access_token: string; expires_in: number; token_type: string };
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(3600);
    const claims = JSON.parse(Buffer.from(body.access_token.split('.')[1] ?? '', 'base64url').toString()) as {
      exp: number;
      iat: number;
      sub: string;
    };
    expect(claims.sub).toBe('partner-a');
    expect(claims.exp - claims.iat).toBe(3600);
    expect(claims.iat).toBe(Math.floor(clock.nowMs() / 1000));
  });
  /** A token request with HTTP Basic client authentication carrying `credentials` (id:secret). */
  const basicToken = (credentials: string) =>
    raw(`${sb.authUrl}/connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(credentials).toString('base64')}` },
      body: 'grant_type=client_credentials',
    });
  it('accepts HTTP Basic client authentication', async () => {
    expect((await basicToken('partner-b:secret-b')).status).toBe(200);
  });
  it('answers a malformed percent-escape in Basic credentials with 400, never 500', async () => {
    const res = await basicToken('partner-b:%E0%A4%A');
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ error: 'invalid_request' });
  });
  it('rejects wrong secrets, unknown clients, other grants and missing fields', async () => {
    expect(
      (await raw(`${sb.authUrl}/connect/token`, form({ grant_type: 'client_credentials', client_id: 'partner-a', client_secret: 'nope' }))).status,
    ).toBe(401);
    expect(
      (await raw(`${sb.authUrl}/connect/token`, form({ grant_type: 'client_credentials', client_id: 'ghost', client_secret: 'x' }))).json,
    ).toMatchObject({ error: 'invalid_client' });
    expect(
      (await raw(`${sb.authUrl}/connect/token`, form({ grant_type: 'password', client_id: 'partner-a', client_secret: 'secret-a' }))).json,
    ).toMatchObject({ error: 'unsupported_grant_type' });
    expect((await raw(`${sb.authUrl}/connect/token`, form({ grant_type: 'client_credentials' }))).status).toBe(400);
    const get = await raw(`${sb.authUrl}/connect/token`);
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
  });
});

describe('bearer tokens', () => {
  it('answers 401 without a token, with a forged one and with an expired one, changing nothing', async () => {
    const before = await userCount();
    const noToken = await raw(`${sb.baseUrl}/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"userId":"u-x"}' });
    expect(noToken.status).toBe(401);
    expect(noToken.headers['www-authenticate']).toMatch(/^Bearer/);
    const good = await fetchToken(sb);
    const [h, p] = good.split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p ?? '', 'base64url').toString()), sub: 'partner-b' })).toString(
      'base64url',
    );
    const forged = api(sb, `${h}.${forgedPayload}.${good.split('.')[2]}`);
    expect((await forged('POST', '/users', { userId: 'u-x' })).status).toBe(401);
    expect((await api(sb, `${good.slice(0, -3)}abc`)('GET', '/users')).status).toBe(401);
    const token = await fetchToken(sb);
    await clock.advance(3601_000);
    expect((await api(sb, token)('POST', '/users', { userId: 'u-x' })).status).toBe(401);
    call = api(sb, await fetchToken(sb));
    expect(await userCount()).toBe(before);
    expect((await api(sb, good, 'smart')('GET', '/prices/forecast/NO1')).status).toBe(401);
  });
});

describe('users, locations, resources', () => {
  it('creates, reads, conflicts and deletes with the documented statuses', async () => {
    expect((await call('POST', '/users', { userId: 'u1' })).status).toBe(201);
    expect((await call('POST', '/users', { userId: 'u1' })).status).toBe(400);
    expect((await call('GET', '/users/u1')).json).toEqual({ userId: 'u1' });
    expect((await call('GET', '/users/nobody')).status).toBe(404);
    expect((await call('POST', '/users/batch', { users: [{ userId: 'u2' }, { userId: 'u3' }] })).status).toBe(201);
    const loc = await call('POST', '/users/u1/locations', {
      locationId: 'l1',
      locationType: 'Residential',
      coordinates: { latitude: 78.22094, longitude: 15.61946 },
    });
    expect(loc.status).toBe(201);
    expect(loc.json).toMatchObject({ locationId: 'l1', userId: 'u1', meterPointIds: [] });
    expect((await call('POST', '/users/u1/locations', { locationId: 'l1', meterPointIds: ['1'] })).status).toBe(409);
    expect((await call('POST', '/users/nobody/locations', { locationId: 'lx', meterPointIds: ['1'] })).status).toBe(404);
    expect((await call('POST', '/users/u1/locations', { locationId: 'l-none' })).status).toBe(400);
    expect((await call('POST', '/users/u2/locations', { locationId: 'l2', meterPointIds: ['707057500000000099'] })).status).toBe(201);
    expect((await call('PATCH', '/users/u1/locations/l1', { meterPointIds: ['707057500000000099'] })).status).toBe(409);
    const patched = await call('PATCH', '/users/u1/locations/l1', { coordinates: { latitude: 60.39, longitude: 5.32 } });
    expect(patched.json).toMatchObject({ coordinates: { latitude: 60.39, longitude: 5.32 } });
    expect((await call('PUT', '/users/u1/locations/l1', { locationId: 'l1', meterPointIds: ['707057500000000100'] })).json).toMatchObject({
      meterPointIds: ['707057500000000100'],
      meterPointId: '707057500000000100',
    });
    expect((await call('PUT', '/users/u1/locations/l1', { locationId: 'other', meterPointIds: ['1'] })).status).toBe(400);
    expect((await call('GET', '/users/u1/locations')).json).toHaveLength(1);
    expect((await call('POST', '/users/u1/locations/l1/resources', { resourceId: 'tank', resourceType: 'HotWaterTank' })).status).toBe(201);
    expect((await call('POST', '/users/u1/locations/l1/resources', { resourceId: 'car', resourceType: 'Vehicle' })).status).toBe(400);
    expect((await call('POST', '/users/u1/locations/nope/resources', { resourceId: 'r9', resourceType: 'Charger' })).status).toBe(404);
    expect((await call('POST', '/users/u1/vehicles', { resourceId: 'car', resourceType: 'Vehicle' })).status).toBe(201);
    expect((await call('POST', '/users/u1/vehicles', { resourceId: 'car2', resourceType: 'Charger' })).status).toBe(400);
    expect((await call('GET', '/users/u1/resources')).json).toMatchObject({
      resources: [{ resourceId: 'tank' }, { resourceId: 'car', locationId: null }],
    });
    expect((await call('GET', '/users/u1/locations/l1/resources')).json).toHaveLength(1);
    expect((await call('GET', '/resources/tank')).json).toMatchObject({ resourceType: 'HotWaterTank', locationId: 'l1' });
    expect((await call('GET', '/resources/ghost')).status).toBe(404);
    expect(
      (await call('POST', '/users/locations/batch', { locations: [{ userId: 'u3', locationId: 'l3', meterPointIds: ['707057500000000001'] }] }))
        .status,
    ).toBe(201);
    expect((await call('DELETE', '/resources/car')).status).toBe(204);
    expect((await call('DELETE', '/resources/car')).status).toBe(404);
    expect((await call('DELETE', '/users/u1/locations/l1')).status).toBe(204);
    expect((await call('GET', '/resources/tank')).status).toBe(404);
    expect((await call('DELETE', '/users/u2')).status).toBe(204);
    expect((await call('GET', '/resources/l2')).status).toBe(404);
    expect((await call('DELETE', '/users/u2')).status).toBe(404);
  });

  it('keeps partners apart', async () => {
    await call('POST', '/users', { userId: 'only-a' });
    const b = api(sb, await fetchToken(sb, 1));
    expect((await b('GET', '/users/only-a')).status).toBe(404);
    expect((await b('POST', '/users', { userId: 'only-a' })).status).toBe(201);
    expect((await call('DELETE', '/users/only-a')).status).toBe(204);
    expect((await b('GET', '/users/only-a')).status).toBe(200);
  });
});

describe('bad input changes no state', () => {
  it.each([
    ['malformed JSON', '/users', '{"userId": '],
    ['wrong type', '/users', { userId: 42 }],
    ['missing required field', '/users', {}],
    ['unknown member', '/users', { userId: 'zz', extra: true }],
    ['empty body', '/users', ''],
  ])('%s on POST /users -> 400 string', async (_name, path, body) => {
    const before = await userCount();
    const res = await call('POST', path, body);
    expect(res.status).toBe(400);
    expect(typeof res.json).toBe('string');
    expect(await userCount()).toBe(before);
  });

  it('unknown enum values and malformed JSON on ProblemDetails operations -> 400 problem+json', async () => {
    await call('POST', '/users', { userId: 'enum-user' });
    const vehicle = await call('POST', '/users/enum-user/vehicles', { resourceId: 'v', resourceType: 'Toaster' });
    expect(vehicle.status).toBe(400);
    expect(vehicle.headers['content-type']).toContain('application/problem+json');
    expect((vehicle.json as { errors: Record<string, string[]> }).errors.resourceType).toBeDefined();
    const hook = await call('POST', '/webhooks', { webhookUrl: 'http://127.0.0.1:9/x', notificationTypes: ['SomethingNew'] });
    expect(hook.status).toBe(400);
    expect((await call('POST', '/webhooks', '{not json')).status).toBe(400);
    expect((await call('POST', '/webhooks', { webhookUrl: 'not a url' })).status).toBe(400);
    expect(((await call('GET', '/webhooks')).json as { webhooks: unknown[] }).webhooks).toHaveLength(0);
    expect(((await call('GET', '/users/enum-user/resources')).json as { resources: unknown[] }).resources).toHaveLength(0);
    const loc = await call('POST', '/users/enum-user/locations', { locationId: 'le', locationType: 'Castle', meterPointIds: ['1'] });
    expect(loc.status).toBe(400);
    expect((await call('GET', '/users/enum-user/locations')).json).toEqual([]);
  });

  it('bodies over the limit -> 413, unknown routes -> 404, wrong methods -> 405 with Allow', async () => {
    const before = await userCount();
    const big = await call('POST', '/users', { userId: 'x'.repeat(70 * 1024) });
    expect(big.status).toBe(413);
    expect(await userCount()).toBe(before);
    expect((await call('GET', '/no/such/route')).status).toBe(404);
    expect((await raw(`${sb.authUrl}/elsewhere`)).status).toBe(404);
    const wrong = await call('PATCH', '/users');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('GET, POST');
    expect((await call('DELETE', '/webhooks/logs')).headers.allow).toBe('GET');
  });

  it('pages with page/pageSize (max 1000) and rejects bad paging', async () => {
    for (const id of ['p1', 'p2', 'p3']) await call('POST', '/users', { userId: id });
    const page = await call('GET', '/users?page=2&pageSize=2');
    const body = page.json as { pagination: { currentPage: number; totalPages: number; previousPage: number | null }; users: unknown[] };
    expect(body.pagination.currentPage).toBe(2);
    expect(body.users.length).toBeLessThanOrEqual(2);
    expect(body.pagination.previousPage).toBe(1);
    expect((await call('GET', '/users?pageSize=1001')).status).toBe(400);
    const events = await call('GET', '/events?pageSize=1001');
    expect(events.status).toBe(400);
    expect(events.headers['content-type']).toContain('application/problem+json');
    expect((await call('GET', '/users/eligible?page=0')).status).toBe(400);
    expect((await call('GET', '/webhooks/logs?pageSize=abc')).status).toBe(400);
    expect((await call('GET', '/events?pageSize=1000')).status).toBe(200);
  });
});
