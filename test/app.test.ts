import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
import type { Registration } from '../src/identity.js';
import { localAt, startDemoEnvironment, type DemoEnvironment } from '../src/demo/environment.js';
import type { Config } from '../src/config/schema.js';
import { runCli } from '../src/cli/dispatch.js';
import { findFreePort } from '../src/sandbox/devices/modbus-tank.js';
import type { HomeView } from '../src/view/model.js';

const speed = 600;
const startMs = localAt(Date.UTC(2026, 0, 14, 12), 0, 10);

describe('the composed daemon against real peers', () => {
  let env: DemoEnvironment;
  let app: App;
  let config: Config;
  let dir: string;
  let httpPort: number;
  let registration: Registration;
  const clock = acceleratedClock(startMs, speed);
  const logger = silentLogger();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wattshift-app-'));
    env = await startDemoEnvironment({ clock, startMs, dataDir: dir, logger });
    httpPort = await findFreePort();
    config = parseConfig({ ...env.config, http: { enabled: true, host: '127.0.0.1', port: httpPort } }).config;
    const spark = createSparkClient({ ...config.spark, clock, logger });
    const store = openStore({ path: config.storage.path, clock });
    ({ registration } = await register(config, { spark, store, logger, nowMs: clock.nowMs() }));
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

  it('shows one state everywhere: /api/view, the page, MQTT and wattshift status and plan agree on the plan, price and limits', async () => {
    // A power limit on the tank for the next two hours (a limit per hour), so that there are limits to show.
    const spark = createSparkClient({ ...config.spark, clock, logger });
    const nextHour = Math.ceil(clock.nowMs() / 3_600_000) * 3_600_000;
    await spark.simulateResourceLpc({
      resources: [
        {
          resource: { resourceId: registration.resources['tank']!, locationId: registration.locationId },
          points: [0, 1].map((h) => ({ timestamp: new Date(nextHour + h * 3_600_000).toISOString(), maxPowerInKiloWatts: 0.5 })),
        },
      ],
    });
    await spark.close();
    app.scanEvents();
    const limited = Date.now() + 10_000;
    while (Date.now() < limited && app.view().limits.length === 0) await new Promise((r) => setTimeout(r, 50));
    expect(app.view().limits.map((l) => [l.deviceId, l.capKw])).toEqual([
      ['tank', 0.5],
      ['tank', 0.5],
    ]);
    const client = await mqtt.connectAsync(env.broker.url, { clientId: 'app-test-views' });
    const retained = new Map<string, unknown>();
    client.on('message', (topic, payload) => retained.set(topic, JSON.parse(payload.toString())));
    await client.subscribeAsync(['wattshift/plan', 'wattshift/price', 'wattshift/location']);
    const file = join(dir, 'cli-config.json');
    writeFileSync(file, JSON.stringify({ ...env.config, http: { enabled: true, host: '127.0.0.1', port: httpPort } }));
    const cli = async (args: string[]): Promise<unknown> => {
      const out: string[] = [];
      expect(
        await runCli([...args, '--config', file, '--json'], {
          stdout: (l) => out.push(l),
          stderr: () => undefined,
          env: {},
          signals: new EventEmitter() as never,
        }),
      ).toBe(0);
      return JSON.parse(out.join('\n'));
    };
    type Shown = { view: unknown; page: unknown; mqtt: unknown; status: unknown; plan: unknown };
    // MQTT rounds as src/ha/state.ts documents: to the nearest 10^-d.
    const round = (v: number, d: number): number => Math.round(v * 10 ** d) / 10 ** d;
    // What each shows, in the terms it shows it; retried because the clock runs 600 times faster.
    const snapshot = async (): Promise<Shown> => {
      const view = (await (await fetch(`http://127.0.0.1:${httpPort}/api/view`)).json()) as HomeView;
      const html = await (await fetch(`http://127.0.0.1:${httpPort}/`)).text();
      const status = (await cli(['status'])) as { plan: { origin: string; createdMs: number }; daemon: { view: HomeView } };
      const plan = (await cli(['plan'])) as { origin: string; createdMs: number; plan: { expectedCost: number } };
      const p = retained.get('wattshift/plan') as { expected_cost: number };
      const price = retained.get('wattshift/price') as { total: number };
      const loc = retained.get('wattshift/location') as { limit_kw: number; limits: { device: string | null; cap_kw: number; end: string }[] };
      const limits = (v: HomeView): unknown[] => v.limits.map((l) => [l.deviceId, l.capKw, new Date(l.endMs).toISOString()]);
      const pageLimits = /<table id="limits">.*?<\/table>/s.exec(html)?.[0].match(/<tr><td>/g)?.length ?? 0;
      return {
        view: [round(view.plan!.expectedCost, 2), round(view.price!.totalPerKwh, 5), view.location.limitKw, limits(view)],
        page: [
          html.includes(`To pay for the planned energy: <b>${view.plan!.expectedCost.toFixed(2)} NOK</b>`),
          html.includes(`Price now: ${view.price!.totalPerKwh.toFixed(3)} NOK/kWh`),
          pageLimits === view.limits.length,
        ],
        mqtt: [p.expected_cost, price.total, loc.limit_kw, loc.limits.map((l) => [l.device, l.cap_kw, l.end])],
        status: [
          status.plan.origin,
          status.plan.createdMs === view.plan!.createdMs,
          round(status.daemon.view.price!.totalPerKwh, 5),
          limits(status.daemon.view),
        ],
        plan: [plan.origin, plan.createdMs === view.plan!.createdMs, round(plan.plan.expectedCost, 2)],
      };
    };
    let shown = await snapshot();
    for (let i = 0; i < 20; i++) {
      const [cost, price] = shown.view as [number, number];
      const limits = (shown.view as unknown[])[3];
      const agree =
        JSON.stringify(shown.mqtt) === JSON.stringify(shown.view) &&
        JSON.stringify(shown.page) === '[true,true,true]' &&
        JSON.stringify(shown.status) === JSON.stringify(['daemon', true, price, limits]) &&
        JSON.stringify(shown.plan) === JSON.stringify(['daemon', true, cost]);
      if (agree) break;
      await new Promise((r) => setTimeout(r, 100));
      shown = await snapshot();
    }
    const [cost, price, , limits] = shown.view as [number, number, number, unknown[]];
    expect(limits).toHaveLength(2);
    expect(shown.mqtt).toEqual(shown.view);
    expect(shown.page).toEqual([true, true, true]);
    expect(shown.status).toEqual(['daemon', true, price, limits]);
    expect(shown.plan).toEqual(['daemon', true, cost]);
    await client.endAsync();
  });
});
