/**
 * The undici transport against real local servers that misbehave: silent TLS, silent HTTP,
 * stalled and trickling bodies, oversized bodies, cut connections, self-signed certificates, and
 * a real forward proxy for `spark.proxyUrl`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type RequestListener } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/log.js';
import { createSparkConnection, type SparkConnectionOptions } from '../src/spark/connection.js';
import { createHttpTransport, type HttpRequest, type HttpTransport } from '../src/spark/http.js';
import { failure, JumpClock } from './fixtures/spark/stub-server.js';
import { selfSignedCert } from './helpers/self-signed.js';

interface Peer {
  url: string;
  /** Every TCP connection the server accepted, open or closed. */
  sockets: Socket[];
}

const servers: Server[] = [];
const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  for (const s of servers.splice(0)) await new Promise<void>((r) => s.close(() => r()));
});

async function listen(server: Server, scheme = 'http'): Promise<Peer> {
  const sockets: Socket[] = [];
  server.on('connection', (s: Socket) => sockets.push(s));
  cleanups.push(() => sockets.forEach((s) => s.destroy()));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`, sockets };
}

const http = (handler: RequestListener): Promise<Peer> => listen(createHttpServer(handler));
const closed = (s: Socket): Promise<void> => (s.destroyed ? Promise.resolve() : new Promise((r) => s.once('close', () => r())));

/** A transport with its own pool, no retries unless asked, no auth. */
function transport(url: string, options: SparkConnectionOptions & { attempts?: number } = {}): HttpTransport {
  const t = createHttpTransport({
    baseUrl: url,
    clock: new JumpClock(),
    logger: silentLogger(),
    retry: { attempts: options.attempts ?? 1 },
    ...options,
  });
  cleanups.push(() => t.close());
  return t;
}

const get = (extra: Partial<HttpRequest> = {}): HttpRequest => ({ method: 'GET', path: '/', auth: false, operation: 'probe', ...extra });

describe('requests', () => {
  it('sends method, headers and a JSON body and returns status, headers and text', async () => {
    let seen = { method: '', type: '', length: '', body: '' };
    const peer = await http((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen = { method: req.method ?? '', type: req.headers['content-type'] ?? '', length: req.headers['content-length'] ?? '', body };
        res.writeHead(201, { 'x-answer': 'yes' }).end('created');
      });
    });
    const res = await transport(peer.url).send(get({ method: 'POST', path: '/things', json: { berry: 'blåbær' } }));
    expect(res).toMatchObject({ status: 201, text: 'created', headers: { 'x-answer': 'yes' } });
    const body = '{"berry":"blåbær"}';
    expect(seen).toEqual({ method: 'POST', type: 'application/json', length: String(Buffer.byteLength(body)), body });
  });

  it('decodes a UTF-8 character split across body chunks', async () => {
    const bytes = Buffer.from('pris: 1,50 € / kWh', 'utf8');
    const cut = bytes.indexOf(0xe2) + 1; // inside the three bytes of '€'
    const peer = await http((_req, res) => {
      res.writeHead(200);
      res.write(bytes.subarray(0, cut));
      setTimeout(() => res.end(bytes.subarray(cut)), 30);
    });
    expect((await transport(peer.url).send(get())).text).toBe('pris: 1,50 € / kWh');
  });
});

describe('timeouts', () => {
  it('CONNECT_TIMEOUT when the TLS handshake never completes', async () => {
    // Reads the ClientHello and never answers it.
    const peer = await listen(
      createNetServer((s) => s.resume()),
      'https',
    );
    const err = await failure(transport(peer.url, { timeoutsMs: { connect: 150 } }).send(get()));
    expect(err.details?.networkError).toBe('CONNECT_TIMEOUT');
    await closed(peer.sockets[0]!);
  });

  it('HEADERS_TIMEOUT when the server accepts and never answers, and the socket is not reused', async () => {
    let calls = 0;
    const peer = await http((_req, res) => {
      if (++calls > 1) res.end('late');
    });
    const t = transport(peer.url, { timeoutsMs: { headers: 150 } });
    expect((await failure(t.send(get()))).details?.networkError).toBe('HEADERS_TIMEOUT');
    await closed(peer.sockets[0]!);
    expect((await t.send(get())).text).toBe('late');
    expect(peer.sockets).toHaveLength(2);
  });

  it('BODY_TIMEOUT when the body stalls, and a stalled body is not fetched again', async () => {
    let calls = 0;
    const peer = await http((_req, res) => {
      calls++;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '40' });
      res.write('{"userId":');
    });
    const err = await failure(transport(peer.url, { timeoutsMs: { body: 150 }, attempts: 3 }).send(get()));
    expect(err.details?.networkError).toBe('BODY_TIMEOUT');
    expect(calls).toBe(1);
    await closed(peer.sockets[0]!);
  });

  it('a body that keeps trickling is not cut by the idle body timeout', async () => {
    const peer = await http((_req, res) => {
      res.writeHead(200);
      let n = 0;
      const tick = setInterval(() => (++n < 6 ? res.write(`${n}`) : (clearInterval(tick), res.end())), 40);
    });
    expect((await transport(peer.url, { timeoutsMs: { body: 300 } }).send(get())).text).toBe('12345');
  });
});

describe('response size limit', () => {
  it('accepts a body of exactly the limit', async () => {
    const peer = await http((_req, res) => res.end('x'.repeat(1000)));
    expect((await transport(peer.url, { maxResponseBytes: 1000 }).send(get())).text).toHaveLength(1000);
  });

  it('API_BAD_RESPONSE for a larger body streamed without a length, not retried', async () => {
    let calls = 0;
    const peer = await http((_req, res) => {
      calls++;
      res.writeHead(200);
      res.end('x'.repeat(5000));
    });
    const err = await failure(transport(peer.url, { maxResponseBytes: 1000, attempts: 3 }).send(get()));
    expect(err.code).toBe('API_BAD_RESPONSE');
    expect(err.message).toContain('1000 bytes');
    expect(calls).toBe(1);
  });

  it('API_BAD_RESPONSE at once for a larger content-length, before any body byte', async () => {
    const peer = await http((_req, res) => res.writeHead(200, { 'content-length': '5000' }).flushHeaders());
    const err = await failure(transport(peer.url, { maxResponseBytes: 1000, timeoutsMs: { body: 10_000 } }).send(get()));
    expect(err.code).toBe('API_BAD_RESPONSE');
  });
});

describe('connections', () => {
  it('a connection cut mid-body is ECONNRESET, not a truncated success', async () => {
    const peer = await http((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const err = await failure(transport(peer.url).send(get()));
    expect(err.code).toBe('API_UNAVAILABLE');
    expect(err.details?.networkError).toBe('ECONNRESET');
  });

  it('an abort mid-request closes the socket and rejects with the reason', async () => {
    const peer = await http(() => undefined);
    const ac = new AbortController();
    const p = transport(peer.url).send(get({ signal: ac.signal }));
    while (peer.sockets.length < 1) await new Promise((r) => setTimeout(r, 5));
    ac.abort(new Error('shutting down'));
    await expect(p).rejects.toThrow('shutting down');
    await closed(peer.sockets[0]!);
  });

  it('an already aborted signal sends nothing', async () => {
    const peer = await http((_req, res) => res.end());
    await expect(transport(peer.url).send(get({ signal: AbortSignal.abort(new Error('too late')) }))).rejects.toThrow('too late');
    expect(peer.sockets).toHaveLength(0);
  });

  it('opens at most 4 sockets per origin however many calls wait, and close() ends them', async () => {
    const peer = await http((_req, res) => setTimeout(() => res.end('ok'), 30));
    const t = transport(peer.url);
    await Promise.all(Array.from({ length: 8 }, () => t.send(get())));
    expect(peer.sockets).toHaveLength(4);
    await t.close();
    await Promise.all(peer.sockets.map(closed));
  });
});

describe('proxy', () => {
  /** A forward proxy that tunnels CONNECT requests and counts them. */
  async function proxy(): Promise<Peer & { tunnels: string[] }> {
    const tunnels: string[] = [];
    const server = createHttpServer((_req, res) => res.writeHead(405).end());
    server.on('connect', (req, client: Socket, head: Buffer) => {
      tunnels.push(req.url ?? '');
      const [host, port] = (req.url ?? '').split(':');
      const upstream = connect(Number(port), host!, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client).pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      cleanups.push(() => upstream.destroy());
    });
    return { ...(await listen(server)), tunnels };
  }

  it('spark.proxyUrl sends requests through the proxy', async () => {
    const peer = await http((req, res) => res.end(`hello ${req.url}`));
    const p = await proxy();
    const res = await transport(peer.url, { proxyUrl: p.url }).send(get({ path: '/via' }));
    expect(res.text).toBe('hello /via');
    expect(p.tunnels).toEqual([new URL(peer.url).host]);
  });

  it('a proxy that refuses is API_UNAVAILABLE', async () => {
    const peer = await http((_req, res) => res.end('never'));
    const refusing = createHttpServer();
    refusing.on('connect', (_req, client: Socket) => client.end('HTTP/1.1 403 Forbidden\r\n\r\n'));
    const p = await listen(refusing);
    const err = await failure(transport(peer.url, { proxyUrl: p.url }).send(get()));
    expect(err.code).toBe('API_UNAVAILABLE');
  });
});

describe('TLS', () => {
  let dir = '';
  let cert = '';
  let key = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'wattshift-tls-'));
    ({ cert, key } = selfSignedCert(dir));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('verifies the certificate against the default CAs', async () => {
    const peer = await listen(
      createHttpsServer({ cert, key }, (_req, res) => res.end('secret')),
      'https',
    );
    const err = await failure(transport(peer.url).send(get()));
    expect(err.details?.networkError).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
  });

  it('a shared connection is one pool: closing it fails the clients that use it', async () => {
    const peer = await http((_req, res) => res.end('ok'));
    const connection = createSparkConnection();
    const t = createHttpTransport({ baseUrl: peer.url, clock: new JumpClock(), logger: silentLogger(), connection });
    expect((await t.send(get())).text).toBe('ok');
    await t.close();
    expect((await t.send(get())).text).toBe('ok');
    await connection.close();
    expect((await failure(t.send(get()))).code).toBe('API_UNAVAILABLE');
  });
});
