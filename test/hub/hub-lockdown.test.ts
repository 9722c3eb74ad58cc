/**
 * The fleet broker locked down, seen with one gateway's credentials against real peers (Mosquitto
 * with the hub's generated files and config, PostgreSQL, the sandbox, two hub instances): it
 * cannot take a share of the hub's reports, cannot take another gateway's session, cannot stall the
 * hub with text PostgreSQL refuses (a NUL, a lone surrogate), and cannot make the hub read an
 * oversized message (held off by the broker, and by the hub's own client where a broker lacks the
 * limit).
 */
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceleratedClock, ManualClock } from '../../src/clock.js';
import { defaultConfig } from '../../src/config/load.js';
import { fleetUpstreamSchema } from '../../src/config/schema-upstream.js';
import { fleetTopics } from '../../src/fleet/wire.js';
import type { HubHealth } from '../../src/hub/health.js';
import { createLogger } from '../../src/log.js';
import type { SparkEvent } from '../../src/spark/wire.js';
import { createFleetUpstream } from '../../src/upstream/fleet.js';
import { openFleetLink } from '../../src/upstream/fleet-link.js';
import { startFleetBroker, type FleetBroker } from '../helpers/fleet-broker.js';
import { mosquittoAvailable } from '../helpers/mosquitto.js';
import { postgresAvailable } from '../helpers/postgres.js';
import { connectGateway, eventually, gateways, prefix, startFleetScene, webhookSecret, type FleetScene } from './fleet-world.js';

const topics = fleetTopics(prefix);
const t0 = Date.UTC(2030, 0, 14, 12);
const lpcEvent = (id: string, locationId: string, meterPointId = '707057500000000001'): SparkEvent =>
  ({
    id,
    createdAt: '2030-01-14T11:00:00Z',
    payload: {
      payloadType: 'LocationLPC',
      targets: [{ locationId, meterPointId, resolution: '01:00:00', points: [{ timestamp: '2030-01-14T14:00:00Z', maxPowerInKiloWatts: 1 }] }],
    },
  }) as SparkEvent;
/** A report on an event the hub never received: refused at once with a rejected receipt. */
const refusedReport = (key: string) =>
  JSON.stringify({
    v: 1,
    idempotencyKey: key,
    createdAtMs: t0,
    report: {
      eventId: 'no-such-event',
      payloads: [
        {
          payloadType: 'LocationLPCAcknowledgement',
          acknowledgedTargets: [{ meterPointId: gateways.b.meterPointId, locationId: gateways.b.locationId }],
        },
      ],
    },
  });
