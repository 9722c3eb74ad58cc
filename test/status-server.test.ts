import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HomeView } from '../src/ha/view.js';
import { renderMetrics } from '../src/status/metrics.js';
import type { MetricsSnapshot } from '../src/status/metrics.js';
import { startStatusServer } from '../src/status/server.js';
import type { StatusServer } from '../src/status/server.js';
import { isWattshiftError } from '../src/errors.js';
import { sampleView } from './fixtures/ha/sample-view.js';

const servers: StatusServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function start(view: () => HomeView, metrics: () => MetricsSnapshot = () => ({ requestErrors: [] })): Promise<StatusServer> {
  const s = await startStatusServer({ port: 0, getView: view, metrics, timezone: 'Europe/Oslo' });
  servers.push(s);
  return s;
}

async function get(url: string, method: 'GET' | 'HEAD' | 'POST' = 'GET') {
  const res = await fetch(url, { method });
  return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
}

/** A strict reader of the Prometheus text format: every line is a comment or a valid sample. */
function parseExposition(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  const declared = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (gauge|counter|histogram|summary|untyped)$/.exec(line);
    if (type) {
      expect(declared.has(type[1]!), `duplicate TYPE ${type[1]}`).toBe(false);
      declared.set(type[1]!, type[2]!);
      continue;
    }
    if (/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*$/.test(line)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*",?)*\})? (-?[0-9.e+-]+|NaN|[+-]Inf)$/.exec(line);
    expect(m, `bad exposition line: ${line}`).not.toBeNull();
    expect(declared.has(m![1]!), `sample before TYPE: ${line}`).toBe(true);
    samples.set(`${m![1]}${m![2] ?? ''}`, Number(m![3]));
  }
  return samples;
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
    const s = await startStatusServer({ port: 0, getView: () => sampleView(), metrics: () => ({ requestErrors: [] }), allowedHosts: ['gateway.local'] });
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
      jobs: [{ name: 'event-sync', ok: true }, { name: 'report-outbox', ok: false, lastError: { code: 'API_UNAVAILABLE', message: '503 from API', atMs: Date.UTC(2026, 2, 2, 1) } }],
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

  it('serves Prometheus metrics: plan cost, savings, energy per device, jobs, outbox, request errors', async () => {
    const s = await start(() => sampleView(), () => ({
      requestErrors: [{ target: 'api', code: 'API_UNAVAILABLE', count: 3 }, { target: 'dev "x"\\y', code: 'DEVICE_TIMEOUT', count: 1 }],
      commands: [{ status: 'ok', count: 5 }, { status: 'error', count: 2 }],
    }));
    const r = await get(`${s.url}/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const m = parseExposition(r.body);
    expect(m.get('wattshift_plan_expected_cost{currency="NOK"}')).toBe(41.27);
    expect(m.get('wattshift_plan_savings{currency="NOK"}')).toBeCloseTo(14.63, 6);
    expect(m.get('wattshift_device_energy_kwh{device="tank",kind="hotWaterTank"}')).toBe(1234.5678);
    expect(m.get('wattshift_device_energy_kwh{device="main",kind="meter"}')).toBe(50123.1);
    expect(m.get('wattshift_job_ok{job="control"}')).toBe(1);
    expect(m.get('wattshift_outbox_pending')).toBe(2);
    expect(m.get('wattshift_request_errors_total{target="api",code="API_UNAVAILABLE"}')).toBe(3);
    expect(m.get('wattshift_request_errors_total{target="dev \\"x\\"\\\\y",code="DEVICE_TIMEOUT"}')).toBe(1);
    expect(m.get('wattshift_commands_total{status="error"}')).toBe(2);
    expect(r.body).toMatch(/# TYPE wattshift_request_errors_total counter/);
  });

  it('omits what is unknown instead of inventing values', () => {
    const view = sampleView();
    view.plan = null;
    view.price = null;
    view.devices = view.devices.map((d) => ({ ...d, energyKwh: undefined }));
    const text = renderMetrics(view, { requestErrors: [] });
    expect(text).not.toContain('wattshift_plan_');
    expect(text).not.toContain('wattshift_device_energy_kwh');
    expect(text).not.toContain('wattshift_request_errors_total');
    expect(parseExposition(text).get('wattshift_health_ok')).toBe(1);
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

  it('fails clearly when the port is taken, and rejects an unknown timezone', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    try {
      const err = await startStatusServer({ port, getView: sampleView, metrics: () => ({ requestErrors: [] }) }).catch((e: unknown) => e);
      expect(isWattshiftError(err, 'CONFIG_INVALID')).toBe(true);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
    await expect(startStatusServer({ port: 0, getView: sampleView, metrics: () => ({ requestErrors: [] }), timezone: 'Mars/Olympus' })).rejects.toThrow(RangeError);
  });
});
