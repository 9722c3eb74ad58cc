/**
 * The fleet upstream against a real Mosquitto (MQTT 5, TLS, password file): the gateway's
 * persistent session keeps the events the hub sent while the gateway was away, a broker that
 * lost the session gets a fresh sync request, and `wattshift check` refuses an API secret on a
 * fleet gateway.
 */
import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { createLogger } from '../src/log.js';
import { runCli } from '../src/cli/dispatch.js';
import { defaultConfig } from '../src/config/load.js';
import { fleetUpstreamSchema } from '../src/config/schema-upstream.js';
import { createFleetUpstream } from '../src/upstream/fleet.js';
import { openFleetLink } from '../src/upstream/fleet-link.js';
import { fleetTopics } from '../src/fleet/wire.js';
import type { Upstream } from '../src/upstream/port.js';
import { mosquittoAvailable, startMosquitto, type MosquittoBroker } from './helpers/mosquitto.js';
import { until } from './helpers/until.js';

const t0 = Date.UTC(2026, 0, 14, 12);
const topics = fleetTopics();
const available = mosquittoAvailable();

describe.skipIf(!available)('fleet upstream with Mosquitto (MQTT 5, TLS, password)', () => {
  let broker: MosquittoBroker;
  let hub: MqttClient;
  const syncs: unknown[] = [];
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    broker = await startMosquitto();
    hub = await mqtt.connectAsync(broker.url, {
      protocolVersion: 5,
      clientId: 'hub-test',
      username: broker.username,
      password: broker.password,
      ca: readFileSync(broker.caFile),
      reconnectPeriod: 200,
    });
    hub.on('message', (topic, payload) => topic === topics.sync('gw-m') && syncs.push(JSON.parse(payload.toString())));
    await hub.subscribeAsync(topics.sync('gw-m'), { qos: 1 });
  }, 60_000);

  afterAll(async () => {
    await hub?.endAsync(true);
    await broker?.stop();
  });

  function gateway(password = broker.password): { upstream: Upstream; accepted: string[]; start: () => Promise<unknown> } {
    const cfg = fleetUpstreamSchema.parse({
      mode: 'fleet',
      brokerUrl: broker.url,
      gatewayId: 'gw-m',
      username: broker.username,
      password,
      ca: broker.caFile,
      locationId: 'home-m',
      sessionExpiryHours: 48,
    });
    const logger = createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });
    const upstream = createFleetUpstream(defaultConfig(), cfg, { clock: new ManualClock(t0), logger, reconnectPeriodMs: 200 });
    const accepted: string[] = [];
    const start = () =>
      upstream.startEvents({
        intake: { accept: (raw) => (accepted.push((raw as { id: string }).id), { outcome: 'new' }) },
        isKnownEvent: () => false,
        pricesChanged: () => undefined,
        onRefused: () => undefined,
      });
    return { upstream, accepted, start };
  }
  const event = (id: string) => ({
    v: 1,
    receivedAtMs: t0,
    event: {
      id,
      createdAt: '2026-01-14T11:00:00Z',
      payload: {
        payloadType: 'LocationLPC',
        targets: [{ locationId: 'home-m', resolution: '01:00:00', points: [{ timestamp: '2026-01-14T14:00:00Z', maxPowerInKiloWatts: 1 }] }],
      },
    },
  });

  it('events sent while the gateway was offline arrive when it comes back (persistent session); a lost session asks the hub to sync', async () => {
    const first = gateway();
    await first.upstream.open();
    await first.start();
    await until(() => syncs.length === 1, 'sync at start', { everyMs: 20 });
    await hub.publishAsync(topics.events('home-m'), JSON.stringify(event('lpc-online')), { qos: 1 });
    await until(() => first.accepted.length === 1, 'online event', { everyMs: 20 });
    await first.upstream.close();

    // The home is away; the hub goes on publishing to its location.
    await hub.publishAsync(topics.events('home-m'), JSON.stringify(event('lpc-away-1')), { qos: 1 });
    await hub.publishAsync(topics.events('home-m'), JSON.stringify(event('lpc-away-2')), { qos: 1 });

    const second = gateway();
    await second.upstream.open();
    expect(lines.some((l) => l.msg === 'fleet broker connected' && l.newSession === false)).toBe(true);
    await second.start();
    await until(() => second.accepted.length === 2, 'the events sent while away', { everyMs: 20 });
    expect(second.accepted).toEqual(['lpc-away-1', 'lpc-away-2']);
    // A restarted daemon asks once more at start, session or not.
    await until(() => syncs.length === 2, 'sync at the second start', { everyMs: 20 });

    // Mosquitto runs without persistence here: a restart loses the session, so the gateway asks
    // the hub for the open events again (those sent during the outage were lost with it).
    await broker.halt();
    await until(() => !second.upstream.health().ok, 'down', { everyMs: 20 });
    expect(second.upstream.health().lastError?.code).toBe('FLEET_BROKER_DOWN');
    await broker.resume();
    await until(() => second.upstream.health().ok, 'up again', { everyMs: 20 });
    // Seen from the gateway: the hub's own subscription may come back after the gateway's sync.
    const asked = () => lines.filter((l) => l.msg === 'asked the hub for the open events of this location').length;
    await until(() => asked() === 3, 'sync after the lost session', { everyMs: 20 });
    expect(lines.some((l) => l.msg === 'fleet broker connected again' && l.newSession === true)).toBe(true);
    await hub.publishAsync(topics.events('home-m'), JSON.stringify(event('lpc-after')), { qos: 1 });
    await until(() => second.accepted.length === 3, 'subscriptions made again', { everyMs: 20 });
    await second.upstream.close();
  }, 60_000);

  it('a refused login (revoked credentials) is FLEET_AUTH_REJECTED on the health, logged once, and the start goes on', async () => {
    const revoked = gateway('not-the-password');
    const before = lines.length;
    await revoked.upstream.open();
    expect(revoked.upstream.health()).toMatchObject({ ok: false, lastError: { code: 'FLEET_AUTH_REJECTED' } });
    await new Promise((r) => setTimeout(r, 1000));
    expect(lines.slice(before).filter((l) => l.code === 'FLEET_AUTH_REJECTED' && l.msg?.toString().includes('connection down'))).toHaveLength(1);
    // A report is not lost: it fails as retryable and stays in the outbox.
    const ack = {
      eventId: 'e',
      payloads: [{ payloadType: 'LocationLPCAcknowledgement', acknowledgedTargets: [{ meterPointId: 'mp', locationId: 'home-m' }] }],
    };
    await expect(
      revoked.upstream.reports.postReport(ack, new AbortController().signal, { idempotencyKey: 'k', createdAtMs: t0 }),
    ).rejects.toMatchObject({ code: 'FLEET_BROKER_DOWN', retryable: true });
    await revoked.upstream.close();
  }, 30_000);

  it('backs off after refused logins: the waits double from the reconnect period up to the limit', async () => {
    const refusals: { atMs: number; retryInMs: number }[] = [];
    const logger = createLogger({
      level: 'debug',
      destination: {
        write: (l: string) => {
          const line = JSON.parse(l) as { code?: string; retryInMs?: number };
          if (line.code === 'FLEET_AUTH_REJECTED' && typeof line.retryInMs === 'number')
            refusals.push({ atMs: Date.now(), retryInMs: line.retryInMs });
        },
      },
    });
    const cfg = fleetUpstreamSchema.parse({
      mode: 'fleet',
      brokerUrl: broker.url,
      gatewayId: 'gw-refused',
      username: broker.username,
      password: 'not-the-password',
      ca: broker.caFile,
      locationId: 'home-r',
    });
    const link = openFleetLink(cfg, {
      clock: new ManualClock(t0),
      logger,
      topics: [],
      onMessage: () => undefined,
      onConnect: () => undefined,
      reconnectPeriodMs: 100,
      authRetryMaxMs: 800,
    });
    try {
      await until(() => refusals.length >= 6, 'six refused logins', { everyMs: 20 });
    } finally {
      await link.close();
    }
    expect(refusals.slice(0, 6).map((r) => r.retryInMs)).toEqual([100, 200, 400, 800, 800, 800]);
    // The broker really saw the logins that far apart (a little slack for the timers).
    for (let i = 1; i < 6; i++) expect(refusals[i]!.atMs - refusals[i - 1]!.atMs).toBeGreaterThanOrEqual(refusals[i - 1]!.retryInMs * 0.9);
    expect(link.health()).toMatchObject({ ok: false, lastError: { code: 'FLEET_AUTH_REJECTED' } });
  }, 30_000);
});

