import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { startSandbox, type Sandbox } from '../src/sandbox/server.js';
import { verifySignature } from '../src/spark/webhook-signature.js';
import { auditResponses, validateComponent, type ResponseAudit } from './helpers/openapi-validate.js';
import { api, fetchToken } from './fixtures/sandbox/raw-client.js';

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  raw: Buffer;
}

let sb: Sandbox;
let clock: ManualClock;
let audit: ResponseAudit;
let call: ReturnType<typeof api>;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
/** Status per path; a list is consumed one per request (then 200). */
const plan = new Map<string, number[]>();

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, raw: Buffer.concat(chunks) });
      if (path === '/hang') return; // never answers: the sandbox's timeout must end the attempt
      res.statusCode = plan.get(path)?.shift() ?? 200;
      res.end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  clock = new ManualClock(Date.UTC(2025, 8, 10, 8, 0));
  sb = await startSandbox({ clock, autoTick: false, webhookRetryDelaysMs: [1000, 2000, 4000], webhookTimeoutMs: 300 });
  audit = auditResponses(sb);
  call = api(sb, await fetchToken(sb));
});
afterAll(async () => {
  await sb.close();
  receiver.closeAllConnections();
  await new Promise<void>((r) => receiver.close(() => r()));
});
afterEach(() => expect(audit.failures).toEqual([]));

const hook = async (path: string, body: Record<string, unknown>): Promise<string> => {
  const res = await call('POST', '/webhooks', { webhookUrl: receiverUrl + path, ...body });
  expect(res.status).toBe(201);
  return (res.json as { webhookId: string }).webhookId;
};
type Log = { webhookId: string; responseStatusCode: number | null; notificationId: string; requestTimeout: boolean; sparkSignature: string | null };
const logs = async (webhookId: string): Promise<Log[]> =>
  ((await call('GET', `/webhooks/logs?webhookId=${webhookId}`)).json as { webhookNotificationLogs: Log[] }).webhookNotificationLogs;

describe('webhook delivery', () => {
  it('signs with the secret, sends only subscribed types to enabled hooks, and logs the attempt', async () => {
    const signed = await hook('/signed', { name: 'signed', webhookSecret: 'Secret123%', notificationTypes: ['PriceCurveCreated'] });
    const other = await hook('/other', { notificationTypes: ['ResourceLPCRequested'] });
    const disabled = await hook('/disabled', { notificationTypes: ['PriceCurveCreated'] });
    expect((await call('PUT', `/webhooks/${disabled}/enabled?enabled=false`)).status).toBe(204);
    expect((await call('PUT', `/webhooks/${disabled}/enabled`)).status).toBe(400);
    const sim = await call('POST', '/simulation/events/pricecurve', {});
    await sb.engine.settle();
    const got = received.filter((r) => r.path === '/signed');
    expect(got).toHaveLength(1);
    expect(received.filter((r) => r.path !== '/signed')).toHaveLength(0);
    const first = got[0] as Received;
    expect(verifySignature(first.raw, first.headers['x-payload-signature'] as string, 'Secret123%')).toBe(true);
    expect(verifySignature(first.raw, first.headers['x-payload-signature'] as string, 'wrong')).toBe(false);
    const body = JSON.parse(first.raw.toString()) as Record<string, unknown>;
    expect(validateComponent('EventNotification', body)).toEqual([]);
    expect(body.eventId).toBe((sim.json as { simulatedEvent: { id: string } }).simulatedEvent.id);
    const l = await logs(signed);
    expect(l).toHaveLength(1);
    expect(l[0]).toMatchObject({ responseStatusCode: 200, sparkSignature: first.headers['x-payload-signature'] });
    const detail = await call('GET', `/webhooks/logs/${l[0]?.notificationId}`);
    expect((detail.json as { notificationContent: string }).notificationContent).toBe(first.raw.toString());
    expect((await call('GET', '/webhooks/logs/unknown')).status).toBe(400);
    expect(await logs(other)).toHaveLength(0);
    expect(((await call('GET', `/webhooks/${signed}`)).json as { status: string }).status).toBe('Healthy');
  });

  it('retries a failing receiver 3 times with backoff on the clock, then stops', async () => {
    plan.set('/flaky', [500, 503, 404, 500]);
    const id = await hook('/flaky', { notificationTypes: ['UserEligibilityUpdated'] });
    await call('POST', '/simulation/events/usereligibility');
    await sb.engine.settle();
    expect(await logs(id)).toHaveLength(1);
    await clock.advance(999);
    await sb.tick();
    expect(await logs(id)).toHaveLength(1); // not due yet
    for (const step of [1, 2000, 4000]) {
      await clock.advance(step);
      await sb.tick();
    }
    const all = await logs(id);
    expect(all.map((x) => x.responseStatusCode)).toEqual([500, 404, 503, 500]); // newest first
    expect(new Set(all.map((x) => x.notificationId)).size).toBe(1);
    const bodies = received.filter((r) => r.path === '/flaky').map((r) => r.raw.toString());
    expect(new Set(bodies).size).toBe(1); // identical retries
    await clock.advance(60_000);
    await sb.tick();
    expect(await logs(id)).toHaveLength(4);
    expect(((await call('GET', `/webhooks/${id}`)).json as { status: string }).status).toBe('Unhealthy');
  });

  it('counts any 2xx as delivered, sends no signature without a secret, and times out a silent receiver', async () => {
    plan.set('/accepted', [202]);
    const ok = await hook('/accepted', { notificationTypes: ['LocationLPCRequested'] });
    const slow = await hook('/hang', { notificationTypes: ['LocationLPCRequested'] });
    await call('POST', '/simulation/events/lpc/locations', {});
    await sb.engine.settle();
    const okLogs = await logs(ok);
    expect(okLogs).toHaveLength(1);
    expect(okLogs[0]?.sparkSignature).toBeNull();
    expect(received.find((r) => r.path === '/accepted')?.headers['x-payload-signature']).toBeUndefined();
    const slowLogs = await logs(slow);
    expect(slowLogs[0]).toMatchObject({ requestTimeout: true, responseStatusCode: null });
    await clock.advance(1000);
    await sb.tick();
    expect(await logs(ok)).toHaveLength(1);
    expect(await logs(slow)).toHaveLength(2);
  });

  it('updates and deletes webhooks with the documented statuses', async () => {
    const id = await hook('/x', { notificationTypes: ['PriceCurveCreated'] });
    expect((await call('PATCH', `/webhooks/${id}`, { name: 'renamed' })).json).toMatchObject({ name: 'renamed', webhookUrl: `${receiverUrl}/x` });
    expect((await call('PUT', `/webhooks/${id}`, { webhookUrl: `${receiverUrl}/y`, notificationTypes: [], enabled: false })).json).toMatchObject({
      enabled: false,
      name: null,
    });
    expect((await call('DELETE', `/webhooks/${id}`)).status).toBe(204);
    const gone = await call('DELETE', `/webhooks/${id}`);
    expect(gone.status).toBe(404);
    expect(typeof gone.json).toBe('string');
    expect((await call('GET', `/webhooks/${id}`)).status).toBe(404);
    expect((await call('PATCH', `/webhooks/${id}`, { name: 'z' })).status).toBe(404);
  });
});
