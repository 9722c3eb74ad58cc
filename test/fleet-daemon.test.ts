/**
 * The whole daemon in fleet mode, with no API credentials: the test plays the partner's hub on a
 * real aedes broker (prices and events taken from the sandbox, as a hub would fetch them), the
 * devices are the demo's simulators. The daemon plans on the hub's advice, plans around an LPC
 * published to its location, and its acknowledgement is uploaded only through the hub's receipt.
 * It never calls the API itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceleratedClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { parseConfig } from '../src/config/load.js';
import { buildApp, type App } from '../src/app.js';
import { createForecastClient } from '../src/spark/forecast-client.js';
import { localAt, startDemoEnvironment, type DemoEnvironment } from '../src/demo/environment.js';
import { fleetTopics, type FleetReport } from '../src/fleet/wire.js';
import { startAedes, type TestBroker } from './helpers/aedes.js';
import { until } from './helpers/until.js';

const speed = 600;
const startMs = localAt(Date.UTC(2026, 0, 14, 12), 0, 10);
const hourMs = 3_600_000;
const topics = fleetTopics();

describe('the daemon in fleet mode (hub played by the test)', () => {
  let env: DemoEnvironment;
  let fleet: TestBroker;
  let hub: MqttClient;
  let app: App;
  let dir: string;
  let apiCallsByDaemon = 0;
  let watchApi = false;
  const reports: FleetReport[] = [];
  const clock = acceleratedClock(startMs, speed);
  const logger = silentLogger();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wattshift-fleet-app-'));
    env = await startDemoEnvironment({ clock, startMs, dataDir: dir, logger });
    fleet = await startAedes();
    hub = await mqtt.connectAsync(fleet.url, { clientId: 'hub-test' });
    hub.on('message', (topic, payload) => {
      if (topic === topics.reports('gw-d')) reports.push(JSON.parse(payload.toString()) as FleetReport);
    });
    await hub.subscribeAsync(topics.reports('gw-d'), { qos: 1 });

    // The hub's part: the area's advice, fetched once with the partner's credentials, retained.
    const c = env.sandbox.credentials[0]!;
    const forecast = createForecastClient({
      forecastUrl: env.sandbox.forecastUrl,
      authUrl: env.sandbox.authUrl,
      clientId: c.clientId,
      clientSecret: c.clientSecret,
      clock,
      logger,
    });
    const advice = await forecast.advice({ area: 'NO4', currency: 'EUR', energyUnit: 'kWh', segmentSize: 6 });
    await forecast.close();
    await hub.publishAsync(topics.advice('NO4'), JSON.stringify({ v: 1, fetchedAtMs: clock.nowMs(), advice }), { qos: 1, retain: true });

    env.sandbox.onResponse(() => {
      if (watchApi) apiCallsByDaemon++;
    });
    watchApi = true;
    const { clientId: _id, clientSecret: _secret, ...spark } = env.config.spark;
    const config = parseConfig({
      ...env.config,
      spark,
      upstream: {
        mode: 'fleet',
        brokerUrl: fleet.url,
        gatewayId: 'gw-d',
        username: 'gw-d',
        password: 'gw-pass',
        locationId: 'demo-home',
        protocolVersion: 4,
        receiptTimeoutS: 3600,
      },
    }).config;
    expect(config.spark.clientSecret).toBe('');
    app = buildApp(config, { logger, clock, controlTickMs: 60_000, deviceTimeoutMs: 2_000 * speed });
    await app.start();
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
    await hub?.endAsync(true);
    await fleet?.close();
    await env?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("plans on the hub's advice, with the events job healthy on the broker connection", async () => {
    await until(() => app.currentPlan()?.mode === 'optimal', 'a priced plan', { timeoutMs: 20_000, everyMs: 50 });
    const plan = app.currentPlan()!;
    expect(plan.slots.some((s) => s.source === 'adviceOnly')).toBe(true);
    expect(app.view().health.jobs.find((j) => j.name === 'events')).toMatchObject({ ok: true });
  });

  it("plans around an LPC published to its location and uploads the acknowledgement only through the hub's receipt", async () => {
    const from = Math.ceil(clock.nowMs() / hourMs) * hourMs + hourMs;
    const points = [0, 1, 2].map((h) => ({ timestamp: new Date(from + h * hourMs).toISOString(), maxPowerInKiloWatts: 1.5 }));
    const event = {
      id: 'fleet-lpc-1',
      createdAt: new Date(clock.nowMs()).toISOString(),
      payload: { payloadType: 'LocationLPC', targets: [{ locationId: 'demo-home', resolution: '01:00:00', points }] },
    };
    await hub.publishAsync(topics.events('demo-home'), JSON.stringify({ v: 1, receivedAtMs: clock.nowMs(), event }), { qos: 1 });

    await until(() => app.store.hasEvent('fleet-lpc-1'), 'event stored', { timeoutMs: 20_000, everyMs: 50 });
    const capped = (): boolean => {
      const slots = app.currentPlan()?.slots.filter((s) => s.startMs >= from && s.startMs < from + 3 * hourMs) ?? [];
      return slots.length === 3 && slots.every((s) => s.headroomKw <= 1.5 && (s.tanks?.tank?.energyKwh ?? 0) <= 1.5);
    };
    await until(capped, 'the plan keeps the LPC hours under the cap');

    await until(() => reports.some((r) => r.report.eventId === 'fleet-lpc-1'), 'acknowledgement on the report topic', {
      timeoutMs: 20_000,
      everyMs: 50,
    });
    const ack = reports.find((r) => r.report.eventId === 'fleet-lpc-1')!;
    const row = () => app.store.listReports().find((r) => r.idempotencyKey === ack.idempotencyKey);
    expect(row()?.state).toBe('sending');
    await hub.publishAsync(
      topics.receipts('gw-d'),
      JSON.stringify({ v: 1, idempotencyKey: ack.idempotencyKey, status: 'accepted', reportId: 'api-ack-1', atMs: clock.nowMs() }),
      { qos: 1 },
    );
    await until(() => row()?.state === 'accepted', 'accepted on the receipt', { timeoutMs: 20_000, everyMs: 50 });
    expect(row()?.remoteId).toBe('api-ack-1');
  }, 60_000);

  it('shows the broker going down as the events job failing with FLEET_BROKER_DOWN, and recovers', async () => {
    const events = () => app.view().health.jobs.find((j) => j.name === 'events');
    await fleet.stop();
    await until(() => events()?.ok === false, 'events failing', { timeoutMs: 20_000, everyMs: 50 });
    expect(events()?.lastError?.code).toBe('FLEET_BROKER_DOWN');
    await fleet.start();
    await until(() => events()?.ok === true, 'events healthy again', { timeoutMs: 20_000, everyMs: 50 });
  }, 60_000);

  it('never called the API itself', () => {
    expect(apiCallsByDaemon).toBe(0);
  });
});
