/**
 * The daemon's modules as one lifecycle, against the demo's real peers: a start that fails at its
 * last module (the status page's port taken) undoes what the others started and keeps the error's
 * code; a started daemon lists its jobs' health in the order the view always had.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceleratedClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { parseConfig } from '../src/config/load.js';
import { buildApp } from '../src/app.js';
import { createSparkClient } from '../src/spark/client.js';
import { openStore } from '../src/store/index.js';
import { register } from '../src/registration.js';
import { isWattshiftError } from '../src/errors.js';
import { localAt, startDemoEnvironment, type DemoEnvironment } from '../src/demo/environment.js';

const speed = 600;
const startMs = localAt(Date.UTC(2026, 0, 14, 12), 0, 10);

describe('the daemon as a list of modules', () => {
  let env: DemoEnvironment;
  let dir: string;
  const clock = acceleratedClock(startMs, speed);
  const logger = silentLogger();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wattshift-app-lifecycle-'));
    env = await startDemoEnvironment({ clock, startMs, dataDir: dir, logger });
    const config = parseConfig(env.config).config;
    const spark = createSparkClient({ ...config.spark, clock, logger });
    const store = openStore({ path: config.storage.path, clock });
    await register(config, { spark, store, logger, nowMs: clock.nowMs() });
    store.close();
    await spark.close();
  }, 60_000);

  afterAll(async () => {
    await env?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('undoes a start that fails at the status page: Home Assistant told offline, the store closed, the same error code', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const watcher = await mqtt.connectAsync(env.broker.url, { clientId: 'app-lifecycle-watch' });
    const availability: string[] = [];
    watcher.on('message', (_topic, payload) => availability.push(payload.toString()));
    await watcher.subscribeAsync('wattshift/availability');
    try {
      const app = buildApp(parseConfig({ ...env.config, http: { enabled: true, host: '127.0.0.1', port } }).config, {
        logger,
        clock,
        controlTickMs: 60_000,
        deviceTimeoutMs: 2_000 * speed,
      });
      const err = await app.start().catch((e: unknown) => e);
      expect(isWattshiftError(err, 'CONFIG_INVALID')).toBe(true);
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline && availability.at(-1) !== 'offline') await new Promise((r) => setTimeout(r, 50));
      expect(availability.at(-1)).toBe('offline');
      expect(() => app.store.outboxSummary()).toThrow(/not open/);
      // The shell stops the app after a failed start (src/cli/daemon.ts): nothing is stopped twice.
      await app.stop();
    } finally {
      await watcher.endAsync();
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it("lists the jobs' health in the view's order, the devices last", async () => {
    const app = buildApp(parseConfig(env.config).config, { logger, clock, controlTickMs: 60_000, deviceTimeoutMs: 2_000 * speed });
    await app.start();
    try {
      expect(app.view().health.jobs.map((j) => j.name)).toEqual([
        'events',
        'prices',
        'planner',
        'reports',
        'metering',
        'billing',
        'store',
        'device:tank',
        'device:car',
      ]);
    } finally {
      await app.stop();
    }
  });
});
