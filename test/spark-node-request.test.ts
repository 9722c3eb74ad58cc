/**
 * The raw request helper against real local servers that misbehave: silent TLS, silent HTTP,
 * stalled bodies, oversized bodies, cut connections, self-signed certificates.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type RequestListener } from 'node:http';
import { Agent as HttpsAgent, createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKeepAliveAgent, nodeRequest, RequestError } from '../src/spark/node-request.js';

interface Peer {
  url: string;
  /** Every TCP connection the server accepted, open or closed. */
  sockets: Socket[];
}

const servers: Server[] = [];
const cleanups: (() => void)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0)) c();
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
/** Whether `s` closes within 2 s: quicker than the agent's own 4 s idle timeout would close it. */
const closedSoon = (s: Socket): Promise<boolean> =>
  Promise.race([closed(s).then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 2000))]);

async function failure(p: Promise<unknown>): Promise<Error & { code?: string }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof Error)) throw new Error(`expected a rejection, got ${String(err)}`);
  return err;
}

describe('nodeRequest', () => {
  it('sends method, headers and body and returns status, headers and text', async () => {
    let seen = { method: '', type: '', length: '', body: '' };
    const peer = await http((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen = { method: req.method ?? '', type: req.headers['content-type'] ?? '', length: req.headers['content-length'] ?? '', body };
        res.writeHead(201, { 'x-answer': 'yes' }).end('created');
      });
    });
    const res = await nodeRequest(`${peer.url}/things`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'blåbær' });
    expect(res).toMatchObject({ status: 201, text: 'created', headers: { 'x-answer': 'yes' } });
    expect(seen).toEqual({ method: 'POST', type: 'text/plain', length: '8', body: 'blåbær' });
  });

  it('decodes a UTF-8 character split across body chunks', async () => {
    const bytes = Buffer.from('pris: 1,50 € / kWh', 'utf8');
    const cut = bytes.indexOf(0xe2) + 1; // inside the three bytes of '€'
    const peer = await http((_req, res) => {
      res.writeHead(200);
      res.write(bytes.subarray(0, cut));
      setTimeout(() => res.end(bytes.subarray(cut)), 30);
    });
    expect((await nodeRequest(peer.url)).text).toBe('pris: 1,50 € / kWh');
  });

  it('rejects a scheme other than http and https', async () => {
    await expect(nodeRequest('ftp://127.0.0.1/x')).rejects.toThrow('unsupported URL scheme');
  });
});

describe('timeouts', () => {
  it('CONNECT_TIMEOUT when the TLS handshake never completes', async () => {
    // Reads the ClientHello and never answers it.
    const peer = await listen(createNetServer((s) => s.resume()), 'https');
    const err = await failure(nodeRequest(peer.url, { timeoutsMs: { connect: 150 } }));
    expect(err).toBeInstanceOf(RequestError);
    expect(err.code).toBe('CONNECT_TIMEOUT');
    await closed(peer.sockets[0]!);
  });

  it('HEADERS_TIMEOUT when the server accepts and never answers, and the socket is not reused', async () => {
    let calls = 0;
    const peer = await http((_req, res) => {
      if (++calls > 1) res.end('late');
    });
    const agent = createKeepAliveAgent(peer.url);
    cleanups.push(() => agent.destroy());
    const err = await failure(nodeRequest(peer.url, { agent, timeoutsMs: { headers: 150 } }));
    expect(err.code).toBe('HEADERS_TIMEOUT');
    await closed(peer.sockets[0]!);
    expect((await nodeRequest(peer.url, { agent })).text).toBe('late');
    expect(peer.sockets).toHaveLength(2);
  });

  it('BODY_TIMEOUT when the body stalls, however long the whole response takes', async () => {
    const peer = await http((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"userId":');
    });
    const err = await failure(nodeRequest(peer.url, { timeoutsMs: { body: 150 } }));
    expect(err.code).toBe('BODY_TIMEOUT');
    await closed(peer.sockets[0]!);
  });

  it('a body that keeps trickling is not cut by the idle body timeout', async () => {
    const peer = await http((_req, res) => {
      res.writeHead(200);
      let n = 0;
      const tick = setInterval(() => (++n < 6 ? res.write(`${n}`) : (clearInterval(tick), res.end())), 40);
    });
    expect((await nodeRequest(peer.url, { timeoutsMs: { body: 150 } })).text).toBe('12345');
  });
});

