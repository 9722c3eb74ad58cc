/**
 * Webhook receiver benchmark: the real receiver with a real store (temp dir) behind the real
 * intake, loaded by a local generator over keep-alive connections. Every call is a signed
 * notification with a unique event id, so each one is verified, acknowledged, parsed and stored.
 * Prints each run, then the medians of 3 runs; the last line is one JSON object.
 *
 *   npx tsx scripts/bench-webhook.ts [--connections 16] [--requests 2000]
 */
import { Agent, request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { systemClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { openStore } from '../src/store/index.js';
import { createEventIntake } from '../src/jobs/event-intake.js';
import { startWebhookReceiver } from '../src/upstream/webhook-receiver.js';
import { signPayload } from '../src/spark/webhook-signature.js';

const { values } = parseArgs({ options: { connections: { type: 'string', default: '16' }, requests: { type: 'string', default: '2000' } } });
const connections = Number(values.connections);
const requests = Number(values.requests);
const secret = 'bench-secret';
const identity = { userId: 'user-1', locationId: 'home-1', resources: new Map([['res-tank', 'tank']]), meterPointIds: [] };

function body(n: number, run: number): string {
  return JSON.stringify({
    notificationId: `n-${run}-${n}`,
    eventId: `ev-${run}-${n}`,
    eventCreatedAtUtc: '2025-11-04T12:00:00Z',
    notificationSentUtc: '2025-11-04T12:00:01Z',
    notificationType: 'PriceCurveCreated',
    payload: {
      payloadType: 'PriceCurve',
      priceArea: 'NO1',
      targets: [{ resourceId: 'res-tank', locationId: 'home-1' }],
      priceCurveDelta: {
        currency: 'NOK',
        energyUnit: 'kWh',
        resolution: '01:00:00',
        points: Array.from({ length: 24 }, (_, h) => ({
          price: Math.round(Math.sin(h) * 100) / 100,
          timestamp: new Date(Date.UTC(2025, 10, 5, h)).toISOString(),
        })),
      },
    },
  });
}

function post(agent: Agent, url: URL, text: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-payload-signature': signPayload(text, secret) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
const median = (xs: number[]): number =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

async function runOnce(run: number): Promise<{ rps: number; p50Ms: number; p99Ms: number; stored: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'ws-bench-webhook-'));
  const store = openStore({ path: join(dir, 'db.sqlite') });
  const intake = createEventIntake({ store, identity: () => identity, clock: systemClock, logger: silentLogger(), onEvent: () => undefined });
  const receiver = await startWebhookReceiver(
    { host: '127.0.0.1', port: 0, path: '/hooks/spark', secret, maxBodyBytes: 256 * 1024, maxConnections: connections + 8 },
    { intake, logger: silentLogger() },
  );
  const url = new URL(receiver.url);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const bodies = Array.from({ length: requests }, (_, i) => body(i, run));
  // Warm-up: open the connections.
  await Promise.all(Array.from({ length: connections }, (_, i) => post(agent, url, body(-1 - i, run))));
  const latencies: number[] = [];
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      for (let i = next++; i < requests; i = next++) {
        const t = process.hrtime.bigint();
        const status = await post(agent, url, bodies[i] ?? '');
        if (status !== 200) throw new Error(`unexpected status ${status}`);
        latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await new Promise((r) => setTimeout(r, 50));
  const stored = store.listEvents().length - connections;
  agent.destroy();
  await receiver.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
  latencies.sort((a, b) => a - b);
  return { rps: requests / seconds, p50Ms: quantile(latencies, 0.5), p99Ms: quantile(latencies, 0.99), stored };
}

const runs = [];
for (let run = 0; run < 3; run++) {
  const r = await runOnce(run);
  if (r.stored !== requests) throw new Error(`run ${run}: ${r.stored} of ${requests} events stored`);
  runs.push(r);
  console.log(
    `run ${run + 1}: ${r.rps.toFixed(0)} req/s, ack p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms (${requests} signed calls, ${connections} connections, all stored)`,
  );
}
const rps = median(runs.map((r) => r.rps));
const p50 = median(runs.map((r) => r.p50Ms));
const p99 = median(runs.map((r) => r.p99Ms));
console.log(`median of 3: ${rps.toFixed(0)} req/s, ack p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`);
console.log(JSON.stringify({ webhookRps: Math.round(rps), webhookP50Ms: Math.round(p50 * 100) / 100, webhookP99Ms: Math.round(p99 * 100) / 100 }));
