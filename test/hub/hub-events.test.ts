/**
 * The hub's event and advice fan-out against real peers: the sandbox calls the hub's webhook,
 * the hub publishes over Mosquitto (per-gateway ACLs) from state in PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetAdviceSchema, fleetEventSchema, fleetTopics } from '../../src/fleet/wire.js';
import type { Hub } from '../../src/hub/hub.js';
import type { SparkClient } from '../../src/spark/client.js';
import { signPayload } from '../../src/spark/webhook-signature.js';
import { mosquittoAvailable } from '../helpers/mosquitto.js';
import { postgresAvailable } from '../helpers/postgres.js';
import {
  connectGateway,
  eventually,
  gateways,
  prefix,
  startFleetScene,
  webhookSecret,
  type FleetScene,
  type FleetWorld,
  type GatewayClient,
} from './fleet-world.js';

const topics = fleetTopics(prefix);

describe.skipIf(!postgresAvailable() || !mosquittoAvailable())('hub event fan-out', () => {
  let scene: FleetScene;
  let world: FleetWorld;
  let hub1: Hub;
  let hub2: Hub;
  let spark: SparkClient;
  let gwA: GatewayClient;
  let gwB: GatewayClient;
  let webhookId: string;

  beforeAll(async () => {
    scene = await startFleetScene();
    ({ world, hub1, hub2, spark, gwA, gwB } = scene);
    webhookId = (
      await spark.createWebhook({
        webhookUrl: hub1.webhookUrl,
        webhookSecret,
        notificationTypes: ['LocationLPCRequested', 'ResourceLPCRequested', 'PriceCurveCreated', 'UserEligibilityUpdated'],
      })
    ).webhookId;
    await gwA.client.subscribeAsync([topics.events(gateways.a.locationId), topics.advice(gateways.a.priceArea)], { qos: 1 });
    // Mosquitto grants any subscription and applies the ACL to each message it would deliver: gw-b
    // also subscribes to gw-a's topics, and must never receive anything on them.
    await gwB.client.subscribeAsync(
      [
        topics.events(gateways.b.locationId),
        topics.advice(gateways.b.priceArea),
        topics.events(gateways.a.locationId),
        topics.advice(gateways.a.priceArea),
      ],
      { qos: 1 },
    );
  }, 60_000);
  afterAll(async () => {
    if (gwB !== scene?.gwB) await gwB?.close();
    await scene?.stop();
  });

  it("a gateway cannot publish on another gateway's topics (broker ACL)", async () => {
    await expect(gwA.client.publishAsync(topics.reports(gateways.b.gatewayId), '{}', { qos: 1 })).rejects.toThrow(/135|not authori[sz]ed/i);
    await expect(gwA.client.publishAsync(topics.events(gateways.b.locationId), '{}', { qos: 1 })).rejects.toThrow(/135|not authori[sz]ed/i);
  });

  it('an event via webhook reaches exactly the targeted gateway, once, and is stored once', async () => {
    const event = await spark.simulateLocationLpc({
      locations: [{ location: { locationId: gateways.a.locationId, meterPointId: gateways.a.meterPointId } }],
    });
    await world.sandbox.engine.settle();
    const got = await gwA.waitFor(
      (m) => m.topic === topics.events(gateways.a.locationId) && (m.payload as { event: { id: string } }).event.id === event.id,
    );
    const parsed = fleetEventSchema.parse(got.payload);
    expect(parsed.event.payload?.payloadType).toBe('LocationLPC');
    // Poll as the safety net on the other instance: the event is known, nothing is sent again.
    expect(await hub2.pollEvents()).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(gwA.messages.filter((m) => (m.payload as { event?: { id: string } }).event?.id === event.id)).toHaveLength(1);
    expect(gwB.messages.filter((m) => m.topic.endsWith('/events'))).toHaveLength(0);
    expect(gwB.messages.filter((m) => m.topic === topics.advice(gateways.a.priceArea))).toHaveLength(0);
    const rows = await world.pool.query<{ target_location_ids: string[] }>('SELECT target_location_ids FROM events WHERE event_id = $1', [event.id]);
    expect(rows.rows).toEqual([{ target_location_ids: [gateways.a.locationId] }]);
  });

  it('a resource event reaches the gateway that owns the resource (looked up in the registry)', async () => {
    const event = await spark.simulateResourceLpc({
      resources: [{ resource: { resourceId: gateways.b.resourceId, locationId: gateways.b.locationId } }],
    });
    await world.sandbox.engine.settle();
    await gwB.waitFor((m) => (m.payload as { event?: { id: string } }).event?.id === event.id);
    expect(gwA.messages.some((m) => (m.payload as { event?: { id: string } }).event?.id === event.id)).toBe(false);
  });

  it('polling finds an event the webhook did not deliver and publishes it', async () => {
    await spark.setWebhookEnabled(webhookId, false);
    const event = await spark.simulateLocationLpc({
      locations: [{ location: { locationId: gateways.b.locationId, meterPointId: gateways.b.meterPointId } }],
    });
    await world.sandbox.engine.settle();
    expect(await hub2.pollEvents()).toBe(1);
    await gwB.waitFor((m) => (m.payload as { event?: { id: string } }).event?.id === event.id);
    await spark.setWebhookEnabled(webhookId, true);
  });

  it("polls pages of events that target many homes (above the daemon's 2 MiB answer limit) and publishes them", async () => {
    await spark.setWebhookEnabled(webhookId, false);
    try {
      // Two events of about 1.2 MB each: 20,000 homes the registry does not know, and loc-b.
      const many = Array.from({ length: 20_000 }, (_, i) => ({ resourceId: `res-far-${i}`, locationId: `loc-far-${i}` }));
      const ids: string[] = [];
      for (let i = 0; i < 2; i++)
        ids.push(
          (
            await spark.simulatePriceCurve({
              priceArea: 'NO2',
              targets: [...many, { resourceId: gateways.b.resourceId, locationId: gateways.b.locationId }],
            })
          ).id,
        );
      expect(await hub2.pollEvents()).toBe(2);
      for (const id of ids) {
        const got = fleetEventSchema.parse((await gwB.waitFor((m) => (m.payload as { event?: { id: string } }).event?.id === id)).payload);
        expect((got.event.payload as { targets: unknown[] }).targets).toEqual([
          { resourceId: gateways.b.resourceId, locationId: gateways.b.locationId },
        ]);
      }
    } finally {
      await spark.setWebhookEnabled(webhookId, true);
    }
  }, 30_000);

  it('refuses webhook calls with a wrong signature (401, logged) and stores nothing from them', async () => {
    const body = JSON.stringify({
      notificationId: 'n-1',
      eventId: 'forged',
      eventCreatedAtUtc: '2026-01-01T00:00:00Z',
      notificationSentUtc: '2026-01-01T00:00:00Z',
      notificationType: 'LocationLPCRequested',
      payload: { payloadType: 'LocationLPC', targets: [] },
    });
    const forged = await fetch(hub1.webhookUrl, { method: 'POST', body, headers: { 'x-payload-signature': signPayload(body, 'not-the-secret') } });
    expect(forged.status).toBe(401);
    expect(world.logs.some((l) => l.code === 'WEBHOOK_SIGNATURE_INVALID')).toBe(true);
    const signed = await fetch(hub1.webhookUrl, {
      method: 'POST',
      body: '{"not":"a notification"}',
      headers: { 'x-payload-signature': signPayload('{"not":"a notification"}', webhookSecret) },
    });
    expect(signed.status).toBe(400);
    expect((await world.pool.query("SELECT 1 FROM events WHERE event_id = 'forged'")).rowCount).toBe(0);
  });

  it("answers a gateway's sync with the events still running for its locations only", async () => {
    const before = gwA.messages.length;
    await gwA.client.publishAsync(topics.sync(gateways.a.gatewayId), JSON.stringify({ v: 1, requestedAtMs: Date.now() }), { qos: 1 });
    await eventually(async () => (gwA.messages.length > before ? true : undefined));
    const resent = gwA.messages.slice(before).map((m) => fleetEventSchema.parse(m.payload).event.payload?.payloadType);
    expect(resent).toEqual(['LocationLPC']);
  });

  it('publishes the prices (advice, hourly forecast, actual) once per price area in use, retained, to that area only', async () => {
    const tokenCallsBefore = world.sandbox.tokensIssued();
    expect(await hub1.advice.publishAll()).toEqual(['NO1', 'NO2']);
    const advice = await gwA.waitFor((m) => m.topic === topics.advice('NO1'));
    const message = fleetAdviceSchema.parse(advice.payload);
    expect(message.advice.priceArea).toBe('NO1');
    // The hourly forecast and the actual spot prices ride along, so gateways plan hour by hour.
    expect(message.forecast?.forecastSegments.length).toBeGreaterThan(24);
    for (const seg of message.forecast!.forecastSegments) expect(Date.parse(seg.to) - Date.parse(seg.from)).toBeLessThanOrEqual(3_600_000);
    expect(message.forecast?.priceUnits.energyUnit.toLowerCase()).toBe('kwh');
    expect(Object.keys(message.actual?.prices ?? {}).length).toBeGreaterThan(0);
    expect(gwA.messages.some((m) => m.topic === topics.advice('NO2'))).toBe(false);
    // Retained: a gateway that connects later gets it at once. Its login takes gw-b's client id
    // (the broker binds ids to users), so it is gw-b from here on.
    const late = await connectGateway(world, gateways.b);
    await late.client.subscribeAsync(topics.advice('NO2'), { qos: 1 });
    const retained = await late.waitFor((m) => m.topic === topics.advice('NO2'));
    expect(late.messages.find((m) => m === retained)?.retain).toBe(true);
    await late.client.subscribeAsync(topics.events(gateways.b.locationId), { qos: 1 });
    gwB = late;
    expect(world.sandbox.tokensIssued()).toBeGreaterThanOrEqual(tokenCallsBefore);
  });

  it('a price curve for both homes reaches each gateway with its own targets only', async () => {
    // gw-b's target names its resource under a location id the registry does not know: the
    // registry places the resource at loc-b, so gw-b gets that target too.
    const targets = [
      { resourceId: gateways.a.resourceId, locationId: gateways.a.locationId },
      { resourceId: gateways.b.resourceId, locationId: 'loc-unregistered' },
    ];
    const event = await spark.simulatePriceCurve({ priceArea: 'NO1', targets });
    await world.sandbox.engine.settle();
    const ofEvent = (m: { payload: unknown }): boolean => (m.payload as { event?: { id: string } }).event?.id === event.id;
    const toA = fleetEventSchema.parse((await gwA.waitFor(ofEvent)).payload);
    const toB = fleetEventSchema.parse((await gwB.waitFor(ofEvent)).payload);
    expect((toA.event.payload as { targets: unknown[] }).targets).toEqual([targets[0]]);
    expect((toB.event.payload as { targets: unknown[] }).targets).toEqual([targets[1]]);
    expect(JSON.stringify(toA)).not.toContain(gateways.b.resourceId);
  });
});
