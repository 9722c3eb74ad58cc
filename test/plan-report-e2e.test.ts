/**
 * The location's plan report end to end: the daemon (in this process, on an accelerated clock) plans
 * the demo home and sends a LocationEnergyUsagePlan report to the sandbox over HTTP through its
 * report outbox. The body conforms to the provider's OpenAPI document (checked with ajv, not with
 * the product's zod schemas), the sandbox's answer too, the sandbox accepts and lists it, and the
 * view, the status page, `wattshift status` and the MQTT health topic show the report sent.
 */
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import type { Config } from '../src/config/schema.js';
import { localAt } from '../src/demo/environment.js';
import { collectStatus } from '../src/cli/status.js';
import { renderStatusPage } from '../src/status/page.js';
import { openStore } from '../src/store/index.js';
import { demoHome } from './helpers/demo-home.js';
import { eventually } from './helpers/aedes.js';
import { auditResponses, validateComponent, type ResponseAudit } from './helpers/openapi-validate.js';
import { api, fetchToken } from './fixtures/sandbox/raw-client.js';

const startMs = localAt(Date.UTC(2026, 0, 14, 12), 0, 10);
const hour = 3_600_000;

describe('plan reports to the API', () => {
  const home = demoHome({ name: 'plan-report', startMs, speed: 300 });
  let config: Config;
  let audit: ResponseAudit;
  let health: mqtt.MqttClient;
  const healthMessages: Record<string, unknown>[] = [];

  beforeAll(async () => {
    const env = await home.startWorld();
    config = parseConfig(env.config).config;
    await home.register(config);
    audit = auditResponses(env.sandbox);
    const broker = config.mqtt;
    if (!broker) throw new Error('the demo home has no MQTT broker');
    health = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    health.on('message', (_topic, payload) => healthMessages.push(JSON.parse(payload.toString()) as Record<string, unknown>));
    await health.subscribeAsync(`${broker.baseTopic}/health`);
    await home.startApp(config, { controlTickMs: 60_000 });
  }, 60_000);

  afterAll(async () => {
    audit?.stop();
    await health?.endAsync();
    await home.close();
  }, 30_000);

  it("sends the plan as the API's LocationEnergyUsagePlan, without an event, and the sandbox accepts and lists it", async () => {
    const sandbox = home.env.sandbox;
    const [accepted] = await eventually(
      () => {
        const plans = sandbox.acceptedPlanReports();
        if (plans.length === 0) throw new Error('no plan report accepted yet');
        return plans;
      },
      60_000,
      50,
    );
    const payload = accepted!.payloads[0]!.raw as {
      payloadType: string;
      locationId: string;
      meterPointId: string;
      baseline: { timestamp: string; kiloWattHours: number }[];
      flexibility: { timestamp: string; kiloWattHours: number }[];
    };
    expect(payload).toMatchObject({
      payloadType: 'LocationEnergyUsagePlan',
      locationId: config.spark.locationId,
      meterPointId: config.spark.meterPointIds[0],
      resolution: '01:00:00',
    });
    // The request body as the provider's document defines it (ajv over the OpenAPI document).
    expect(validateComponent('PostReportRequest', { payloads: [payload] })).toEqual([]);
    // Whole hours from the hour the report was made in, the same hours in both curves.
    const hours = payload.baseline.map((p) => Date.parse(p.timestamp));
    expect(hours.length).toBeGreaterThan(6);
    expect(hours.every((ms) => ms % hour === 0)).toBe(true);
    expect(payload.flexibility.map((p) => p.timestamp)).toEqual(payload.baseline.map((p) => p.timestamp));
    // The home draws its base load in every hour, and the plan has a tank and a car to move.
    expect(payload.baseline.every((p) => p.kiloWattHours > 0)).toBe(true);
    expect(payload.flexibility.some((p) => p.kiloWattHours > 0)).toBe(true);
    // Every answer the sandbox gave to POST /reports conforms to the document.
    expect(audit.failures.filter((f) => f.includes('/reports'))).toEqual([]);
    expect(audit.records.some((r) => r.method === 'POST' && r.path.endsWith('/reports') && r.status === 200)).toBe(true);

    const call = api(sandbox, await fetchToken(sandbox));
    const listed = await call('GET', '/simulation/reports');
    expect(listed.status).toBe(200);
    const reports = (listed.json as { reports: { id: string; eventId: string | null; payloads: unknown[] }[] }).reports;
    expect(reports.find((r) => r.id === accepted!.id)).toEqual({
      id: accepted!.id,
      eventId: null,
      createdAt: expect.any(String),
      payloads: [payload],
    });
  }, 90_000);

  it('shows the last plan report sent in the view, the status page, `wattshift status` and the MQTT health topic', async () => {
    type Sent = { baseline: { timestamp: string; kiloWattHours: number }[]; flexibility: { kiloWattHours: number }[] };
    const sum = (points: { kiloWattHours: number }[]): number => Math.round(points.reduce((a, p) => a + p.kiloWattHours, 0) * 1000) / 1000;
    // The view against the newest report the sandbox accepted (a re-plan may send another meanwhile).
    const { view, payload } = await eventually(
      () => {
        const accepted = home.env.sandbox.acceptedPlanReports();
        const sent = accepted[accepted.length - 1]!.payloads[0]!.raw as Sent;
        const v = home.app.view();
        if (v.outbox.lastPlanReport?.hours !== sent.baseline.length || v.outbox.lastPlanReport.baselineKwh !== sum(sent.baseline))
          throw new Error('view not there yet');
        return { view: v, payload: sent };
      },
      30_000,
      50,
    );
    const firstHourMs = Date.parse(payload.baseline[0]!.timestamp);
    expect(view.outbox.lastPlanReport).toEqual({
      // `first`, or `changed` when the first plans (before every device was read) moved energy.
      acceptedMs: expect.any(Number),
      reason: expect.stringMatching(/^(first|changed)$/),
      fromMs: firstHourMs,
      toMs: firstHourMs + payload.baseline.length * hour,
      hours: payload.baseline.length,
      baselineKwh: sum(payload.baseline),
      flexibilityKwh: sum(payload.flexibility),
    });

    const page = renderStatusPage(view, { timezone: config.site.timezone });
    expect(page).toMatch(new RegExp(`<p id="plan-report">Plan report: accepted [^<]*\\((first|changed)\\), ${payload.baseline.length} h from `));

    const store = openStore({ path: config.storage.path, clock: home.clock });
    try {
      const status = collectStatus(store, home.clock.nowMs());
      expect(status.planReport?.lastPlanReport).toEqual(view.outbox.lastPlanReport);
    } finally {
      store.close();
    }

    const published = await eventually(
      () => {
        const outbox = [...healthMessages]
          .reverse()
          .map((m) => m['outbox'] as Record<string, unknown>)
          .find((o) => o['last_plan_report'] !== null && o['last_plan_report'] !== undefined);
        if (!outbox) throw new Error('no plan report on the health topic yet');
        return outbox;
      },
      30_000,
      50,
    );
    expect(published['last_plan_report']).toMatchObject({
      reason: view.outbox.lastPlanReport!.reason,
      hours: payload.baseline.length,
      baseline_kwh: sum(payload.baseline),
      flexibility_kwh: sum(payload.flexibility),
    });
  }, 60_000);
});
