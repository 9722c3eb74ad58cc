/**
 * A small HTTP proxy in front of the sandbox that can be switched between passing requests
 * through and failing them (500, 429 with Retry-After, hanging until the client gives up, 401 on
 * the token endpoint). Point config.spark.baseUrl/authUrl/forecastUrl at it.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock } from '../../src/ports.js';

export type ProxyMode = 'pass' | 'error500' | 'timeout' | 'rate429' | 'auth401';

export interface FaultProxy {
  /** `http://127.0.0.1:port` */
  readonly origin: string;
  readonly mode: ProxyMode;
  /** Switches mode; leaving `timeout` drops the requests it was holding. */
  setMode(mode: ProxyMode): void;
  /** Requests seen, by mode in force and path, with the real time and the clock's time (`options.clock`, else real) they came at. */
  readonly seen: { mode: ProxyMode; method: string; path: string; status: number | null; realMs: number; atMs: number }[];
  /** Requests it holds unanswered now (`timeout`): a run on the virtual clock counts them as work in flight. */
  holding(): number;
  /** Called when the sandbox has answered a passed request, before the answer goes on (a test can kill the client there). */
  onAnswer: ((request: FaultProxy['seen'][number]) => void) | null;
  close(): Promise<void>;
}

export async function startFaultProxy(target: string, options: { retryAfterS?: number; clock?: Clock } = {}): Promise<FaultProxy> {
  const targetUrl = new URL(target);
  let mode: ProxyMode = 'pass';
  const held = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const seen: FaultProxy['seen'] = [];

  const pass = (req: IncomingMessage, res: ServerResponse, rec: FaultProxy['seen'][number]): void => {
    const headers = { ...req.headers, host: targetUrl.host };
    const upstream = httpRequest({ host: targetUrl.hostname, port: targetUrl.port, method: req.method, path: req.url, headers }, (up) => {
      rec.status = up.statusCode ?? null;
      proxy.onAnswer?.(rec);
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(upstream);
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const realMs = Date.now();
    const rec = { mode, method: req.method ?? 'GET', path, status: null as number | null, realMs, atMs: options.clock?.nowMs() ?? realMs };
    seen.push(rec);
    const isToken = path.endsWith('/connect/token');
    const fail = (status: number, headers: Record<string, string>, body: string): void => {
      rec.status = status;
      req.resume();
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
    };
    switch (mode) {
      case 'pass':
        return pass(req, res, rec);
      case 'error500':
        return fail(500, {}, JSON.stringify({ title: 'Internal Server Error', status: 500 }));
      case 'rate429':
        return fail(429, { 'retry-after': String(options.retryAfterS ?? 30) }, JSON.stringify({ title: 'Too Many Requests', status: 429 }));
      case 'auth401':
        if (!isToken) return pass(req, res, rec);
        return fail(401, {}, JSON.stringify({ error: 'invalid_client' }));
      case 'timeout':
        req.resume();
        held.add(res);
        res.on('close', () => held.delete(res));
        return;
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = address && typeof address === 'object' ? address.port : 0;
  const proxy: FaultProxy = {
    origin: `http://127.0.0.1:${port}`,
    get mode() {
      return mode;
    },
    setMode(next) {
      if (mode === 'timeout' && next !== 'timeout') {
        for (const res of held) res.destroy();
        held.clear();
      }
      mode = next;
    },
    seen,
    holding: () => held.size,
    onAnswer: null,
    async close() {
      for (const res of held) res.destroy();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
