import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { createSparkClient, type SparkClient } from '../src/spark/client.js';
import { createSparkConnection } from '../src/spark/connection.js';
import { parseRetryAfter, serverMessage } from '../src/spark/http.js';
import { failure, JumpClock, json, startStub, type StubServer } from './fixtures/spark/stub-server.js';

const user = { userId: 'u1' };
let stub: StubServer | undefined;
let client: SparkClient | undefined;

afterEach(async () => {
  await client?.close();
  client = undefined;
  await stub?.close();
  stub = undefined;
});

function makeClient(clock: ManualClock | JumpClock, extra: Partial<Parameters<typeof createSparkClient>[0]> = {}, base = stub!.url): SparkClient {
  client = createSparkClient({
    baseUrl: `${base}/energy-coordination/v1`,
    authUrl: stub?.url ?? base,
    clientId: 'partner-a',
    clientSecret: 'secret',
    clock,
    logger: silentLogger(),
    retry: { random: () => 0.5 },
    ...extra,
  });
  return client;
}

/** A ManualClock that counts `sleep` calls, so a test can wait until the client is waiting. */
class CountingClock extends ManualClock {
  sleepCalls = 0;
  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleepCalls++;
    return super.sleep(ms, signal);
  }
}

describe('retries', () => {
  it('honours Retry-After seconds on 429, waiting on the injected clock', async () => {
    let calls = 0;
    stub = await startStub(() => (++calls === 1 ? json('slow down', 429, { 'retry-after': '7' }) : json(user)));
    const clock = new JumpClock();
    await expect(makeClient(clock).getUser('u1')).resolves.toEqual(user);
    expect(clock.sleeps).toEqual([7000]);
    expect(stub.apiRequests()).toHaveLength(2);
  });

  it('honours a Retry-After HTTP date', async () => {
    const clock = new JumpClock(Date.UTC(2026, 2, 3, 12, 0, 0));
    let calls = 0;
    stub = await startStub(() => (++calls === 1 ? { status: 429, headers: { 'retry-after': 'Tue, 03 Mar 2026 12:00:30 GMT' } } : json(user)));
    await makeClient(clock).getUser('u1');
    expect(clock.sleeps).toEqual([30_000]);
  });

  it('does not return before the Retry-After time has passed on a ManualClock', async () => {
    let calls = 0;
    stub = await startStub(() => (++calls === 1 ? { status: 429, headers: { 'retry-after': '120' } } : json(user)));
    const clock = new CountingClock(0);
    let done = false;
    const p = makeClient(clock)
      .getUser('u1')
      .then((v) => {
        done = true;
        return v;
      });
    while (clock.sleepCalls < 1) await new Promise((r) => setTimeout(r, 5));
    await clock.advance(119_000);
    await new Promise((r) => setTimeout(r, 20));
    expect(done).toBe(false);
    expect(stub.apiRequests()).toHaveLength(1);
    await clock.advance(1000);
    await expect(p).resolves.toEqual(user);
    expect(stub.apiRequests()).toHaveLength(2);
  });

  it('gives up at once when Retry-After exceeds the allowed wait', async () => {
    stub = await startStub(() => ({ status: 429, headers: { 'retry-after': '3600' } }));
    const clock = new JumpClock();
    const err = await failure(makeClient(clock, { retry: { maxRetryAfterMs: 60_000 } }).getUser('u1'));
    expect(err.code).toBe('API_UNAVAILABLE');
    expect(err.details?.status).toBe(429);
    expect(clock.sleeps).toEqual([]);
  });

  it('retries 503 with exponential backoff and jitter, then succeeds', async () => {
    let calls = 0;
    stub = await startStub(() => (++calls <= 2 ? { status: 503 } : json(user)));
    const clock = new JumpClock();
    await expect(makeClient(clock, { retry: { baseDelayMs: 1000, random: () => 1 } }).getUser('u1')).resolves.toEqual(user);
    expect(clock.sleeps).toEqual([1000, 2000]);
  });

  it('jitter spreads the backoff between half and all of the step', async () => {
    stub = await startStub(() => ({ status: 502 }));
    const clock = new JumpClock();
    const err = await failure(makeClient(clock, { retry: { attempts: 4, baseDelayMs: 1000, random: () => 0 } }).getUser('u1'));
    expect(err.code).toBe('API_UNAVAILABLE');
    expect(clock.sleeps).toEqual([500, 1000, 2000]);
    expect(stub.apiRequests()).toHaveLength(4);
  });

  it.each([502, 503, 504])('gives up after the attempts on %i with API_UNAVAILABLE', async (status) => {
    stub = await startStub(() => ({ status }));
    const err = await failure(makeClient(new JumpClock(), { retry: { attempts: 3 } }).listEvents());
    expect(err.code).toBe('API_UNAVAILABLE');
    expect(err.retryable).toBe(true);
    expect(stub.apiRequests()).toHaveLength(3);
  });

  it('does not retry a 500', async () => {
    stub = await startStub(() => ({ status: 500 }));
    const err = await failure(makeClient(new JumpClock()).getUser('u1'));
    expect(err.code).toBe('API_UNAVAILABLE');
    expect(stub.apiRequests()).toHaveLength(1);
  });

  it('retries a refused connection, also for POST', async () => {
    // A port with nothing listening: take one and close it.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    stub = await startStub(() => json(user));
    const clock = new JumpClock();
    const c = makeClient(clock, { retry: { attempts: 3 } }, `http://127.0.0.1:${port}`);
    const err = await failure(c.createUser('u1'));
    expect(err.code).toBe('API_UNAVAILABLE');
    expect(err.details?.networkError).toBe('ECONNREFUSED');
    expect(clock.sleeps).toHaveLength(2);
  });
});

