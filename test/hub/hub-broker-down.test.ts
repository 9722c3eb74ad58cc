/**
 * An event the API delivers while the hub has no broker: the webhook call is answered 500 at once
 * (nothing waits in the hub's memory for the broker), the event's publishing duty stays open, and
 * once the broker is back the poll (or the API's redelivery) publishes it, though the instance
 * that took the call was restarted meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetEventSchema, fleetTopics } from '../../src/fleet/wire.js';
import { mosquittoAvailable } from '../helpers/mosquitto.js';
import { postgresAvailable } from '../helpers/postgres.js';
import { connectGateway, eventually, gateways, prefix, startFleetScene, webhookSecret, type FleetScene } from './fleet-world.js';

const topics = fleetTopics(prefix);

describe.skipIf(!postgresAvailable() || !mosquittoAvailable())('hub without its broker', () => {
  let scene: FleetScene;

  beforeAll(async () => {
    scene = await startFleetScene();
  }, 60_000);
  afterAll(() => scene?.stop());

  it('answers the webhook 500 while the broker is down and publishes the event once it is back, across an instance restart', async () => {
    const { world, hub1, hub2, spark } = scene;
    await spark.createWebhook({ webhookUrl: hub1.webhookUrl, webhookSecret, notificationTypes: ['LocationLPCRequested'] });
    await world.broker.halt();
    await eventually(async () => (world.logs.some((l) => l.code === 'MQTT_UNAVAILABLE' && l['hub'] === 'hub-1') ? true : undefined));
    const started = Date.now();
    const event = await spark.simulateLocationLpc({
      locations: [{ location: { locationId: gateways.a.locationId, meterPointId: gateways.a.meterPointId } }],
    });
    await world.sandbox.engine.settle();
    // Refused at once, not held until the sandbox gives up on the call.
    const refused = await eventually(async () =>
      world.logs.find((l) => l.msg === 'webhook event not stored or not published; answered 500 for a redelivery' && l['eventId'] === event.id),
    );
    expect(refused).toMatchObject({ code: 'MQTT_UNAVAILABLE' });
    expect(Date.now() - started).toBeLessThan(2000);
    const row = await world.pool.query<{ published_at: Date | null }>('SELECT published_at FROM events WHERE event_id = $1', [event.id]);
    expect(row.rows).toEqual([{ published_at: null }]);

    // The instance that took the call goes away before the broker is back.
    await hub1.stop();
    await world.broker.resume();
    const gw = await connectGateway(world, gateways.a);
    try {
      await gw.client.subscribeAsync(topics.events(gateways.a.locationId), { qos: 1 });
      // hub-2 publishes it at its poll once its own connection is back.
      await eventually(async () => ((await hub2.pollEvents().catch(() => 0)) === 1 ? true : undefined), 20_000);
      const got = await gw.waitFor((m) => (m.payload as { event?: { id: string } }).event?.id === event.id);
      expect(fleetEventSchema.parse(got.payload).event.payload?.payloadType).toBe('LocationLPC');
    } finally {
      await gw.close();
    }
  }, 60_000);
});
