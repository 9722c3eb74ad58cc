/**
 * The real daemon's HTTP listeners (status page and webhook receiver) under raw-socket input: request
 * targets that are not URLs, then a seeded grammar fuzz in batches, with liveness (`/healthz`
 * answers, a genuine signed delivery is accepted), memory and log volume checked after each batch.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { findFreePort } from '../../src/sandbox/devices/modbus-tank.js';
import { signPayload } from '../../src/spark/webhook-signature.js';
import { spawnDaemon, stopAll, writeConfig, type DaemonProcess, type World } from '../helpers/daemon-harness.js';
import { fuzzCases } from '../helpers/http-fuzz.js';
import { runBatch, sendRaw } from '../helpers/http-fuzz-send.js';
import { faultOverrides, faultWorld } from '../faults/common.js';
import { report, rssMiB } from './common.js';
import { curve, hourFromNow, post, webhookEvents, webhookPath, webhookSecret } from './webhook-calls.js';

let world: World;
let daemon: DaemonProcess;
let statusPort: number;
let webhookPort: number;
let genuineCount = 0;
let failed = false;

// One daemon for both tests; its folder stays for a look when a test failed.
beforeAll(async () => {
  world = await faultWorld('hostile-http-fuzz', { dataDir: mkdtempSync(join(tmpdir(), 'wattshift-hostile-http-fuzz-')) });
  statusPort = await findFreePort();
  webhookPort = await findFreePort();
  daemon = spawnDaemon(world, {
    configPath: writeConfig(world, {
      ...faultOverrides,
      http: { enabled: true, host: '127.0.0.1', port: statusPort },
      events: webhookEvents(webhookPort),
    }),
  });
  await daemon.waitForLog((l) => l.msg === 'wattshift started');
}, 60_000);
afterAll(async () => {
  await stopAll();
  if (!failed) rmSync(world.dataDir, { recursive: true, force: true });
}, 30_000);

function keepLogOnFailure(): void {
  onTestFailed(() => {
    failed = true;
    writeFileSync(join(world.dataDir, 'daemon.log'), daemon.rawOutput.join('\n'));
  });
}

/** The status of `/healthz`, or 0 when it did not answer. */
async function healthz(): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${statusPort}/healthz`, { signal: AbortSignal.timeout(5_000) }).catch(() => null);
  return res?.status ?? 0;
}

async function genuineDelivery(): Promise<number> {
  const body = curve(world, `fuzz-genuine-${genuineCount}`, [{ timestamp: hourFromNow(world, 2 + (genuineCount % 8)), price: 0.05 }]);
  genuineCount++;
  return post(webhookPort, body, signPayload(body, webhookSecret));
}

/** Lines the HTTP listeners wrote, and everything on stderr that is not a log line (a stack trace). */
function listenerOutput(): { lines: number; bytes: number; stray: number } {
  const mine = daemon.logs.filter((l) => l.component === 'status-server' || l.component === 'webhook');
  const stray = daemon.rawOutput.filter((l) => l.trim() !== '' && !l.trimStart().startsWith('{')).length;
  return { lines: mine.length, bytes: mine.reduce((n, l) => n + JSON.stringify(l).length, 0), stray };
}

it('answers 400 to request targets that are not URLs, on every listener, and stays up', async () => {
  keepLogOnFailure();
  for (const port of [statusPort, webhookPort]) {
    for (const target of ['//[', 'http://a:99999/', 'http://[/healthz']) {
      for (let attempt = 0; attempt < 4; attempt++) {
        const outcome = await sendRaw(
          { parts: [Buffer.from(`GET ${target} HTTP/1.1\r\nHost: localhost\r\n\r\n`)], pausesMs: [0], end: 'wait' },
          { port, timeoutMs: 5_000 },
        );
        expect(outcome.status, `${port} ${target}`).toBe(400);
      }
    }
  }
  expect(daemon.child.exitCode).toBeNull();
  expect([200, 503]).toContain(await healthz());
  expect(await genuineDelivery()).toBe(200);
}, 60_000);

it('keeps both listeners up, small and quiet through a seeded request fuzz', async () => {
  keepLogOnFailure();
  const listeners = [
    { name: 'status', port: statusPort, seed: 0x57a7, paths: ['/', '/healthz', '/metrics', '/api/view', '/api/history'], headers: [] },
    {
      name: 'webhook',
      port: webhookPort,
      seed: 0x3eb0,
      paths: [webhookPath, '/'],
      headers: ['X-Payload-Signature: AAAA', `X-Payload-Signature: ${'A'.repeat(5000)}`, 'Content-Type: application/json'],
    },
  ];
  const batches = 4;
  const perBatch = 60;
  const before = listenerOutput();
  const rssStart = rssMiB(daemon.pid);
  const figures: Record<string, unknown> = {};
  for (const l of listeners) {
    const cases = fuzzCases(l.seed, batches * perBatch, { paths: l.paths, headers: l.headers });
    const seen = new Map<string, number>();
    for (let b = 0; b < batches; b++) {
      const batch = cases.slice(b * perBatch, (b + 1) * perBatch);
      const outcomes = await runBatch(batch, 30, (c) => sendRaw(c, { port: l.port, timeoutMs: 2_000 }));
      outcomes.forEach((o) => {
        const key = o.status === null ? o.ending : String(o.status);
        seen.set(key, (seen.get(key) ?? 0) + 1);
      });
      // No request makes a listener fail (5xx), and no unsigned call is ever accepted.
      const failed = outcomes.flatMap((o, i) =>
        o.statuses.some((s) => s >= 500 || (l.name === 'webhook' && s < 300)) ? [`${batch[i]!.label}: ${o.statuses.join(',')}`] : [],
      );
      expect(failed, `${l.name} batch ${b}`).toEqual([]);
      expect(daemon.child.exitCode, `${l.name} batch ${b}`).toBeNull();
      expect([200, 503], `${l.name} batch ${b}: /healthz`).toContain(await healthz());
      expect(await genuineDelivery(), `${l.name} batch ${b}: genuine delivery`).toBe(200);
      expect(rssMiB(daemon.pid) - rssStart, `${l.name} batch ${b}: RSS growth, MiB`).toBeLessThan(96);
      const out = listenerOutput();
      expect(out.stray - before.stray, `${l.name} batch ${b}: non-log output`).toBe(0);
      // Rate-limited: a few lines per kind of refusal, however many cases.
      expect(out.lines - before.lines, `${l.name} batch ${b}: listener log lines`).toBeLessThan(150);
    }
    figures[l.name] = Object.fromEntries([...seen].sort());
  }
  const out = listenerOutput();
  report('http-fuzz', {
    casesPerListener: batches * perBatch,
    outcomes: figures,
    listenerLogLines: out.lines - before.lines,
    listenerLogBytes: out.bytes - before.bytes,
    rssGrowthMiB: Math.round(rssMiB(daemon.pid) - rssStart),
  });
}, 170_000);
