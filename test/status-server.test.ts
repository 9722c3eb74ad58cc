import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HomeView } from '../src/view/model.js';
import { DaemonMetrics } from '../src/status/metrics.js';
import { startStatusServer } from '../src/status/server.js';
import type { StatusServer } from '../src/status/server.js';
import { isWattshiftError } from '../src/errors.js';
import { sampleView } from './fixtures/ha/sample-view.js';
import { sendRaw } from './helpers/http-fuzz-send.js';

const servers: StatusServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function start(view: () => HomeView, metrics = new DaemonMetrics({ version: 'test', processMetrics: false })): Promise<StatusServer> {
  const s = await startStatusServer({ port: 0, getView: view, metrics, timezone: 'Europe/Oslo' });
  servers.push(s);
  return s;
}

async function get(url: string, method: 'GET' | 'HEAD' | 'POST' = 'GET') {
  const res = await fetch(url, { method });
  return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
}

describe('status server', () => {
  it('listens on loopback by default and serves /healthz 200 when healthy', async () => {
    const s = await start(() => sampleView());
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const r = await get(`${s.url}/healthz`);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ status: 'ok', failing: [] });
  });

  it('answers the page and /api/view only to IP addresses, localhost and configured names (DNS rebinding)', async () => {
    const s = await startStatusServer({
      port: 0,
      getView: () => sampleView(),
      metrics: new DaemonMetrics({ version: 'test', processMetrics: false }),
      allowedHosts: ['gateway.local'],
    });
    servers.push(s);
    const port = new URL(s.url).port;
    const withHost = (path: string, host: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    expect(await withHost('/api/view', 'rebind.evil.example')).toBe(421);
    expect(await withHost('/', `rebind.evil.example:${port}`)).toBe(421);
    expect(await withHost('/api/view', `gateway.local:${port}`)).toBe(200);
    expect(await withHost('/api/view', `127.0.0.1:${port}`)).toBe(200);
    expect(await withHost('/healthz', 'rebind.evil.example')).toBe(200);
  });

  it('answers /healthz 503 with the failing job and its error', async () => {
    const view = sampleView();
    view.health = {
      ok: false,
      jobs: [
        { name: 'event-sync', ok: true },
        { name: 'report-outbox', ok: false, lastError: { code: 'API_UNAVAILABLE', message: '503 from API', atMs: Date.UTC(2026, 2, 2, 1) } },
      ],
    };
    const s = await start(() => view);
    const r = await get(`${s.url}/healthz`);
    expect(r.status).toBe(503);
    expect(JSON.parse(r.body)).toEqual({
      status: 'failing',
      failing: [{ job: 'report-outbox', error: { code: 'API_UNAVAILABLE', message: '503 from API', at: '2026-03-02T01:00:00.000Z' } }],
    });
    const page = await get(`${s.url}/`);
    expect(page.body).toContain('report-outbox');
    expect(page.body).toContain('API_UNAVAILABLE');
  });

  it('serves the view as JSON, the page as escaped HTML, and nothing else', async () => {
    const s = await start(() => sampleView());
    const api = await get(`${s.url}/api/view`);
    expect(JSON.parse(api.body)).toEqual(JSON.parse(JSON.stringify(sampleView())));
    const page = await get(`${s.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.body).toContain('Home &lt;Oslo&gt; &amp; &quot;co&quot;');
    expect(page.body).not.toContain('<Oslo>');
    expect(page.body).not.toMatch(/<script/i);
    expect(page.body).toContain('<svg');
    expect((await get(`${s.url}/nope`)).status).toBe(404);
    const post = await get(`${s.url}/healthz`, 'POST');
    expect(post.status).toBe(405);
    expect(post.headers['allow']).toBe('GET, HEAD');
    const head = await get(`${s.url}/healthz`, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it('answers 500 when the view cannot be built, and keeps serving', async () => {
    let fail = true;
    const s = await start(() => {
      if (fail) throw new Error('boom');
      return sampleView();
    });
    const r = await get(`${s.url}/`);
    expect(r.status).toBe(500);
    expect(r.body).not.toContain('boom');
    fail = false;
    expect((await get(`${s.url}/healthz`)).status).toBe(200);
  });

  it('answers 400 to request targets that are not URLs and to malformed requests, and keeps serving', async () => {
    const s = await start(() => sampleView());
    const port = Number(new URL(s.url).port);
    const raw = (text: string) => sendRaw({ parts: [Buffer.from(text, 'latin1')], pausesMs: [0], end: 'wait' }, { port });
    for (const target of ['//[', 'http://a:99999/', 'http://[/healthz', '/\u00e9', 'localhost:8787']) {
      expect((await raw(`GET ${target} HTTP/1.1\r\nHost: localhost\r\n\r\n`)).status, target).toBe(400);
    }
    expect((await raw('GET /healthz HTTP/1.1\r\nHost: [::1\r\n\r\n')).status).toBe(200);
    expect((await raw('GET /api/view HTTP/1.1\r\nHost: [::1\r\n\r\n')).status).toBe(421);
    // An absolute-form target names the host: the rebinding guard reads it there.
    expect((await raw('GET http://rebind.evil.example/api/view HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')).status).toBe(421);
    expect((await raw('GET http://127.0.0.1/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')).status).toBe(200);
    expect((await raw('GET / HTTP/1.1\r\nBad Header\r\n\r\n')).status).toBe(400);
    expect((await get(`${s.url}/healthz`)).status).toBe(200);
  });

  it('fails clearly when the port is taken, and rejects an unknown timezone', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    try {
      const err = await startStatusServer({
        port,
        getView: sampleView,
        metrics: new DaemonMetrics({ version: 'test', processMetrics: false }),
      }).catch((e: unknown) => e);
      expect(isWattshiftError(err, 'CONFIG_INVALID')).toBe(true);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
    await expect(
      startStatusServer({
        port: 0,
        getView: sampleView,
        metrics: new DaemonMetrics({ version: 'test', processMetrics: false }),
        timezone: 'Mars/Olympus',
      }),
    ).rejects.toThrow(RangeError);
  });
});