describe('errors', () => {
  it('a 400 with a plain string body is API_REJECTED, not retried, and keeps the message', async () => {
    stub = await startStub(() => json('Location c3d4 has neither meterPointIds nor coordinates', 400));
    const err = await failure(makeClient(new JumpClock()).createLocation('u1', { locationId: 'c3d4' }));
    expect(err.code).toBe('API_REJECTED');
    expect(err.retryable).toBe(false);
    expect(err.details?.serverMessage).toBe('Location c3d4 has neither meterPointIds nor coordinates');
    expect(err.message).toContain('neither meterPointIds');
    expect(stub.apiRequests()).toHaveLength(1);
  });

  it('a 400 ProblemDetails keeps title, detail and field errors', async () => {
    stub = await startStub(() => ({
      status: 400,
      headers: { 'content-type': 'application/problem+json' },
      body: JSON.stringify({
        title: 'One or more validation errors occurred.',
        status: 400,
        errors: { webhookUrl: ['The webhookUrl field is required.'] },
      }),
    }));
    const err = await failure(makeClient(new JumpClock()).listEvents());
    expect(err.code).toBe('API_REJECTED');
    expect(err.details?.serverMessage).toBe('One or more validation errors occurred. - webhookUrl: The webhookUrl field is required.');
  });

  it.each([
    [404, 'API_NOT_FOUND'],
    [409, 'API_CONFLICT'],
    [403, 'AUTH_REJECTED'],
    [422, 'API_REJECTED'],
  ])('maps %i to %s without retrying', async (status, code) => {
    stub = await startStub(() => ({ status }));
    const err = await failure(makeClient(new JumpClock()).getUser('u1'));
    expect(err.code).toBe(code);
    expect(err.details?.status).toBe(status);
    expect(stub.apiRequests()).toHaveLength(1);
  });

  it('malformed JSON is API_BAD_RESPONSE', async () => {
    stub = await startStub(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"userId": "u1"' }));
    const err = await failure(makeClient(new JumpClock()).getUser('u1'));
    expect(err.code).toBe('API_BAD_RESPONSE');
    expect(stub.apiRequests()).toHaveLength(1);
  });

  it('a body that breaks the contract is API_BAD_RESPONSE naming the field', async () => {
    stub = await startStub(() => json({ pagination: { totalRecords: 1, pageSize: 10, currentPage: 1 }, events: [{ createdAt: 'x' }] }));
    const err = await failure(makeClient(new JumpClock()).listEvents());
    expect(err.code).toBe('API_BAD_RESPONSE');
    expect(err.message).toContain('events.0.id');
  });

  it('a request that breaks the contract is refused locally', async () => {
    stub = await startStub(() => json(user));
    const c = makeClient(new JumpClock());
    const err = await failure(c.createLocation('u1', { locationId: 'l1', extra: 1 } as never));
    expect(err.code).toBe('API_REJECTED');
    expect(err.details?.local).toBe(true);
    expect(stub.requests).toHaveLength(0);
  });
});

describe('timeouts', () => {
  it('a server that never answers is API_UNAVAILABLE after the headers timeout', async () => {
    stub = await startStub(() => ({ hang: true }));
    const c = makeClient(new JumpClock(), { timeoutsMs: { headers: 150 }, retry: { attempts: 2 } });
    const err = await failure(c.getUser('u1'));
    expect(err.code).toBe('API_UNAVAILABLE');
    expect(err.details?.networkError).toBe('HEADERS_TIMEOUT');
    expect(stub.apiRequests()).toHaveLength(2);
  });

  it('a POST that timed out after being sent is not repeated', async () => {
    stub = await startStub(() => ({ hang: true }));
    const c = makeClient(new JumpClock(), { timeoutsMs: { headers: 150 }, retry: { attempts: 3 } });
    const err = await failure(
      c.postReport({ eventId: 'e1', payloads: [{ payloadType: 'ResourceLPCAcknowledgement', acknowledgedTargets: [], declinedTargets: [] }] }),
    );
    expect(err.code).toBe('API_UNAVAILABLE');
    expect(stub.apiRequests()).toHaveLength(1);
  });

  it('a body that stalls is API_UNAVAILABLE after the body timeout', async () => {
    const { createServer: createHttp } = await import('node:http');
    const server = createHttp((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"userId":');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    stub = await startStub();
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const c = makeClient(new JumpClock(), { timeoutsMs: { body: 150 }, retry: { attempts: 1 } }, base);
      const err = await failure(c.getUser('u1'));
      expect(err.code).toBe('API_UNAVAILABLE');
      expect(err.details?.networkError).toBe('BODY_TIMEOUT');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('a connect timeout proves the request was not sent: a POST is retried', async () => {
    // A TLS peer that reads the ClientHello and never answers it.
    const sockets: Socket[] = [];
    const silent = createServer((s) => {
      sockets.push(s);
      s.resume();
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    stub = await startStub(() => json(user));
    const clock = new JumpClock();
    try {
      const c = makeClient(
        clock,
        { timeoutsMs: { connect: 150 }, retry: { attempts: 2 } },
        `https://127.0.0.1:${(silent.address() as AddressInfo).port}`,
      );
      const err = await failure(c.createUser('u1'));
      expect(err.code).toBe('API_UNAVAILABLE');
      expect(err.details?.networkError).toBe('CONNECT_TIMEOUT');
      expect(sockets).toHaveLength(2);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('an abort signal stops a request without retries', async () => {
    stub = await startStub(() => ({ hang: true }));
    const c = makeClient(new JumpClock());
    const ac = new AbortController();
    const p = c.getUser('u1', { signal: ac.signal });
    while (stub.apiRequests().length < 1) await new Promise((r) => setTimeout(r, 5));
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    expect(stub.apiRequests()).toHaveLength(1);
  });
});

describe('response size and connections', () => {
  it('a body over the cap is API_BAD_RESPONSE and not retried', async () => {
    stub = await startStub(() => json({ userId: 'u'.repeat(5000) }));
    const err = await failure(makeClient(new JumpClock(), { maxResponseBytes: 1000 }).getUser('u1'));
    expect(err.code).toBe('API_BAD_RESPONSE');
    expect(err.details?.maxResponseBytes).toBe(1000);
    expect(err.message).toContain('exceeds 1000 bytes');
    expect(stub.apiRequests()).toHaveLength(1);
  });

  it('pools keep-alive connections and close() ends them', async () => {
    const { createServer: createHttp } = await import('node:http');
    const server = createHttp((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(user)));
    const sockets: Socket[] = [];
    server.on('connection', (s: Socket) => sockets.push(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const tokens = { fetchCount: 0, getToken: () => Promise.resolve('t'), invalidate: () => undefined, close: () => Promise.resolve() };
    try {
      const c = makeClient(new JumpClock(), { tokens }, base);
      for (let i = 0; i < 6; i++) await c.getUser('u1');
      // undici frees a socket a tick after the body ends, so back-to-back calls may open a second one; never one per call.
      expect(sockets.length).toBeGreaterThan(0);
      expect(sockets.length).toBeLessThanOrEqual(2);
      await c.close();
      // Idle pooled sockets also close on their own after 4 s: close() must be quicker than that.
      const ended = await Promise.all(
        sockets.map(
          (s) =>
            new Promise<boolean>((r) => {
              setTimeout(() => r(false), 2000);
              if (s.destroyed) r(true);
              s.once('close', () => r(true));
            }),
        ),
      );
      expect(ended.every(Boolean)).toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('a shared connection serves several clients and outlives their close()', async () => {
    const { createServer: createHttp } = await import('node:http');
    const server = createHttp((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(user)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const tokens = { fetchCount: 0, getToken: () => Promise.resolve('t'), invalidate: () => undefined, close: () => Promise.resolve() };
    const connection = createSparkConnection();
    try {
      const a = makeClient(new JumpClock(), { tokens, connection }, base);
      const b = createSparkClient({
        baseUrl: `${base}/energy-coordination/v1`,
        authUrl: base,
        clientId: 'p',
        clientSecret: 's',
        clock: new JumpClock(),
        logger: silentLogger(),
        tokens,
        connection,
      });
      await a.getUser('u1');
      await a.close();
      await expect(b.getUser('u1')).resolves.toEqual(user);
      await b.close();
      await connection.close();
      const err = await failure(b.getUser('u1'));
      expect(err.code).toBe('API_UNAVAILABLE');
    } finally {
      await connection.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe('helpers', () => {
  it('parseRetryAfter reads seconds and HTTP dates, ignores garbage', () => {
    const now = Date.UTC(2026, 0, 1, 0, 0, 0);
    expect(parseRetryAfter('5', now)).toBe(5000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('-3', now)).toBeUndefined();
  });

  it('serverMessage handles strings, problem details, text and empty bodies', () => {
    expect(serverMessage('"bad things"')).toBe('bad things');
    expect(serverMessage('{"title":"Bad","detail":"very"}')).toBe('Bad - very');
    expect(serverMessage('plain text')).toBe('plain text');
    expect(serverMessage('')).toBeUndefined();
    expect(serverMessage('{"foo":1}')).toBe('{"foo":1}');
  });
});