describe('body cap', () => {
  it('accepts a body of exactly the cap', async () => {
    const peer = await http((_req, res) => res.end('x'.repeat(1000)));
    expect((await nodeRequest(peer.url, { maxBodyBytes: 1000 })).text).toHaveLength(1000);
  });

  it('BODY_TOO_LARGE for a larger body streamed without a length', async () => {
    const peer = await http((_req, res) => {
      res.writeHead(200);
      res.end('x'.repeat(5000));
    });
    const err = await failure(nodeRequest(peer.url, { maxBodyBytes: 1000 }));
    expect(err.code).toBe('BODY_TOO_LARGE');
    expect(err.message).toContain('1000 bytes');
  });

  it('BODY_TOO_LARGE at once for a larger content-length, before any body byte', async () => {
    const peer = await http((_req, res) => res.writeHead(200, { 'content-length': '5000' }).flushHeaders());
    expect((await failure(nodeRequest(peer.url, { maxBodyBytes: 1000, timeoutsMs: { body: 10_000 } }))).code).toBe('BODY_TOO_LARGE');
  });
});

describe('connections', () => {
  it('a connection cut mid-body is ECONNRESET, not a truncated success', async () => {
    const peer = await http((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    expect((await failure(nodeRequest(peer.url))).code).toBe('ECONNRESET');
  });

  it('an abort mid-request destroys the socket and rejects with the reason', async () => {
    const peer = await http(() => undefined);
    const ac = new AbortController();
    const p = nodeRequest(peer.url, { signal: ac.signal });
    while (peer.sockets.length < 1) await new Promise((r) => setTimeout(r, 5));
    ac.abort(new Error('shutting down'));
    await expect(p).rejects.toThrow('shutting down');
    await closed(peer.sockets[0]!);
  });

  it('an already aborted signal sends nothing', async () => {
    const peer = await http((_req, res) => res.end());
    await expect(nodeRequest(peer.url, { signal: AbortSignal.abort(new Error('too late')) })).rejects.toThrow('too late');
    expect(peer.sockets).toHaveLength(0);
  });

  it('the keep-alive agent reuses one socket, opens at most 4, and destroy() closes them', async () => {
    const peer = await http((_req, res) => setTimeout(() => res.end('ok'), 30));
    const agent = createKeepAliveAgent(peer.url);
    await nodeRequest(peer.url, { agent });
    await nodeRequest(peer.url, { agent });
    expect(peer.sockets).toHaveLength(1);
    await Promise.all(Array.from({ length: 8 }, () => nodeRequest(peer.url, { agent })));
    expect(peer.sockets).toHaveLength(4);
    agent.destroy();
    expect(await Promise.all(peer.sockets.map(closedSoon))).toEqual([true, true, true, true]);
  });
});

describe('TLS', () => {
  let dir = '';
  let cert = '';
  let key = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'wattshift-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem',
      '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { cwd: dir, stdio: 'pipe' });
    cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    key = readFileSync(join(dir, 'key.pem'), 'utf8');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('verifies the certificate against the default CAs', async () => {
    const peer = await listen(createHttpsServer({ cert, key }, (_req, res) => res.end('secret')), 'https');
    const agent = createKeepAliveAgent(peer.url);
    cleanups.push(() => agent.destroy());
    expect((await failure(nodeRequest(peer.url, { agent }))).code).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
  });

  it('answers over TLS when the certificate is trusted; the connect timeout ends with the handshake', async () => {
    // The answer comes after the connect timeout: only the headers timeout may run by then.
    const peer = await listen(createHttpsServer({ cert, key }, (_req, res) => setTimeout(() => res.end('secret'), 1500)), 'https');
    const agent = new HttpsAgent({ ca: cert, keepAlive: true });
    cleanups.push(() => agent.destroy());
    expect((await nodeRequest(peer.url, { agent, timeoutsMs: { connect: 1000, headers: 10_000 } })).text).toBe('secret');
  });
});
