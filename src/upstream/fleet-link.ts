/**
 * The gateway's own MQTT 5 client to the partner's fleet broker, apart from the home-automation
 * connection: a persistent session (clean start off, an expiry of days) under its broker user name
 * as client id (the fleet broker binds ids to users: docs/fleet.md), so QoS 1 events sent while the
 * home is offline wait in the broker. A connection that ended without our asking may have been a
 * login that took the session over (Mosquitto closes the old connection without saying why) and
 * took its queued events with it, or a broker restart that lost what it had not saved: after it the
 * fleet upstream asks the hub for the open events again, as after a new session. Its state is the
 * fleet upstream's health: down is FLEET_BROKER_DOWN (or FLEET_AUTH_REJECTED), logged once.
 */
import { readFileSync } from 'node:fs';
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { FleetUpstreamConfig } from '../config/schema-upstream.js';
import { WattshiftError } from '../errors.js';
import { classifyMqttError } from '../devices/mqtt/connection.js';
import { brokerUrlOptions } from '../devices/mqtt/transport.js';
import { fleetMaxPacketBytes } from '../fleet/wire.js';
import type { UpstreamHealth } from './port.js';
import { backoffCeilingMs } from '../timing/backoff.js';

/** Longest wait between logins the broker refused. */
export const defaultAuthRetryMaxMs = 5 * 60_000;

/**
 * The wait before the next login after `refusals` refused ones in a row: doubling from the
 * reconnect period up to `maxMs`. Every refused login costs the broker a password hash; a revoked
 * fleet retrying every few seconds would be a load on it, while restored credentials still take
 * effect within minutes.
 */
export function authRetryDelayMs(refusals: number, baseMs: number, maxMs: number): number {
  return backoffCeilingMs(refusals + 1, { baseMs, maxMs });
}

export interface FleetLink {
  readonly connected: boolean;
  /** Publishes at QoS 1 and resolves on the broker's PUBACK; fails at once with FLEET_BROKER_DOWN when down. */
  publish(topic: string, payload: unknown): Promise<void>;
  /** Resolves once connected (or rejects with the login's error code / on timeout). */
  waitConnected(signal: AbortSignal): Promise<void>;
  health(): UpstreamHealth;
  close(): Promise<void>;
}

/**
 * The client id is the broker user name: the fleet broker replaces any other id by it
 * (`use_username_as_clientid`), and a broker that does not can bind the two in its ACL.
 */
export function fleetClientId(username: string): string {
  return username;
}

