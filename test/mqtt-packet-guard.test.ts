/**
 * The MQTT packet size guard with a real mqtt.js client, on aedes (in-process) and on a real
 * Mosquitto (TLS, password): an oversized message is skipped unread while the connection stays up,
 * a retained one does not bring a reconnect loop, QoS 1 keeps flowing (the skipped message is
 * acknowledged), a device's retained topic is left alone, and the warning is rate-limited.
 */
import { readFileSync } from 'node:fs';
import mqtt, { type IClientOptions } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.js';
import { createMqttConnection, type MqttConnection, type MqttConnectionOptions } from '../src/devices/mqtt/index.js';
import { eventually, startAedes } from './helpers/aedes.js';
import { mosquittoAvailable, startMosquitto } from './helpers/mosquitto.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Broker {
  /** Options for the daemon-side connection (url, TLS, credentials). */
  connection: Pick<MqttConnectionOptions, 'url' | 'caFile' | 'username' | 'password'>;
  /** Options for a plain mqtt.js client (the devices, the attacker). */
  client: IClientOptions & { url: string };
}

async function aedesBroker(): Promise<Broker> {
  const broker = await startAedes();
  cleanups.push(() => broker.close());
  return { connection: { url: broker.url }, client: { url: broker.url } };
}

async function mosquittoBroker(): Promise<Broker> {
  const broker = await startMosquitto();
  cleanups.push(() => broker.stop());
  const auth = { username: broker.username, password: broker.password };
  return {
    connection: { url: broker.url, caFile: broker.caFile, ...auth },
    client: { url: broker.url, ca: [broker.caFile].map((f) => readFileSync(f)), ...auth },
  };
}

interface Setup {
  conn: MqttConnection;
  lines: Record<string, unknown>[];
  ups: number;
  oversized: { bytes: number; topic?: string; retained?: boolean }[];
  publisher: mqtt.MqttClient;
}

async function setup(broker: Broker, maxPacketBytes: number): Promise<Setup> {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });
  const out: Setup = { lines, ups: 0, oversized: [] } as unknown as Setup;
  const conn = createMqttConnection(
    { ...broker.connection, reconnectPeriodMs: 50, maxPacketBytes, onOversized: (p) => out.oversized.push(p) },
    { logger },
  );
  cleanups.push(() => conn.close());
  conn.onState((s) => {
    if (s === 'up') out.ups++;
  });
  await conn.waitConnected(AbortSignal.timeout(10_000));
  out.conn = conn;
  const { url, ...rest } = broker.client;
  out.publisher = await mqtt.connectAsync(url, rest);
  cleanups.push(() => out.publisher.endAsync());
  return out;
}

const tooLarge = (lines: Record<string, unknown>[]): number => lines.filter((l) => l.code === 'MQTT_MESSAGE_TOO_LARGE').length;

/** Publishes on `topic` until `got` holds that payload: proves the connection delivers after what came before. */
async function roundTrip(s: Setup, got: string[], topic: string, payload: string): Promise<void> {
  await eventually(
    async () => {
      await s.publisher.publishAsync(topic, payload, { qos: 1 });
      expect(got).toContain(payload);
    },
    5000,
    100,
  );
}

const brokers: [string, () => Promise<Broker>, boolean][] = [
  ['aedes', aedesBroker, true],
  ['mosquitto', mosquittoBroker, mosquittoAvailable()],
];

