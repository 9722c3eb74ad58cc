import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { isWattshiftError } from '../src/errors.js';
import { createLogger, silentLogger } from '../src/log.js';
import { createSparkClient, type SparkClient } from '../src/spark/client.js';
import { createTokenSource } from '../src/spark/oauth.js';
import { JumpClock, json, startStub, type StubServer } from './fixtures/spark/stub-server.js';

const user = { userId: 'u1' };
let stub: StubServer;
let client: SparkClient | undefined;

afterEach(async () => {
  await client?.close();
  client = undefined;
  await stub?.close();
});

function makeClient(clock: ManualClock | JumpClock, extra: Partial<Parameters<typeof createSparkClient>[0]> = {}): SparkClient {
  client = createSparkClient({
    baseUrl: `${stub.url}/energy-coordination/v1`,
    authUrl: stub.url,
    clientId: 'partner-a',
    clientSecret: 's3cret-value',
    clock,
    logger: silentLogger(),
    retry: { random: () => 0.5 },
    ...extra,
  });
  return client;
}

describe('client credentials', () => {
  it('posts the form to {authUrl}/connect/token and sends the bearer token', async () => {
    stub = await startStub(() => json(user));
    const c = makeClient(new ManualClock(0));
    await c.getUser('u1');
    const [tokenReq] = stub.tokenRequests();
    expect(tokenReq?.method).toBe('POST');
    expect(tokenReq?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(tokenReq?.body))).toEqual({
      grant_type: 'client_credentials',
      client_id: 'partner-a',
      client_secret: 's3cret-value',
    });
    expect(stub.apiRequests()[0]?.headers.authorization).toBe('Bearer tok-1');
  });

  it('fetches one or two tokens for an hour of requests, not one per request', async () => {
    stub = await startStub(() => json(user));
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const c = makeClient(clock);
    for (let minute = 0; minute < 60; minute++) {
      await c.getUser('u1');
      await c.getUser('u1');
      await clock.advance(60_000);
    }
    expect(stub.apiRequests()).toHaveLength(120);
    expect(stub.tokenRequests().length).toBeGreaterThanOrEqual(1);
    expect(stub.tokenRequests().length).toBeLessThanOrEqual(2);
    expect(c.tokens.fetchCount).toBe(stub.tokenRequests().length);
  });

  it('refreshes ahead of expires_in, and uses 60 minutes when expires_in is absent', async () => {
    stub = await startStub(() => json(user));
    let n = 0;
    stub.onToken = () => json({ access_token: `short-${++n}`, ...(n === 1 ? { expires_in: 600 } : {}) });
    const clock = new ManualClock(0);
    const c = makeClient(clock);
    await c.getUser('u1');
    await clock.advance(4 * 60_000); // before 600 s - 5 min
    await c.getUser('u1');
    expect(stub.tokenRequests()).toHaveLength(1);
    await clock.advance(60_000 + 1); // inside the refresh window
    await c.getUser('u1');
    expect(stub.tokenRequests()).toHaveLength(2);
    // The second token has no expires_in: 60 min lifetime, refreshed 5 min early.
    await clock.advance(54 * 60_000);
    await c.getUser('u1');
    expect(stub.tokenRequests()).toHaveLength(2);
    await clock.advance(60_000 + 1);
    await c.getUser('u1');
    expect(stub.tokenRequests()).toHaveLength(3);
    expect(stub.apiRequests().at(-1)?.headers.authorization).toBe('Bearer short-3');
  });

  it('fetches a single token however many requests wait (single flight)', async () => {
    stub = await startStub(() => json(user));
    const defaultToken = stub.onToken;
    stub.onToken = async (r) => ({ ...(await defaultToken(r)), delayMs: 100 });
    const c = makeClient(new ManualClock(0));
    await Promise.all(Array.from({ length: 25 }, () => c.getUser('u1')));
    expect(stub.tokenRequests()).toHaveLength(1);
    expect(stub.apiRequests()).toHaveLength(25);
  });

  it('on 401 refreshes the token once and retries once', async () => {
    stub = await startStub((r) => (r.headers.authorization === 'Bearer tok-1' ? { status: 401 } : json(user)));
    const c = makeClient(new ManualClock(0));
    await expect(c.getUser('u1')).resolves.toEqual(user);
    expect(stub.tokenRequests()).toHaveLength(2);
    expect(stub.apiRequests().map((r) => r.headers.authorization)).toEqual(['Bearer tok-1', 'Bearer tok-2']);
  });

  it('concurrent 401s with the same stale token cause one refresh', async () => {
    stub = await startStub((r) => (r.headers.authorization === 'Bearer tok-1' ? { status: 401, delayMs: 20 } : json(user)));
    const c = makeClient(new ManualClock(0));
    await Promise.all(Array.from({ length: 10 }, () => c.getUser('u1')));
    expect(stub.tokenRequests()).toHaveLength(2);
  });

  it('a second 401 after the refresh is AUTH_REJECTED, without a loop', async () => {
    stub = await startStub(() => ({ status: 401 }));
    const c = makeClient(new ManualClock(0));
    const err = await c.getUser('u1').catch((e: unknown) => e);
    expect(isWattshiftError(err, 'AUTH_REJECTED')).toBe(true);
    expect(stub.apiRequests()).toHaveLength(2);
    expect(stub.tokenRequests()).toHaveLength(2);
  });

  it.each([400, 401])('a %i from the token endpoint is AUTH_REJECTED and not retried', async (status) => {
    stub = await startStub(() => json(user));
    stub.onToken = () => json({ error: 'invalid_client' }, status);
    const c = makeClient(new JumpClock());
    const err = await c.getUser('u1').catch((e: unknown) => e);
    expect(isWattshiftError(err, 'AUTH_REJECTED')).toBe(true);
    expect(String((err as Error).message)).toContain('invalid_client');
    expect(stub.tokenRequests()).toHaveLength(1);
    expect(stub.apiRequests()).toHaveLength(0);
  });

  it('after rejected credentials, token requests pause with a growing delay, then recover', async () => {
    stub = await startStub(() => json(user));
    let reject = true;
    stub.onToken = () => (reject ? json({ error: 'invalid_client' }, 401) : json({ access_token: 'tok-ok', expires_in: 3600 }));
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const c = makeClient(clock);
    const rejected = async (): Promise<boolean> => isWattshiftError(await c.getUser('u1').catch((e: unknown) => e), 'AUTH_REJECTED');
    expect(await rejected()).toBe(true);
    // Within the first pause (1 min) every caller gets the rejection without a request.
    await clock.advance(30_000);
    expect(await rejected()).toBe(true);
    expect(stub.tokenRequests()).toHaveLength(1);
    await clock.advance(31_000);
    expect(await rejected()).toBe(true);
    expect(stub.tokenRequests()).toHaveLength(2);
    // The next pause is twice as long.
    await clock.advance(90_000);
    expect(await rejected()).toBe(true);
    expect(stub.tokenRequests()).toHaveLength(2);
    reject = false;
    await clock.advance(31_000);
    await expect(c.getUser('u1')).resolves.toMatchObject({ userId: user.userId });
    expect(stub.tokenRequests()).toHaveLength(3);
  });

  it('a 503 from the token endpoint is retried with backoff', async () => {
    stub = await startStub(() => json(user));
    const defaultToken = stub.onToken;
    let calls = 0;
    stub.onToken = (r) => (++calls < 3 ? { status: 503 } : defaultToken(r));
    const clock = new JumpClock();
    const c = makeClient(clock);
    await expect(c.getUser('u1')).resolves.toEqual(user);
    expect(stub.tokenRequests()).toHaveLength(3);
    expect(clock.sleeps).toHaveLength(2);
  });

  it('a token response without access_token is API_BAD_RESPONSE', async () => {
    stub = await startStub(() => json(user));
    stub.onToken = () => json({ token_type: 'Bearer' });
    const c = makeClient(new ManualClock(0));
    await expect(c.getUser('u1')).rejects.toMatchObject({ code: 'API_BAD_RESPONSE' });
  });

  it('keeps using a still-valid token when an early refresh fails', async () => {
    stub = await startStub(() => json(user));
    const defaultToken = stub.onToken;
    stub.onToken = (r) => (stub.issuedTokens.length === 0 ? defaultToken(r) : { status: 503 });
    const clock = new ManualClock(0);
    const c = makeClient(clock, { retry: { attempts: 1 } });
    await c.getUser('u1');
    await clock.advance(57 * 60_000); // in the refresh window, not expired
    await expect(c.getUser('u1')).resolves.toEqual(user);
    expect(stub.apiRequests().at(-1)?.headers.authorization).toBe('Bearer tok-1');
    await clock.advance(4 * 60_000); // expired now
    await expect(c.getUser('u1')).rejects.toMatchObject({ code: 'API_UNAVAILABLE' });
  });

  it('never writes the token or the secret to the log', async () => {
    stub = await startStub((r) => (r.headers.authorization === 'Bearer tok-1' ? { status: 401 } : json(user)));
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    const logger = createLogger({ level: 'trace', destination });
    const clock = new JumpClock();
    const source = createTokenSource({ authUrl: stub.url, clientId: 'partner-a', clientSecret: 's3cret-value', clock, logger });
    const c = makeClient(clock, { logger, tokens: source });
    await c.getUser('u1');
    stub.onRequest = () => ({ status: 503 });
    await c.getUser('u1').catch(() => undefined);
    await source.close();
    const all = lines.join('');
    expect(lines.length).toBeGreaterThan(2);
    for (const secret of ['tok-1', 'tok-2', 's3cret-value']) expect(all).not.toContain(secret);
  });
});
