/**
 * One mqtt.js client shared by every MQTT user of the daemon (devices, home automation, health).
 * Handlers are registered per topic filter; the broker subscription is made once per filter and
 * mqtt.js re-subscribes after a reconnect. Publishing while disconnected fails at once with
 * MQTT_UNAVAILABLE instead of queueing: a command delivered minutes late is worse than none.
 */
import { readFileSync } from 'node:fs';
import { EventEmitter } from 'node:events';
import { MqttClient, type IClientOptions } from 'mqtt';
import { WattshiftError, type ErrorCode } from '../../errors.js';
import type { Logger } from '../../log.js';
import { rateLimitedWarn } from '../../log-limit.js';
import { guardPacketSize, type OversizedPacket } from './packet-guard.js';
import { transportFor } from './transport.js';

export interface MqttWill {
  topic: string;
  payload: string;
  qos?: 0 | 1 | 2;
  retain?: boolean;
}

export interface MqttConnectionOptions {
  /** `mqtt://host:1883` or `mqtts://host:8883`. */
  url: string;
  username?: string;
  password?: string;
  /** PEM file of the CA that signed the broker's certificate. */
  caFile?: string;
  /** Client certificate and key (PEM) for brokers that require mutual TLS. */
  certFile?: string;
  keyFile?: string;
  /** Verify the broker's certificate (default true). */
  rejectUnauthorized?: boolean;
  clientId?: string;
  will?: MqttWill;
  /** Delay between reconnect attempts (default 2000 ms). */
  reconnectPeriodMs?: number;
  /** Time allowed for the TCP/TLS connect and CONNACK (default 10 000 ms). */
  connectTimeoutMs?: number;
  /**
   * Largest packet accepted from the broker, bytes (default 256 KiB). A larger PUBLISH is skipped
   * unread and the connection stays up; any other larger packet ends the connection (see
   * packet-guard.ts).
   */
  maxPacketBytes?: number;
  /** Told about every packet refused for its size (the MQTT_MESSAGE_TOO_LARGE log line is rate-limited). */
  onOversized?: (packet: OversizedPacket) => void;
}

export const defaultMaxPacketBytes = 256 * 1024;

/** `retained`: the broker sent a stored retained message (at subscribe), not a live publish. */
export type MqttHandler = (topic: string, payload: Buffer, meta: { retained: boolean }) => void;

export type MqttConnectionState = 'up' | 'down';

export interface MqttPublishOptions {
  qos?: 0 | 1 | 2;
  retain?: boolean;
}

export interface MqttConnection {
  /** True while the client holds an accepted session with the broker. */
  readonly connected: boolean;
  /** The error that ended the last connection or attempt, if any. */
  readonly lastError: WattshiftError | undefined;
  /** Adds a handler for a topic filter (wildcards allowed); returns a function that removes it. */
  subscribe(filter: string, handler: MqttHandler, options?: { qos?: 0 | 1 | 2 }): () => void;
  /** Publishes; rejects with MQTT_UNAVAILABLE while disconnected. */
  publish(topic: string, payload: string | Buffer, options?: MqttPublishOptions): Promise<void>;
  /**
   * Resolves once connected. Rejects at once with MQTT_AUTH_REJECTED or MQTT_TLS_FAILED when the
   * broker refused us, otherwise waits (use the signal for a deadline).
   */
  waitConnected(signal?: AbortSignal): Promise<void>;
  /** Called with 'up' on every (re)connect and 'down' on every loss; returns an unsubscribe. */
  onState(listener: (state: MqttConnectionState, error?: WattshiftError) => void): () => void;
  /** Disconnects (publishing the will is skipped: a clean close is not a failure). */
  close(): Promise<void>;
}

const tlsErrorCodes = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'EPROTO',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

/** MQTT 3.1.1 CONNACK 4/5 and MQTT 5 reason codes 134/135/140 mean "who you are is not accepted". */
const authReasonCodes = new Set([4, 5, 134, 135, 140]);

/** Maps an mqtt.js / socket error to one of our codes. */
export function classifyMqttError(err: unknown): ErrorCode {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'number' && authReasonCodes.has(code)) return 'MQTT_AUTH_REJECTED';
  if (typeof code === 'string' && (tlsErrorCodes.has(code) || code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS'))) {
    return 'MQTT_TLS_FAILED';
  }
  return 'MQTT_UNAVAILABLE';
}