describe.each(brokers)('MQTT packet size guard on %s', (_name, makeBroker, available) => {
  it.runIf(available)(
    'skips a retained 300 KiB device message without a reconnect; other devices keep working; the topic is left alone',
    async () => {
      const broker = await makeBroker();
      const big = Buffer.alloc(300 * 1024, 0x41);
      // The hostile message waits on the broker before wattshift subscribes.
      const seeder = await mqtt.connectAsync(broker.client.url, broker.client);
      await seeder.publishAsync('home/heater/status', big, { qos: 1, retain: true });
      await seeder.endAsync();

      const s = await setup(broker, 256 * 1024);
      const heater: string[] = [];
      const meter: string[] = [];
      s.conn.subscribe('home/heater/#', (_t, payload) => heater.push(payload.toString()));
      s.conn.subscribe('home/meter/power', (_t, payload) => meter.push(payload.toString()));
      await eventually(
        () => expect(s.oversized).toEqual([{ bytes: expect.any(Number) as number, topic: 'home/heater/status', retained: true }]),
        10_000,
      );
      // The other device on the broker keeps delivering, on the same connection.
      for (let i = 0; i < 5; i++) await roundTrip(s, meter, 'home/meter/power', `{"w":${i}}`);
      // The heater's next ordinary status arrives too; the oversized one never reached a handler.
      await roundTrip(s, heater, 'home/heater/status', 'x'.repeat(10));
      expect(heater.every((p) => p === 'x'.repeat(10))).toBe(true);
      expect(s.ups).toBe(1);
      expect(s.conn.connected).toBe(true);
      expect(tooLarge(s.lines)).toBe(1);
    },
    30_000,
  );

  it.runIf(available)(
    "leaves a device's retained oversized message on the broker (wattshift does not own it)",
    async () => {
      const broker = await makeBroker();
      const s = await setup(broker, 64 * 1024);
      s.conn.subscribe('dev/+/state', () => undefined);
      await s.publisher.publishAsync('dev/a/state', Buffer.alloc(100 * 1024, 0x42), { qos: 1, retain: true });
      await eventually(() => expect(s.oversized.map((o) => o.topic)).toEqual(['dev/a/state']));
      const { url, ...rest } = broker.client;
      const reader = await mqtt.connectAsync(url, rest);
      cleanups.push(() => reader.endAsync());
      const retained: number[] = [];
      reader.on('message', (_t, payload, packet) => {
        if (packet.retain) retained.push(payload.length);
      });
      await reader.subscribeAsync('dev/a/state');
      await eventually(() => expect(retained).toEqual([100 * 1024]));
    },
    30_000,
  );

  it.runIf(available)(
    'acknowledges skipped QoS 1 messages (the in-flight window never fills) and rate-limits the warning',
    async () => {
      const broker = await makeBroker();
      const s = await setup(broker, 8 * 1024);
      const got: string[] = [];
      s.conn.subscribe('t/#', (_t, payload) => got.push(payload.toString()), { qos: 1 });
      await roundTrip(s, got, 't/ok', 'first');
      // More oversized QoS 1 messages than any broker's default in-flight window (Mosquitto: 20).
      for (let i = 0; i < 30; i++) await s.publisher.publishAsync('t/big', Buffer.alloc(20 * 1024, i), { qos: 1 });
      await eventually(() => expect(s.oversized).toHaveLength(30), 10_000);
      await roundTrip(s, got, 't/ok', 'after');
      expect([...new Set(got)]).toEqual(['first', 'after']);
      expect(s.ups).toBe(1);
      expect(tooLarge(s.lines)).toBeLessThanOrEqual(5);
    },
    30_000,
  );
});

describe('MQTT packet size guard, live messages', () => {
  it('skips a live oversized message and delivers one just under the limit on the same connection', async () => {
    const broker = await aedesBroker();
    const s = await setup(broker, 8 * 1024);
    const got: string[] = [];
    s.conn.subscribe('t/#', (_t, payload) => got.push(payload.toString()));
    await roundTrip(s, got, 't/a', 'before');
    // A live oversized message is skipped; the connection stays.
    await s.publisher.publishAsync('t/big', Buffer.alloc(100 * 1024, 1), { qos: 0 });
    await eventually(() => expect(s.oversized).toEqual([{ bytes: 1 + 3 + 2 + 5 + 100 * 1024, topic: 't/big', retained: false }]));
    await roundTrip(s, got, 't/c', 'x'.repeat(8 * 1024 - 20));
    expect(s.ups).toBe(1);
  }, 30_000);
});
