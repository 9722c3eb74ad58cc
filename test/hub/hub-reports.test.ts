/**
 * Reports through the hub against real peers: gateways publish over Mosquitto (per-gateway
 * ACLs), hub instances share the report topics and the PostgreSQL outbox, the sandbox API
 * counts what it accepted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetReceiptSchema, fleetTopics, type FleetReceipt } from '../../src/fleet/wire.js';
import type { SparkClient } from '../../src/spark/client.js';
import type { ReportRequest } from '../../src/spark/wire.js';
import { mosquittoAvailable } from '../helpers/mosquitto.js';
import { postgresAvailable } from '../helpers/postgres.js';
import {
  connectGateway,
  eventually,
  gateways,
  prefix,
  startFleetScene,
  type FleetScene,
  type FleetWorld,
  type GatewayClient,
} from './fleet-world.js';
import { spawnDoomedHub } from './doomed-hub.js';

const topics = fleetTopics(prefix);
const a = gateways.a;
const b = gateways.b;

const locationAck = (eventId: string, g: { locationId: string; meterPointId: string }): ReportRequest => ({
  eventId,
  payloads: [{ payloadType: 'LocationLPCAcknowledgement', acknowledgedTargets: [{ locationId: g.locationId, meterPointId: g.meterPointId }] }],
});
const fleetReport = (key: string, report: ReportRequest): string => JSON.stringify({ v: 1, idempotencyKey: key, createdAtMs: Date.now(), report });

describe.skipIf(!postgresAvailable() || !mosquittoAvailable())('hub reports', () => {
  let scene: FleetScene;
  let world: FleetWorld;
  let spark: SparkClient;
  let gwA: GatewayClient;
  let gwB: GatewayClient;
  const receipts = (gw: GatewayClient, key: string): FleetReceipt[] =>
    gw.messages
      .filter((m) => m.topic.endsWith('/receipts'))
      .map((m) => fleetReceiptSchema.parse(m.payload))
      .filter((r) => r.idempotencyKey === key);
  const acceptedFor = (eventId: string) => world.sandbox.acceptedReports().filter((r) => r.eventId === eventId);
  /** An LPC event for the home, as the hub stores what it receives (webhook or poll) for it. */
  const lpcFor = async (g: { locationId: string; meterPointId: string }): Promise<string> => {
    const event = await spark.simulateLocationLpc({ locations: [{ location: { locationId: g.locationId, meterPointId: g.meterPointId } }] });
    await world.registry.saveEvent(event, null, [g.locationId]);
    return event.id;
  };

  beforeAll(async () => {
    scene = await startFleetScene();
    ({ world, spark, gwA, gwB } = scene);
  }, 60_000);
  afterAll(() => scene?.stop());

  it('uploads a report exactly once though it is published twice at once, with two hub instances sharing the topic', async () => {
    const eventId = await lpcFor(a);
    const body = fleetReport('k-twice', locationAck(eventId, a));
    await Promise.all([
      gwA.client.publishAsync(topics.reports(a.gatewayId), body, { qos: 1 }),
      gwA.client.publishAsync(topics.reports(a.gatewayId), body, { qos: 1 }),
    ]);
    const first = await eventually(async () => receipts(gwA, 'k-twice')[0]);
    expect(first.status).toBe('accepted');
    // A later copy (the gateway did not see the receipt) is answered with the stored receipt.
    await gwA.client.publishAsync(topics.reports(a.gatewayId), body, { qos: 1 });
    await eventually(async () => (receipts(gwA, 'k-twice').length >= 2 ? true : undefined));
    expect(new Set(receipts(gwA, 'k-twice').map((r) => r.reportId))).toEqual(new Set([first.reportId]));
    expect(acceptedFor(eventId)).toHaveLength(1);
    expect(acceptedFor(eventId)[0]?.id).toBe(first.reportId);
    const rows = await world.pool.query<{ attempts: number; state: string }>(
      "SELECT attempts, state FROM report_outbox WHERE idempotency_key = 'k-twice'",
    );
    expect(rows.rows).toEqual([{ attempts: 1, state: 'accepted' }]);
  });

  it('stores and answers a report holding a NUL and a lone surrogate (text PostgreSQL refuses), each replaced and logged once', async () => {
    const eventId = await lpcFor(a);
    const odd = { locationId: a.locationId, meterPointId: `${a.meterPointId}\u0000\ud800` };
    await gwA.client.publishAsync(topics.reports(a.gatewayId), fleetReport('k-odd-text', locationAck(eventId, odd)), { qos: 1 });
    // Answered at all: a report the hub cannot store gets no receipt, and the gateway resends it forever.
    await eventually(async () => receipts(gwA, 'k-odd-text')[0]);
    const rows = await world.pool.query<{ body: unknown }>("SELECT body FROM report_outbox WHERE idempotency_key = 'k-odd-text'");
    expect(JSON.stringify(rows.rows[0]?.body)).toContain(`${a.meterPointId}\ufffd\ufffd`);
    for (const code of ['HUB_TEXT_NUL_REPLACED', 'HUB_TEXT_SURROGATE_REPLACED']) {
      expect(
        world.logs.filter((l) => l.code === code && l.idempotencyKey === 'k-odd-text'),
        code,
      ).toHaveLength(1);
    }
  });

  it("refuses a report naming another home's resource: rejected receipt, FLEET_REPORT_FORBIDDEN logged, nothing uploaded", async () => {
    const event = await spark.simulateResourceLpc({
      resources: [{ resource: { resourceId: b.resourceId, locationId: b.locationId, meterPointId: b.meterPointId } }],
    });
    await world.registry.saveEvent(event, null, [b.locationId]);
    const report: ReportRequest = {
      eventId: event.id,
      payloads: [
        {
          payloadType: 'ResourceLPCAcknowledgement',
          acknowledgedTargets: [{ resourceId: b.resourceId, locationId: b.locationId, meterPointId: b.meterPointId }],
        },
      ],
    };
    await gwA.client.publishAsync(topics.reports(a.gatewayId), fleetReport('k-foreign', report), { qos: 1 });
    const receipt = await eventually(async () => receipts(gwA, 'k-foreign')[0]);
    expect(receipt.status).toBe('rejected');
    expect(receipt.reason).toMatch(/FLEET_REPORT_FORBIDDEN.*resource res-b/);
    const line = world.logs.find((l) => l.code === 'FLEET_REPORT_FORBIDDEN' && l.idempotencyKey === 'k-foreign');
    expect(line).toMatchObject({ gatewayId: a.gatewayId, foreignResources: [b.resourceId], foreignLocations: [b.locationId] });
    await new Promise((r) => setTimeout(r, 1500));
    expect(acceptedFor(event.id)).toHaveLength(0);
    expect(receipts(gwB, 'k-foreign')).toHaveLength(0);
  });

  it('refuses a report on an event that did not target the gateway, or that the hub never received, though it names only its own home', async () => {
    const othersEvent = await lpcFor(b);
    await gwA.client.publishAsync(topics.reports(a.gatewayId), fleetReport('k-not-mine', locationAck(othersEvent, a)), { qos: 1 });
    await gwA.client.publishAsync(topics.reports(a.gatewayId), fleetReport('k-unknown', locationAck('never-sent', a)), { qos: 1 });
    for (const [key, eventId] of [
      ['k-not-mine', othersEvent],
      ['k-unknown', 'never-sent'],
    ] as const) {
      const receipt = await eventually(async () => receipts(gwA, key)[0]);
      expect(receipt.status).toBe('rejected');
      expect(receipt.reason).toBe(`FLEET_REPORT_FORBIDDEN: event ${eventId} did not target this gateway's locations`);
      expect(world.logs.find((l) => l.code === 'FLEET_REPORT_FORBIDDEN' && l.idempotencyKey === key)).toMatchObject({
        gatewayId: a.gatewayId,
        eventId,
        foreignLocations: [],
        foreignResources: [],
      });
    }
    await new Promise((r) => setTimeout(r, 1500));
    expect(acceptedFor(othersEvent)).toHaveLength(0);
  });

  it('drops (and logs) a message that is not a fleet report', async () => {
    await gwA.client.publishAsync(topics.reports(a.gatewayId), '{"v":2}', { qos: 1 });
    await eventually(async () => world.logs.find((l) => l.code === 'FLEET_MESSAGE_INVALID' && l.gatewayId === a.gatewayId));
  });

  it('a hub instance killed after claiming a report: another instance uploads it after the lease, and the API has it once', async () => {
    await scene.hub1.stop();
    await scene.hub2.stop();
    const doomed = await spawnDoomedHub(world, 'hub-doomed');
    try {
      const eventId = await lpcFor(a);
      await gwA.client.publishAsync(topics.reports(a.gatewayId), fleetReport('k-killed', locationAck(eventId, a)), { qos: 1 });
      await eventually(async () => {
        const { rows } = await world.pool.query<{ claimed_by: string | null }>(
          "SELECT claimed_by FROM report_outbox WHERE idempotency_key = 'k-killed'",
        );
        return rows[0]?.claimed_by === 'hub-doomed' ? true : undefined;
      });
      await doomed.kill();
      const hub3 = await world.startHub('hub-3');
      const receipt = await eventually(async () => receipts(gwA, 'k-killed')[0], 20_000);
      expect(receipt).toMatchObject({ status: 'accepted' });
      expect(acceptedFor(eventId)).toHaveLength(1);
      const { rows } = await world.pool.query<{ attempts: number; state: string }>(
        "SELECT attempts, state FROM report_outbox WHERE idempotency_key = 'k-killed'",
      );
      expect(rows).toEqual([{ attempts: 2, state: 'accepted' }]);
      expect(hub3.instanceId).toBe('hub-3');
    } finally {
      await doomed.kill();
    }
  }, 60_000);

  it('a revoked gateway: the hub refuses its reports, and once the broker has the new files it is disconnected and cannot log in again', async () => {
    await world.registry.setRevoked(b.gatewayId, true);
    const eventId = await lpcFor(b);
    await gwB.client.publishAsync(topics.reports(b.gatewayId), fleetReport('k-revoked', locationAck(eventId, b)), { qos: 1 });
    const receipt = await eventually(async () => receipts(gwB, 'k-revoked')[0]);
    expect(receipt).toMatchObject({ status: 'rejected', reason: expect.stringContaining('gateway revoked') as string });

    await world.broker.reload(await world.brokerFiles());
    // Mosquitto checks connected clients against the reloaded files: gw-b is disconnected.
    await eventually(async () => (gwB.client.connected ? undefined : true));
    await expect(connectGateway(world, b)).rejects.toThrow(/Not authorized|Bad User Name or Password|135|134/i);
    expect(acceptedFor(eventId)).toHaveLength(0);
  });
});
