/**
 * The webhook receiver over real HTTP with a real store behind a real intake: signatures, limits,
 * dedupe and a fast-check property that nothing unsigned ever reaches the store.
 */
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { createLogger } from '../src/log.js';
import { openStore, type Store } from '../src/store/index.js';
import { createEventIntake } from '../src/jobs/event-intake.js';
import type { Identity } from '../src/spark/event-normalise.js';
import { startWebhookReceiver, type WebhookReceiver, type WebhookReceiverOptions } from '../src/upstream/webhook-receiver.js';
import { signPayload } from '../src/spark/webhook-signature.js';
import { until } from './helpers/until.js';

const secret = 'hook-secret-123';
const me: Identity = { userId: 'user-1', locationId: 'home-1', resources: new Map([['res-tank', 'tank']]), meterPointIds: [] };
const dataDir = fileURLToPath(new URL('../spec/webhook-test-data/', import.meta.url));

interface Rig {
  store: Store;
  receiver: WebhookReceiver;
  acted: string[];
  lines: Record<string, unknown>[];
  url: URL;
}
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function rig(options: Partial<WebhookReceiverOptions> = {}): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), 'ws-webhook-'));
  const store = openStore({ path: join(dir, 'db.sqlite') });
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });
  const acted: string[] = [];
  const intake = createEventIntake({
    store,
    identity: () => me,
    clock: new ManualClock(Date.UTC(2025, 9, 25, 12)),
    logger,
    onEvent: (e) => acted.push(e.id),
  });
  const receiver = await startWebhookReceiver(
    { host: '127.0.0.1', port: 0, path: '/hooks/spark', secret, maxBodyBytes: 64 * 1024, maxConnections: 16, ...options },
    { intake, logger },
  );
  cleanups.push(
    () => rmSync(dir, { recursive: true, force: true }),
    () => store.close(),
    () => receiver.close(),
  );
  return { store, receiver, acted, lines, url: new URL(receiver.url) };
}