function readPem(path: string, what: string, code: ErrorCode): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new WattshiftError(code, `cannot read MQTT ${what} file ${path}`, { cause: err, details: { path } });
  }
}

/** Whether an MQTT topic matches a subscription filter with `+` and `#` wildcards. */
export function topicMatches(filter: string, topic: string): boolean {
  if (filter === topic) return true;
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    const part = f[i];
    if (part === '#') return true;
    if (i >= t.length) return false;
    if (part !== '+' && part !== t[i]) return false;
  }
  return f.length === t.length;
}

export function createMqttConnection(options: MqttConnectionOptions, deps: { logger: Logger }): MqttConnection {
  const log = deps.logger.child({ component: 'mqtt' });
  const clientOptions: IClientOptions = {
    clientId: options.clientId ?? `wattshift-${Math.random().toString(16).slice(2, 10)}`,
    reconnectPeriod: options.reconnectPeriodMs ?? 2000,
    connectTimeout: options.connectTimeoutMs ?? 10_000,
    // A refused CONNACK (bad password) is retried slowly too: the broker may be restarting with
    // a fresh password file. The error is still reported at once through waitConnected/onState.
    reconnectOnConnackError: true,
    queueQoSZero: false,
    resubscribe: true,
    // mqtt-packet otherwise pre-builds a Buffer for every 16-bit number (65 536 objects, ~7 MB of
    // heap) on the first packet; a gateway sends a few packets a minute.
    writeCache: false,
  };
  if (options.username !== undefined) clientOptions.username = options.username;
  if (options.password !== undefined) clientOptions.password = options.password;
  const openStream = transportFor({
    url: options.url,
    ...(options.caFile ? { ca: readPem(options.caFile, 'CA', 'CONFIG_INVALID') } : {}),
    ...(options.certFile ? { cert: readPem(options.certFile, 'certificate', 'CONFIG_INVALID') } : {}),
    ...(options.keyFile ? { key: readPem(options.keyFile, 'key', 'CONFIG_SECRET_UNREADABLE') } : {}),
    rejectUnauthorized: options.rejectUnauthorized ?? true,
  });
  if (options.will) {
    clientOptions.will = {
      topic: options.will.topic,
      payload: Buffer.from(options.will.payload),
      qos: options.will.qos ?? 1,
      retain: options.will.retain ?? true,
    };
  }

  const maxPacketBytes = options.maxPacketBytes ?? defaultMaxPacketBytes;
  const warnHostile = rateLimitedWarn(log);
  /** Oversized publishes handed to mqtt.js with an empty payload, by topic, not yet delivered. */
  let skipped = new Map<string, number>();
  // Every (re)connect's socket is guarded before its first byte arrives.
  const client = new MqttClient(() => {
    const pending = new Map<string, number>();
    skipped = pending;
    return guardPacketSize(openStream(), maxPacketBytes, {
      onSkipped: (p) => {
        pending.set(p.topic, (pending.get(p.topic) ?? 0) + 1);
        // Device topics are never cleared: the device owns its retained state, and its next
        // publish replaces it. The value is simply missing until then (stale, the device's safe
        // behaviour). Command topics are wattshift's own: the HA bridge clears them (onOversized).
        warnHostile(
          'MQTT_MESSAGE_TOO_LARGE',
          { bytes: p.bytes, limit: maxPacketBytes, topic: p.topic, retained: p.retained },
          'MQTT message over the size limit skipped unread',
        );
        options.onOversized?.(p);
      },
      onFatal: (p) => {
        log.warn(
          { code: 'MQTT_MESSAGE_TOO_LARGE', bytes: p.bytes, limit: maxPacketBytes, topic: p.topic },
          'MQTT packet over the size limit refused; reconnecting',
        );
        options.onOversized?.(p);
      },
    });
  }, clientOptions);
  const handlers = new Map<string, Set<MqttHandler>>();
  const events = new EventEmitter();
  let lastError: WattshiftError | undefined;
  let wasUp = false;
  let closed = false;

  const goDown = (error?: WattshiftError): void => {
    if (!wasUp) return;
    wasUp = false;
    log.warn({ code: error?.code ?? 'MQTT_UNAVAILABLE', url: options.url }, 'MQTT broker connection lost');
    events.emit('state', 'down', error);
  };

  // A broker away at start fails every subscription made meanwhile: one warning says so, not one a topic.
  let subscribeFailureWarned = false;
  client.on('connect', () => {
    subscribeFailureWarned = false;
    lastError = undefined;
    if (!wasUp) {
      wasUp = true;
      log.info({ url: options.url }, 'MQTT broker connected');
      events.emit('state', 'up');
    }
  });
  client.on('error', (err) => {
    const code = classifyMqttError(err);
    const previous = lastError?.code;
    lastError = new WattshiftError(code, `MQTT ${options.url}: ${err.message}`, { cause: err, details: { url: options.url } });
    if (previous !== code) log.warn({ code, url: options.url, err: err.message }, 'MQTT connection error');
    events.emit('failure', lastError);
    goDown(lastError);
  });
  client.on('close', () => {
    if (!closed) goDown(lastError);
  });
  client.on('message', (topic, payload, packet) => {
    const standIns = payload.length === 0 ? skipped.get(topic) : undefined;
    if (standIns !== undefined) {
      // The empty stand-in of a skipped oversized message: no handler sees it (it is not a clear).
      if (standIns > 1) skipped.set(topic, standIns - 1);
      else skipped.delete(topic);
      return;
    }
    const meta = { retained: packet.retain };
    for (const [filter, set] of handlers) {
      if (!topicMatches(filter, topic)) continue;
      for (const handler of set) {
        try {
          handler(topic, payload, meta);
        } catch (err) {
          log.error({ code: 'INTERNAL', topic, err }, 'MQTT handler threw');
        }
      }
    }
  });

  return {
    get connected() {
      return client.connected;
    },
    get lastError() {
      return lastError;
    },
    subscribe(filter, handler, subOptions) {
      let set = handlers.get(filter);
      if (!set) {
        set = new Set();
        handlers.set(filter, set);
        client.subscribe(filter, { qos: subOptions?.qos ?? 0 }, (err) => {
          if (!err || closed) return;
          log[subscribeFailureWarned ? 'debug' : 'warn'](
            { code: 'MQTT_UNAVAILABLE', filter, err: err.message },
            'MQTT subscribe failed; the subscriptions are made again on reconnect',
          );
          subscribeFailureWarned = true;
        });
      }
      set.add(handler);
      return () => {
        const current = handlers.get(filter);
        if (!current) return;
        current.delete(handler);
        if (current.size === 0) {
          handlers.delete(filter);
          if (client.connected) client.unsubscribe(filter);
        }
      };
    },
    publish(topic, payload, pubOptions) {
      if (!client.connected) {
        return Promise.reject(
          new WattshiftError('MQTT_UNAVAILABLE', `MQTT broker ${options.url} is not connected`, { cause: lastError, details: { topic } }),
        );
      }
      return new Promise<void>((resolve, reject) => {
        client.publish(topic, payload, { qos: pubOptions?.qos ?? 0, retain: pubOptions?.retain ?? false }, (err) => {
          if (err) reject(new WattshiftError('MQTT_UNAVAILABLE', `MQTT publish to ${topic} failed: ${err.message}`, { cause: err }));
          else resolve();
        });
      });
    },
    waitConnected(signal) {
      if (client.connected) return Promise.resolve();
      const fatal = (e: WattshiftError | undefined): boolean => e?.code === 'MQTT_AUTH_REJECTED' || e?.code === 'MQTT_TLS_FAILED';
      if (fatal(lastError)) return Promise.reject(lastError);
      return new Promise<void>((resolve, reject) => {
        const cleanup = (): void => {
          events.off('state', onState);
          events.off('failure', onError);
          signal?.removeEventListener('abort', onAbort);
        };
        const onState = (state: MqttConnectionState): void => {
          if (state === 'up') {
            cleanup();
            resolve();
          }
        };
        const onError = (err: WattshiftError): void => {
          if (fatal(err)) {
            cleanup();
            reject(err);
          }
        };
        const onAbort = (): void => {
          cleanup();
          reject(lastError ?? new WattshiftError('MQTT_UNAVAILABLE', `MQTT broker ${options.url} not reachable in time`, { cause: signal?.reason }));
        };
        if (signal?.aborted) return onAbort();
        events.on('state', onState);
        events.on('failure', onError);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    onState(listener) {
      events.on('state', listener);
      return () => events.off('state', listener);
    },
    close() {
      closed = true;
      return new Promise<void>((resolve) => {
        client.end(false, {}, () => resolve());
      });
    },
  };
}
