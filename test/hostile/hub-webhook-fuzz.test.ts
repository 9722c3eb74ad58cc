/**
 * The hub's webhook endpoint under raw-socket input, with the hub on real PostgreSQL and Mosquitto:
 * request targets that are not URLs, a seeded request fuzz in batches (with `/healthz`, a genuine
 * signed delivery, memory and the endpoint's log volume checked after each), and slow bodies from
 * one address during genuine deliveries. The hub runs in this process: an unhandled rejection fails the run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hub } from '../../src/hub/hub.js';
import { signPayload } from '../../src/spark/webhook-signature.js';
import { fuzzCases } from '../helpers/http-fuzz.js';
import { runBatch, sendRaw, slowBodies } from '../helpers/http-fuzz-send.js';
import { mosquittoAvailable } from '../helpers/mosquitto.js';
import { postgresAvailable } from '../helpers/postgres.js';
import { gateways, startFleetWorld, webhookSecret, type FleetWorld } from '../hub/fleet-world.js';
import { report } from './common.js';

describe.skipIf(!postgresAvailable() || !mosquittoAvailable())('hub webhook endpoint under hostile input', () => {
  let world: FleetWorld;
  let hub: Hub;
  let port: number;
  let path: string;
  let genuineCount = 0;

  beforeAll(async () => {
    world = await startFleetWorld();
    hub = await world.startHub('hub-fuzz');
    const url = new URL(hub.webhookUrl);
    port = Number(url.port);
    path = url.pathname;
  }, 60_000);
  afterAll(() => world?.stop());

  const healthz = async (): Promise<number> =>
    (await fetch(new URL('/healthz', hub.webhookUrl), { signal: AbortSignal.timeout(5_000) }).catch(() => null))?.status ?? 0;

  /** A signed LPC for gw-a's location, as the API delivers it. */
  async function genuineDelivery(): Promise<number> {
    const at = new Date().toISOString();
    const hour = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000).toISOString();
    const eventId = `hub-fuzz-genuine-${genuineCount++}`;
    const body = JSON.stringify({
      notificationId: `n-${eventId}`,
      eventId,
      eventCreatedAtUtc: at,
      notificationSentUtc: at,
      notificationType: 'LocationLPCRequested',
      payload: {
        payloadType: 'LocationLPC',
        targets: [{ locationId: gateways.a.locationId, resolution: '01:00:00', points: [{ timestamp: hour, maxPowerInKiloWatts: 5 }] }],
      },
    });
    const res = await fetch(hub.webhookUrl, {
      method: 'POST',
      body,
      headers: { 'x-payload-signature': signPayload(body, webhookSecret) },
      signal: AbortSignal.timeout(10_000),
    }).catch(() => null);
    return res?.status ?? 0;
  }

  const endpointLines = (): number => world.logs.filter((l) => l['component'] === 'hub-webhook').length;

  it('answers 400 to request targets that are not URLs', async () => {
    for (const target of ['//[', 'http://a:99999/', 'http://[/healthz']) {
      const outcome = await sendRaw(
        { parts: [Buffer.from(`POST ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n`)], pausesMs: [0], end: 'wait' },
        { port },
      );
      expect(outcome.status, target).toBe(400);
    }
    expect(await healthz()).toBe(200);
    expect(await genuineDelivery()).toBe(200);
  });

  it('stays up, small and quiet through a seeded request fuzz', async () => {
    const batches = 4;
    const perBatch = 60;
    const cases = fuzzCases(0x40b, batches * perBatch, {
      paths: [path, '/healthz', '/'],
      headers: ['X-Payload-Signature: AAAA', `X-Payload-Signature: ${'A'.repeat(5000)}`, 'Content-Type: application/json'],
    });
    const linesBefore = endpointLines();
    const rssStart = process.memoryUsage().rss / 2 ** 20;
    const seen = new Map<string, number>();
    for (let b = 0; b < batches; b++) {
      const batch = cases.slice(b * perBatch, (b + 1) * perBatch);
      const outcomes = await runBatch(batch, 30, (c) => sendRaw(c, { port, timeoutMs: 2_000 }));
      for (const o of outcomes) {
        const key = o.status === null ? o.ending : String(o.status);
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
      // Nothing makes the endpoint fail (a fuzzed GET of /healthz may well get its 200).
      const failed = outcomes.flatMap((o, i) => (o.statuses.some((s) => s >= 500) ? [`${batch[i]!.label}: ${o.statuses.join(',')}`] : []));
      expect(failed, `batch ${b}`).toEqual([]);
      expect(await healthz(), `batch ${b}: /healthz`).toBe(200);
      expect(await genuineDelivery(), `batch ${b}: genuine delivery`).toBe(200);
      expect(process.memoryUsage().rss / 2 ** 20 - rssStart, `batch ${b}: RSS growth, MiB`).toBeLessThan(128);
      expect(endpointLines() - linesBefore, `batch ${b}: endpoint log lines`).toBeLessThan(120);
    }
    // Nothing unsigned was stored: the events are the genuine deliveries.
    const stored = await world.pool.query<{ n: string }>("SELECT count(*) AS n FROM events WHERE event_id NOT LIKE 'hub-fuzz-genuine-%'");
    expect(Number(stored.rows[0]!.n)).toBe(0);
    report('hub-webhook-fuzz', {
      cases: batches * perBatch,
      outcomes: Object.fromEntries([...seen].sort()),
      endpointLogLines: endpointLines() - linesBefore,
    });
  }, 120_000);

  it('takes 100 bodies cut off mid-way without an error line each', async () => {
    const before = world.logs.length;
    const cut = {
      parts: [Buffer.from(`POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n{"eventId":`)],
      pausesMs: [0],
      end: 'close' as const,
    };
    await runBatch(
      Array.from({ length: 100 }, () => cut),
      20,
      (c) => sendRaw(c, { port }),
    );
    await new Promise((r) => setTimeout(r, 200));
    const lines = world.logs.slice(before).filter((l) => l['component'] === 'hub-webhook');
    expect(lines.filter((l) => l.level === 'error' || l.level === 'fatal')).toEqual([]);
    expect(lines.length).toBeLessThanOrEqual(5);
    expect(await genuineDelivery()).toBe(200);
  });

  it('acknowledges genuine deliveries while one address holds 200 slow-body sockets', async () => {
    const attack = slowBodies({ port, path, count: 200, addresses: ['127.0.0.2'] });
    await new Promise((r) => setTimeout(r, 2_000));
    const genuine: number[] = [];
    for (let i = 0; i < 8; i++) genuine.push(await genuineDelivery());
    attack.stop();
    expect(genuine).toEqual(genuine.map(() => 200));
    expect(await healthz()).toBe(200);
  }, 60_000);
});