export function openFleetLink(
  cfg: FleetUpstreamConfig,
  deps: {
    clock: Clock;
    logger: Logger;
    /** The filters subscribed at QoS 1 (again after every connect). */
    topics: string[];
    onMessage: (topic: string, payload: Buffer) => void;
    /**
     * Connected; `resync` when the broker had no session for us (start, or it expired) or the last
     * connection ended without our asking: events meant for us may be lost.
     */
    onConnect: (resync: boolean) => void;
    reconnectPeriodMs?: number;
    /** Longest wait after refused logins (default 5 minutes). */
    authRetryMaxMs?: number;
  },
): FleetLink {
  const log = deps.logger.child({ component: 'fleet-link' });
  const reconnectPeriodMs = deps.reconnectPeriodMs ?? 5_000;
  const options: IClientOptions = {
    protocolVersion: cfg.protocolVersion,
    clientId: fleetClientId(cfg.username),
    clean: false,
    ...(cfg.protocolVersion === 5
      ? { properties: { sessionExpiryInterval: cfg.sessionExpiryHours * 3600, maximumPacketSize: fleetMaxPacketBytes } }
      : {}),
    username: cfg.username,
    password: cfg.password,
    reconnectPeriod: reconnectPeriodMs,
    connectTimeout: 15_000,
    // A refused login is retried, backing off (authRetryDelayMs): the partner may restore revoked credentials.
    reconnectOnConnackError: true,
    // Subscriptions live in the broker session; they are made again only when it was lost.
    resubscribe: false,
    writeCache: false,
  };
  if (cfg.ca) {
    try {
      options.ca = readFileSync(cfg.ca);
    } catch (err) {
      throw new WattshiftError('CONFIG_INVALID', `cannot read upstream.ca ${cfg.ca}`, { cause: err });
    }
  }
  const client: MqttClient = connect({ ...brokerUrlOptions(cfg.brokerUrl), ...options });
  let lastError: UpstreamHealth['lastError'] = null;
  let up = false;
  let closed = false;
  let refusals = 0;
  let interrupted = false;
  // mqtt.js reads the period each time it schedules a reconnect: after a refused login (the
  // 'error' comes before the schedule) the next attempt waits the backed-off delay.
  const setRetryDelay = (ms: number): void => void (client.options.reconnectPeriod = ms);
  const waiters = new Set<() => void>();

  const down = (code: 'FLEET_BROKER_DOWN' | 'FLEET_AUTH_REJECTED', message: string): void => {
    if (closed) return;
    const repeated = lastError?.code === code;
    // A connection lost (not a login refused): events meant for us may have gone with it.
    if (up) interrupted = true;
    up = false;
    lastError = { code, message, atMs: deps.clock.nowMs() };
    if (!repeated)
      log.warn({ code, url: cfg.brokerUrl, reason: message }, 'fleet broker connection down; events wait in the broker, reports in the outbox');
  };

  client.on('connect', (connack) => {
    const newSession = !connack.sessionPresent;
    const resync = newSession || interrupted;
    interrupted = false;
    if (lastError) log.info({ url: cfg.brokerUrl, newSession }, 'fleet broker connected again');
    else log.info({ url: cfg.brokerUrl, newSession }, 'fleet broker connected');
    up = true;
    lastError = null;
    refusals = 0;
    setRetryDelay(reconnectPeriodMs);
    for (const w of waiters) w();
    // Made on every connect, not only for a new session: a config change of location or area
    // takes effect, and the retained advice comes again (a refresh that finds it unchanged).
    client.subscribeAsync(deps.topics, { qos: 1 }).then(
      (granted) => {
        const refused = granted.filter((g) => g.qos > 2).map((g) => g.topic);
        if (refused.length > 0)
          log.warn(
            { code: 'FLEET_AUTH_REJECTED', topics: refused },
            "the fleet broker refused subscriptions (ACL): ask the partner to check this gateway's topics",
          );
        deps.onConnect(resync);
      },
      (err: Error) => log.warn({ code: 'FLEET_BROKER_DOWN', err: err.message }, 'fleet subscriptions not made; made again at the next connect'),
    );
  });
  client.on('message', (topic, payload) => deps.onMessage(topic, payload));
  client.on('error', (err) => {
    const code = classifyMqttError(err) === 'MQTT_UNAVAILABLE' ? 'FLEET_BROKER_DOWN' : 'FLEET_AUTH_REJECTED';
    down(code, err.message);
    if (code === 'FLEET_AUTH_REJECTED') {
      const delayMs = authRetryDelayMs(refusals++, reconnectPeriodMs, deps.authRetryMaxMs ?? defaultAuthRetryMaxMs);
      setRetryDelay(delayMs);
      log.debug({ code, refusals, retryInMs: delayMs }, 'fleet broker refused the login; next try backed off');
    }
  });
  client.on('close', () => {
    if (up) down('FLEET_BROKER_DOWN', 'connection closed');
  });
  client.on('offline', () => {
    if (!lastError) down('FLEET_BROKER_DOWN', 'broker not reachable');
  });

  return {
    get connected() {
      return up;
    },
    async publish(topic, payload) {
      if (!up) throw new WattshiftError('FLEET_BROKER_DOWN', `fleet broker ${cfg.brokerUrl} not connected`);
      await client.publishAsync(topic, JSON.stringify(payload), { qos: 1 });
    },
    waitConnected(signal) {
      if (up) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const done = (): void => {
          waiters.delete(done);
          signal.removeEventListener('abort', abort);
          resolve();
        };
        const abort = (): void => {
          waiters.delete(done);
          reject(
            new WattshiftError(
              lastError?.code === 'FLEET_AUTH_REJECTED' ? 'FLEET_AUTH_REJECTED' : 'FLEET_BROKER_DOWN',
              lastError?.message ?? 'fleet broker not reached in time',
            ),
          );
        };
        waiters.add(done);
        signal.addEventListener('abort', abort, { once: true });
      });
    },
    health: () => ({
      ok: up,
      lastError: up ? null : (lastError ?? { code: 'FLEET_BROKER_DOWN', message: 'not connected yet', atMs: deps.clock.nowMs() }),
    }),
    async close() {
      closed = true;
      // Not a clean-start disconnect: the session (and what arrives meanwhile) stays on the broker.
      await client.endAsync();
    },
  };
}