interface Res {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}
function send(
  r: Rig,
  opts: {
    body?: Buffer | string | Buffer[];
    headers?: Record<string, string | string[]>;
    method?: string;
    path?: string;
    chunked?: boolean;
    agent?: Agent;
  },
): Promise<Res> {
  return new Promise((resolve, reject) => {
    const parts = opts.body === undefined ? [] : Array.isArray(opts.body) ? opts.body : [Buffer.from(opts.body)];
    const headers: Record<string, string | string[] | number> = { 'content-type': 'application/json', ...opts.headers };
    if (!opts.chunked) headers['content-length'] = parts.reduce((n, p) => n + p.length, 0);
    const req = request(
      {
        host: r.url.hostname,
        port: r.url.port,
        path: opts.path ?? r.url.pathname,
        method: opts.method ?? 'POST',
        headers,
        agent: opts.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    (async () => {
      for (const p of parts) {
        if (!req.write(p)) await new Promise((ok) => req.once('drain', ok));
      }
      req.end();
    })().catch(reject);
  });
}

const notification = (eventId: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    notificationId: `n-${eventId}`,
    eventId,
    eventCreatedAtUtc: '2025-10-25T11:05:00Z',
    notificationSentUtc: '2025-10-25T11:05:01Z',
    notificationType: 'PriceCurveCreated',
    payload: {
      payloadType: 'PriceCurve',
      priceArea: 'NO1',
      targets: [{ resourceId: 'res-tank', locationId: 'home-1' }],
      priceCurveDelta: { currency: 'NOK', energyUnit: 'kWh', resolution: '01:00:00', points: [{ price: -1, timestamp: '2025-10-26T02:00:00Z' }] },
    },
    ...extra,
  });
const signed = (body: string | Buffer, key = secret) => ({ 'x-payload-signature': signPayload(body, key) });
/** Processing runs right after the answer; give it a moment (real time, bounded). */
const settle = () => new Promise((r) => setTimeout(r, 30));

describe('webhook receiver: accepted calls', () => {
  it('answers 200 (the code of the webhook document) once the event of a signed body is stored, then acts on it', async () => {
    const r = await rig();
    const body = notification('ev-1');
    const res = await send(r, { body, headers: signed(body) });
    expect(res.status).toBe(200);
    await until(() => r.acted.includes('ev-1'), 'acted on');
    expect(r.store.getEvent('ev-1')).toMatchObject({ notificationType: 'PriceCurveCreated', state: 'received', rawJson: body });
    expect(r.receiver.stats()).toEqual({ accepted: 1, rejected: 0, failed: 0, evicted: 0 });
  });

  it('accepts the published test bodies with their published signatures', async () => {
    const r = await rig({ secret: readFileSync(join(dataDir, 'signing-key.txt'), 'utf8').trim() });
    for (const name of ['price-curve-event.json', 'user-eligibility-event.json']) {
      const body = readFileSync(join(dataDir, name));
      const sig = readFileSync(join(dataDir, `${name}.hmacsha256b64`), 'utf8').trim();
      expect((await send(r, { body, headers: { 'X-Payload-Signature': sig } })).status).toBe(200);
    }
    await until(() => r.store.listEvents().length === 2, 'both stored');
    // Neither targets this home: kept as ignored, byte for byte (trailing newline included).
    expect(r.store.getEvent('1cc9ea41-59a4-453e-8c3a-2385b900a0a9')).toMatchObject({
      state: 'ignored',
      rawJson: readFileSync(join(dataDir, 'price-curve-event.json'), 'utf8'),
    });
    expect(r.acted).toEqual([]);
  });

  it('a duplicate delivery is answered 200 and stored once', async () => {
    const r = await rig();
    const body = notification('ev-dup');
    for (let i = 0; i < 3; i++) expect((await send(r, { body, headers: signed(body) })).status).toBe(200);
    await until(() => r.store.hasEvent('ev-dup'), 'stored');
    await settle();
    expect(r.store.listEvents()).toHaveLength(1);
    expect(r.acted).toEqual(['ev-dup']);
  });

  it('without a secret, unsigned bodies are accepted', async () => {
    const r = await rig({ secret: null });
    const body = notification('ev-open');
    expect((await send(r, { body })).status).toBe(200);
    await until(() => r.store.hasEvent('ev-open'), 'stored');
  });

  it('a signed body that is JSON but no notification is answered 400 and stores nothing', async () => {
    const r = await rig();
    const body = JSON.stringify({ hello: 'world' });
    expect((await send(r, { body, headers: signed(body) })).status).toBe(400);
    expect(r.lines.some((l) => l.code === 'API_BAD_RESPONSE' && l.msg === 'malformed event dropped')).toBe(true);
    expect(r.store.listEvents()).toEqual([]);
  });

  it('an event the store cannot take is answered 500 (delivered again), acted on in memory, and the receiver goes on', async () => {
    const r = await rig();
    r.store.close();
    const body = notification('ev-broken');
    expect((await send(r, { body, headers: signed(body) })).status).toBe(500);
    expect(r.lines.some((l) => l.level === 'error' && l.code === 'STORE_FAILED')).toBe(true);
    expect(r.acted).toEqual(['ev-broken']);
    const body2 = notification('ev-after');
    expect((await send(r, { body: body2, headers: signed(body2) })).status).toBe(500);
    expect(r.receiver.stats()).toMatchObject({ accepted: 0, failed: 2 });
  });
});

describe('webhook receiver: refused calls change nothing', () => {
  const body = notification('ev-x');
  const good = signPayload(body, secret);
  const cases: [string, Record<string, string | string[]>][] = [
    ['missing', {}],
    ['empty', { 'x-payload-signature': '' }],
    ['blank', { 'x-payload-signature': '   ' }],
    ['too short', { 'x-payload-signature': good.slice(0, 43) }],
    ['too long', { 'x-payload-signature': `${good}A` }],
    ['hex encoding', { 'x-payload-signature': Buffer.from(good, 'base64').toString('hex') }],
    ['base64url encoding', { 'x-payload-signature': Buffer.from(good, 'base64').toString('base64url') }],
    ['unpadded', { 'x-payload-signature': good.replace(/=+$/, '') }],
    ['sha256= prefix', { 'x-payload-signature': `sha256=${good}` }],
    ['wrong key', signed(body, 'other-secret')],
    ['key with a trailing newline', signed(body, `${secret}\n`)],
    ['signature of the body without its last byte', { 'x-payload-signature': signPayload(body.slice(0, -1), secret) }],
    ['two signature headers', { 'x-payload-signature': [good, good] }],
    [
      'flipped bit',
      {
        'x-payload-signature': (() => {
          const b = Buffer.from(good, 'base64');
          b[0] = (b[0] ?? 0) ^ 1;
          return b.toString('base64');
        })(),
      },
    ],
  ];
  it.each(cases)('bad signature (%s) → 401, nothing stored', async (_name, headers) => {
    const r = await rig();
    const res = await send(r, { body, headers });
    expect(res.status).toBe(401);
    await settle();
    expect(r.store.listEvents()).toEqual([]);
    expect(r.receiver.stats()).toEqual({ accepted: 0, rejected: 1, failed: 0, evicted: 0 });
    expect(r.lines.some((l) => l.code === 'WEBHOOK_SIGNATURE_INVALID')).toBe(true);
  });

  it('a replayed signature on a body with another event id → 401', async () => {
    const r = await rig();
    const original = notification('ev-orig');
    const sig = signPayload(original, secret);
    expect((await send(r, { body: original, headers: { 'x-payload-signature': sig } })).status).toBe(200);
    const forged = original.replace('ev-orig', 'ev-forged');
    expect((await send(r, { body: forged, headers: { 'x-payload-signature': sig } })).status).toBe(401);
    await until(() => r.store.hasEvent('ev-orig'), 'original stored');
    await settle();
    expect(r.store.hasEvent('ev-forged')).toBe(false);
    // Re-encoding the same JSON (other whitespace) breaks the signature too.
    const reformatted = JSON.stringify(JSON.parse(original), null, 1);
    expect((await send(r, { body: reformatted, headers: { 'x-payload-signature': sig } })).status).toBe(401);
  });

  it('malformed JSON with a valid signature → 400', async () => {
    const r = await rig();
    for (const bad of ['{"eventId":', '', 'not json', '\u0000']) {
      expect((await send(r, { body: bad, headers: signed(bad) })).status, JSON.stringify(bad)).toBe(400);
    }
    await settle();
    expect(r.store.listEvents()).toEqual([]);
  });

  it('a body over the limit → 413, declared or streamed in chunks', async () => {
    const r = await rig({ maxBodyBytes: 1024 });
    const big = notification('ev-big', { padding: 'x'.repeat(2000) });
    expect((await send(r, { body: big, headers: signed(big) })).status).toBe(413);
    const chunks = Array.from({ length: 20 }, (_, i) => Buffer.from(i === 0 ? big.slice(0, 100) : 'x'.repeat(200)));
    expect((await send(r, { body: chunks, chunked: true, headers: signed(big) })).status).toBe(413);
    // A huge streamed body is cut off without being buffered.
    const huge = Array.from({ length: 64 }, () => Buffer.alloc(64 * 1024, 0x20));
    expect((await send(r, { body: huge, chunked: true, headers: signed(big) })).status).toBe(413);
    // Exactly at the limit is fine.
    const fits = notification('ev-fits', { padding: '' });
    const exact = notification('ev-fits', { padding: 'y'.repeat(1024 - Buffer.byteLength(fits)) });
    expect(Buffer.byteLength(exact)).toBe(1024);
    expect((await send(r, { body: exact, chunked: true, headers: signed(exact) })).status).toBe(200);
    await until(() => r.store.hasEvent('ev-fits'), 'stored');
    expect(r.store.listEvents().map((e) => e.eventId)).toEqual(['ev-fits']);
  });

  it('wrong path → 404, wrong method → 405 with Allow', async () => {
    const r = await rig();
    const body = notification('ev-p');
    expect((await send(r, { body, headers: signed(body), path: '/hooks/other' })).status).toBe(404);
    expect((await send(r, { body, headers: signed(body), path: '/hooks/spark/' })).status).toBe(404);
    const get = await send(r, { method: 'GET' });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect((await send(r, { body, headers: signed(body), method: 'PUT' })).status).toBe(405);
    // A query string does not change the path.
    expect((await send(r, { body, headers: signed(body), path: '/hooks/spark?x=1' })).status).toBe(200);
  });
});

describe('webhook receiver: connections', () => {
  it('beyond maxConnections, the oldest socket without a request makes room for a new one', async () => {
    const r = await rig({ maxConnections: 2 });
    const idle: Socket[] = [];
    const closed: boolean[] = [];
    for (let i = 0; i < 2; i++) {
      const s = connect({ host: r.url.hostname, port: Number(r.url.port) });
      await new Promise<void>((ok, ko) => s.once('connect', ok).once('error', ko));
      s.on('error', () => undefined);
      s.on('close', () => (closed[i] = true));
      idle.push(s);
    }
    await settle();
    const body = notification('ev-conn');
    expect((await send(r, { body, headers: signed(body) })).status).toBe(200);
    await until(() => closed[0] === true, 'oldest idle socket closed');
    expect(closed[1]).toBeUndefined();
    expect(r.receiver.stats().evicted).toBeGreaterThanOrEqual(1);
    for (const s of idle) s.destroy();
  });

  it('keeps a connection alive after an accepted call, closes it after a refused one', async () => {
    const r = await rig();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(() => agent.destroy());
    const ports = new Set<number>();
    agent.on('free', (socket) => ports.add((socket as Socket).localPort ?? 0));
    for (const id of ['ev-ka1', 'ev-ka2', 'ev-ka3']) {
      const body = notification(id);
      const res = await send(r, { body, headers: signed(body), agent });
      expect(res.status).toBe(200);
      expect(res.headers.connection).toBe('keep-alive');
    }
    expect(ports.size).toBe(1);
    const refused = await send(r, { body: '{}', headers: { 'x-payload-signature': 'x' }, agent });
    expect(refused.status).toBe(401);
    expect(refused.headers.connection).toBe('close');
  });
});

describe('webhook receiver: property', () => {
  it('arbitrary bodies and headers never crash it nor store anything unless correctly signed', async () => {
    const r = await rig({ maxBodyBytes: 4096 });
    const headerValue = fc.string({ unit: fc.constantFrom(...'abcXYZ019+/=_- .:'.split('')), maxLength: 60 });
    const bodyArb = fc.oneof(
      fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
      fc.json().map((j) => Buffer.from(j)),
      fc.string({ maxLength: 16 }).map((id) => Buffer.from(notification(`p-${id}`))),
    );
    let signedOk = 0;
    await fc.assert(
      fc.asyncProperty(
        bodyArb,
        fc.oneof(fc.constant('none'), fc.constant('good'), fc.constant('wrongKey'), headerValue),
        fc.constantFrom('POST', 'PUT', 'GET'),
        async (body, sig, method) => {
          const before = r.store.listEvents().length;
          const headers: Record<string, string> = {};
          if (sig === 'good') headers['x-payload-signature'] = signPayload(body, secret);
          else if (sig === 'wrongKey') headers['x-payload-signature'] = signPayload(body, 'nope');
          else if (sig !== 'none') headers['x-payload-signature'] = sig;
          const res = await send(r, { body: method === 'GET' ? undefined : body, headers, method });
          expect([200, 400, 401, 405, 413]).toContain(res.status);
          if (res.status === 200) {
            expect(sig).toBe('good');
            signedOk++;
            return;
          }
          await new Promise((ok) => setImmediate(ok));
          expect(r.store.listEvents().length).toBe(before);
        },
      ),
      { numRuns: 150, seed: 8 },
    );
    expect(signedOk).toBeGreaterThan(0);
    // Every stored event came from a correctly signed call.
    await settle();
    for (const e of r.store.listEvents()) expect(e.eventId.startsWith('p-')).toBe(true);
    // Still serving.
    const body = notification('ev-final');
    expect((await send(r, { body, headers: signed(body) })).status).toBe(200);
  });
});