const until = async (check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> => {
  for (const end = Date.now() + timeoutMs; !check() && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
  expect(check(), what).toBe(true);
};
/** A raw connection with gateway credentials that gives up on the first failure (as a probe does). */
const probe = (url: string, g: { username: string; password: string }, options: mqtt.IClientOptions = {}): Promise<MqttClient> =>
  mqtt.connectAsync(url, { protocolVersion: 5, username: g.username, password: g.password, reconnectPeriod: 0, connectTimeout: 5000, ...options });

describe.skipIf(!postgresAvailable() || !mosquittoAvailable())('the fleet broker locked down', () => {
  let scene: FleetScene;
  const opened: MqttClient[] = [];

  beforeAll(async () => {
    scene = await startFleetScene();
  }, 60_000);
  afterAll(async () => {
    for (const c of opened) await c.endAsync(true).catch(() => undefined);
    await scene?.stop();
  });

  it("a gateway that joins the hub's shared subscription takes no report away from the hub", async () => {
    // Three connections with gw-a's credentials join the hub instances' group under its configured name.
    for (let i = 0; i < 3; i++) {
      const c = await probe(scene.world.broker.url, gateways.a, { clientId: `thief-${i}` }).catch(() => undefined);
      if (!c) continue;
      opened.push(c);
      c.on('error', () => undefined);
      await c.subscribeAsync([topics.sharedReports('wattshift-hub'), topics.sharedSync('wattshift-hub')], { qos: 1 }).catch(() => undefined);
    }
    const keys = Array.from({ length: 40 }, (_, i) => `steal-${i}`);
    for (const k of keys) await scene.gwB.client.publishAsync(topics.reports(gateways.b.gatewayId), refusedReport(k), { qos: 1 });
    const answered = (): Set<string> =>
      new Set(
        scene.gwB.messages.flatMap((m) => {
          const key = (m.payload as { idempotencyKey?: string }).idempotencyKey;
          return m.topic === topics.receipts(gateways.b.gatewayId) && key?.startsWith('steal-') ? [key] : [];
        }),
      );
    await until(() => answered().size === keys.length, `receipts for every report (got ${answered().size} of ${keys.length})`);
  }, 30_000);

  it("another gateway cannot take a gateway's session: the events queued while it was away all arrive", async () => {
    const cfg = fleetUpstreamSchema.parse({
      mode: 'fleet',
      brokerUrl: scene.world.broker.url,
      gatewayId: gateways.a.gatewayId,
      username: gateways.a.username,
      password: gateways.a.password,
      locationId: gateways.a.locationId,
      sessionExpiryHours: 48,
    });
    const got: string[] = [];
    const logger = createLogger({ level: 'warn', destination: { write: () => undefined } });
    const openVictim = () =>
      openFleetLink(cfg, {
        clock: new ManualClock(t0),
        logger,
        topics: [topics.events(gateways.a.locationId)],
        onMessage: (_t, p) => void got.push((JSON.parse(p.toString()) as { event: { id: string } }).event.id),
        onConnect: () => undefined,
        reconnectPeriodMs: 200,
      });
    const first = openVictim();
    await first.waitConnected(AbortSignal.timeout(5000));
    await new Promise((r) => setTimeout(r, 200));
    await first.close();
    for (let i = 0; i < 3; i++) await scene.hub1.fanout.accept(lpcEvent(`away-${i}`, gateways.a.locationId));
    // gw-b's credentials, under the victim's client id (the predictable one and its user name), with a clean start.
    for (const clientId of ['wattshift-gw-gw-a', gateways.a.username]) {
      const thief = await probe(scene.world.broker.url, gateways.b, { clientId, clean: true });
      await thief.endAsync();
    }
    const back = openVictim();
    try {
      await back.waitConnected(AbortSignal.timeout(5000));
      await until(() => got.length >= 3, `the three events queued while away (got ${got.length})`);
      expect(got.sort()).toEqual(['away-0', 'away-1', 'away-2']);
    } finally {
      await back.close();
    }
  }, 30_000);

  it('a gateway whose session another login took (its own copied credentials) asks the hub for its events again', async () => {
    const cfg = fleetUpstreamSchema.parse({
      mode: 'fleet',
      brokerUrl: scene.world.broker.url,
      gatewayId: gateways.a.gatewayId,
      username: gateways.a.username,
      password: gateways.a.password,
      locationId: gateways.a.locationId,
      sessionExpiryHours: 48,
    });
    const lines: { msg: string; code?: string }[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l) as { msg: string }) } });
    const upstream = createFleetUpstream(defaultConfig(), cfg, { clock: new ManualClock(t0), logger, reconnectPeriodMs: 200 });
    const asked = () => lines.filter((l) => l.msg === 'asked the hub for the open events of this location').length;
    await upstream.open();
    await upstream.startEvents({
      intake: { accept: () => ({ outcome: 'new' }) },
      isKnownEvent: () => false,
      pricesChanged: () => undefined,
      onRefused: () => undefined,
    });
    await until(() => asked() === 1, 'sync at start');
    // A copy of this gateway (same user, a persistent session) logs in and takes the session; the
    // gateway logs in again at once and takes it back, with whatever the copy consumed gone.
    const clone = await probe(scene.world.broker.url, gateways.a, {
      clientId: 'wattshift-gw-gw-a',
      clean: false,
      properties: { sessionExpiryInterval: 3600 },
    });
    clone.on('error', () => undefined);
    opened.push(clone);
    try {
      await until(() => asked() === 2, 'a sync after the session was taken');
    } finally {
      await upstream.close();
    }
  }, 30_000);

  /**
   * An API event whose meter point id and note hold `bad`, text PostgreSQL cannot store: answers
   * the meter point id gw-a received, once the poll went past the event to the one after it with
   * /healthz still 200 and `code` logged once for it.
   */
  async function apiEventHolding(bad: string, code: string): Promise<string> {
    const { world, hub1, hub2, spark } = scene;
    // A connection of its own: the tests before took gw-a's session over, as they should.
    const gwA = await connectGateway(world, gateways.a);
    await gwA.client.subscribeAsync(topics.events(gateways.a.locationId), { qos: 1 });
    const webhook = await spark.createWebhook({ webhookUrl: hub1.webhookUrl, webhookSecret, notificationTypes: ['LocationLPCRequested'] });
    try {
      const engine = world.sandbox.engine;
      const partner = engine.partner(world.sandbox.credentials[0]!.clientId);
      const target = {
        locationId: gateways.a.locationId,
        meterPointId: `7070575${bad}00000001`,
        resolution: '01:00:00',
        points: [{ timestamp: '2030-01-14T14:00:00Z', maxPowerInKiloWatts: 1 }],
      };
      const held = engine.createEvent(partner, 'LocationLPCRequested', { targets: [target], payloadType: 'LocationLPC', note: `a${bad}b` });
      await engine.settle();
      const got = await gwA.waitFor((m) => (m.payload as { event?: { id: string } }).event?.id === held.id);
      const meter = (got.payload as { event: { payload: { targets: { meterPointId: string }[] } } }).event.payload.targets[0]!.meterPointId;
      // The poll goes past it to the events after it; a second poll finds nothing new.
      await spark.setWebhookEnabled(webhook.webhookId, false);
      const after = engine.createEvent(partner, 'LocationLPCRequested', {
        targets: [{ ...target, meterPointId: gateways.a.meterPointId }],
        payloadType: 'LocationLPC',
      });
      expect(await hub2.pollEvents()).toBe(1);
      await gwA.waitFor((m) => (m.payload as { event?: { id: string } }).event?.id === after.id);
      expect(await hub2.pollEvents()).toBe(0);
      const res = await fetch(new URL('/healthz', hub1.webhookUrl));
      expect(res.status).toBe(200);
      expect(world.logs.filter((l) => l.code === code && l.eventId === held.id)).toHaveLength(1);
      return meter;
    } finally {
      await gwA.close();
      await spark.deleteWebhook(webhook.webhookId);
    }
  }

  it('an API event with a NUL character is stored, published and polled past; the hub stays healthy', async () => {
    expect(await apiEventHolding('\u0000', 'HUB_TEXT_NUL_REPLACED')).not.toContain('\u0000');
  }, 30_000);

  it('an API event with a lone UTF-16 surrogate (jsonb refuses it) is stored, published and polled past; the hub stays healthy', async () => {
    // Half of a surrogate pair, as JSON's \ud800 escape delivers it; a whole pair is ordinary text.
    const meter = await apiEventHolding('\ud800', 'HUB_TEXT_SURROGATE_REPLACED');
    expect(meter).toBe('7070575\ufffd00000001');
  }, 30_000);

  /**
   * Sends gw-b's 4 MB message on its report topic through `broker`'s gateways' listener, then a
   * small bad one; answers what the hub logged as dropped from the two (the marker alone when the
   * big one never reached it) and whether the broker refused the big one (its own log says so: the
   * sender's connection also ends when the marker's sender, the same user, takes its client id).
   */
  async function oversizedThenMarker(broker: FleetBroker): Promise<{ dropped: string[]; brokerRefused: boolean }> {
    const { world } = scene;
    const dropped = () => world.logs.filter((l) => l.msg === 'report dropped: not a fleet report' && l.gatewayId === gateways.b.gatewayId);
    const before = dropped().length;
    const brokerLogBefore = broker.output().length;
    const gatewayUrl = broker.url;
    const big = await probe(gatewayUrl, gateways.b, { clientId: 'big-sender' });
    big.on('error', () => undefined);
    opened.push(big);
    // 4 MB of valid JSON that is no report: the hub would log it as dropped had it read it.
    const sent = big
      .publishAsync(topics.reports(gateways.b.gatewayId), JSON.stringify({ big: 'x'.repeat(4 * 1024 * 1024) }), { qos: 1 })
      .catch(() => undefined);
    // A broker that refuses it closes the connection, and the publish may then never settle.
    await Promise.race([sent, new Promise((r) => setTimeout(r, 2000))]);
    // A small bad message after it: once the hub logs it, the big one had its turn.
    const after = await probe(gatewayUrl, gateways.b, { clientId: 'small-sender' });
    opened.push(after);
    await after.publishAsync(topics.reports(gateways.b.gatewayId), 'marker, not json', { qos: 1 });
    await eventually(async () => (dropped().some((l) => String(l.err).includes('marker')) ? true : undefined));
    await new Promise((r) => setTimeout(r, 300));
    const brokerRefused = broker.output().slice(brokerLogBefore).includes('disconnected due to oversize packet');
    return {
      dropped: dropped()
        .slice(before)
        .map((l) => String(l.err).slice(0, 40)),
      brokerRefused,
    };
  }

  it("a gateway's oversized message on its own report topic never reaches the hub: the broker refuses it", async () => {
    const { dropped, brokerRefused } = await oversizedThenMarker(scene.world.broker);
    expect(dropped).toHaveLength(1);
    expect(brokerRefused).toBe(true);
  }, 30_000);

  it("the hub's own client takes no oversized message from a broker set up without a packet limit", async () => {
    const { world } = scene;
    const loose = await startFleetBroker(await world.brokerFiles(), { packetLimit: false });
    try {
      const hub = await world.startHub('hub-loose', { broker: { ...world.hubConfig().broker, url: loose.hubUrl } });
      try {
        expect((await oversizedThenMarker(loose)).dropped).toHaveLength(1);
      } finally {
        await hub.stop();
      }
    } finally {
      await loose.stop();
    }
  }, 30_000);

  it('the health check fails when the event poll has not completed for too long', async () => {
    const { world } = scene;
    // An API that is not there: every poll fails. On a clock 600 times real time the poll's retries
    // and its limit pass in seconds.
    const hub = await world.startHub(
      'hub-stuck',
      { spark: { ...world.hubConfig().spark, baseUrl: 'http://127.0.0.1:9/' }, events: { pollIntervalS: 10 }, outbox: { idleS: 3600 } },
      acceleratedClock(t0, 600),
    );
    const health = async (): Promise<{ status: number; body: HubHealth }> => {
      const res = await fetch(new URL('/healthz', hub.webhookUrl));
      return { status: res.status, body: (await res.json()) as HubHealth };
    };
    const stuck = await eventually(async () => {
      const h = await health();
      return h.status === 503 ? h : undefined;
    }, 15_000);
    expect(stuck.body).toMatchObject({ ok: false, database: { ok: true }, broker: { ok: true }, events: { ok: false } });
    expect(world.logs.some((l) => l.code === 'HUB_EVENT_POLL_STUCK')).toBe(true);
    await hub.stop();
  }, 30_000);
});