describe('wattshift check with upstream: fleet', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ws-fleet-check-'));
    writeFileSync(join(dir, 'fleet-password'), 'gw-pass\n', { mode: 0o600 });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function check(yaml: string[]): Promise<{ code: number; out: string }> {
    const file = join(dir, 'config.yaml');
    writeFileSync(
      file,
      [
        'version: 1',
        'site: {timezone: Europe/Oslo, priceArea: NO1, currency: NOK, locationLimitKw: 11}',
        `storage: {path: ${join(dir, 'wattshift.db')}}`,
        ...yaml,
      ].join('\n'),
    );
    const out: string[] = [];
    const code = await runCli(['check', '--config', file], {
      stdout: (l) => out.push(l),
      stderr: (l) => out.push(l),
      env: {},
      signals: new EventEmitter() as never,
    });
    return { code, out: out.join('\n') };
  }
  const fleet =
    'upstream: {mode: fleet, brokerUrl: "mqtts://broker.example:8883", gatewayId: gw-1, username: gw-1, password: {file: fleet-password}, locationId: home-1}';

  it('accepts a fleet gateway without any API credentials, and the shipped fleet example', async () => {
    const r = await check([fleet]);
    expect(r.out).toContain('ok');
    expect(r.code).toBe(0);
    const example = await runCli(['check', '--config', 'config.fleet.example.yaml'], {
      stdout: () => undefined,
      stderr: () => undefined,
      env: {},
      signals: new EventEmitter() as never,
    });
    expect(example).toBe(0);
  });

  it('refuses a partner API secret on a fleet gateway, naming the key and why', async () => {
    const r = await check([fleet, 'spark: {clientId: c, clientSecret: s3cret}']);
    expect(r.code).toBe(78);
    expect(r.out).toMatch(/spark\.clientSecret \(line \d+, column \d+\): upstream\.mode is fleet: the partner's API secret stays with the hub/);
    expect(r.out).not.toContain('s3cret');
  });

  it('still requires the API credentials in direct mode', async () => {
    const r = await check(['upstream: {mode: direct}']);
    expect(r.code).toBe(78);
    expect(r.out).toMatch(/spark\.clientId.*: the OAuth2 client id is required with upstream\.mode direct/);
    expect(r.out).toMatch(/spark\.clientSecret.*: the OAuth2 client secret is required with upstream\.mode direct/);
  });
});
