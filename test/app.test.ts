import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceleratedClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { parseConfig } from '../src/config/load.js';
import { buildApp, type App } from '../src/app.js';
import { createSparkClient } from '../src/spark/client.js';
import { openStore } from '../src/store/index.js';
import { register } from '../src/registration.js';
import { localAt, startDemoEnvironment, type DemoEnvironment } from '../src/demo/environment.js';
import type { Config } from '../src/config/schema.js';

const speed = 600;
const startMs = localAt(Date.UTC(2026, 0, 14, 12), 0, 10);

describe('the composed daemon against real peers', () => {
  let env: DemoEnvironment;
  let app: App;
  let config: Config;
  let dir: string;
  const clock = acceleratedClock(startMs, speed);
  const logger = silentLogger();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wattshift-app-'));
    env = await startDemoEnvironment({ clock, startMs, dataDir: dir, logger });
    config = parseConfig({ ...env.config, http: { enabled: true, host: '127.0.0.1', port: 0 } }).config;
    const spark = createSparkClient({ ...config.spark, clock, logger });
    const store = openStore({ path: config.storage.path, clock });
    await register(config, { spark, store, logger, nowMs: clock.nowMs() });
    store.close();
    await spark.close();
    app = buildApp(config, { logger, clock, controlTickMs: 60_000, deviceTimeoutMs: 2_000 * speed });
    await app.start();
    // Two simulated hours: prices fetched, a plan made, the devices read and driven.
    await clock.sleep(2 * 3_600_000);
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
    await env?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('plans from the fetched prices and shows the devices in its view', () => {
    const plan = app.currentPlan();
    expect(plan?.mode).toBe('optimal');
    expect(plan!.slots.length).toBeGreaterThanOrEqual(24);
    const view = app.view();
    expect(view.devices.map((d) => d.id)).toEqual(['tank', 'car']);
    const tank = view.devices.find((d) => d.id === 'tank')!;
    expect(tank.available).toBe(true);
    expect(tank.temperatureC).toBeGreaterThan(40);
    expect(view.price?.currency).toBe('NOK');
  });

  it('meters the tank hourly in the store, matching the simulator', () => {
    const firstFullHour = Math.ceil(startMs / 3_600_000) * 3_600_000;
    const rows = app.store.readHourly('device:tank', firstFullHour, firstFullHour + 3_600_000);
    const truth = env.tank.physics.hourlyTruthKwh().get(firstFullHour) ?? 0;
    if (rows.length === 1 && rows[0]!.quality === 'measured') {
      expect(rows[0]!.kwh).toBeCloseTo(truth, 2);
    } else {
      // The first flush may still be pending on a slow machine; nothing may be invented meanwhile.
      expect(rows.every((r) => r.kwh <= truth + 1e-6)).toBe(true);
    }
  });

  it('publishes retained state and Home Assistant discovery, and takes a boost command', async () => {
    const client = await mqtt.connectAsync(env.broker.url, { clientId: 'app-test' });
    const seen = new Map<string, string>();
    client.on('message', (topic, payload) => seen.set(topic, payload.toString()));
    await client.subscribeAsync(['wattshift/#', 'homeassistant/#']);
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && !(seen.has('wattshift/availability') && [...seen.keys()].some((t) => t.startsWith('homeassistant/')))) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(seen.get('wattshift/availability')).toBe('online');
    expect([...seen.keys()].some((t) => t.startsWith('homeassistant/') && t.endsWith('/config'))).toBe(true);

    await client.publishAsync('wattshift/tank/set', JSON.stringify({ mode: 'boost', boostMinutes: 120 }));
    const until = Date.now() + 5_000;
    while (Date.now() < until && app.view().devices.find((d) => d.id === 'tank')?.mode !== 'boost') {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(app.view().devices.find((d) => d.id === 'tank')?.mode).toBe('boost');
    // A boosted tank is allowed to heat: the relay is released within a few ticks.
    const released = Date.now() + 10_000;
    while (Date.now() < released && env.tank.state().blocked) await new Promise((r) => setTimeout(r, 50));
    expect(env.tank.state().blocked).toBe(false);
    await client.endAsync();
  });
});
