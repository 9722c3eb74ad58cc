/**
 * The device MQTT connection over WebSocket (`ws://`): an aedes broker behind a real WebSocket
 * server on 127.0.0.1. The connection delivers, the packet size guard skips an oversized message
 * on this transport too, and a broker that goes away and comes back is reconnected to.
 */
import { createServer, type Server } from 'node:http';
import { Aedes } from 'aedes';
import mqtt from 'mqtt';
import { WebSocketServer, createWebSocketStream } from 'ws';
import { afterEach, expect, it } from 'vitest';
import { silentLogger } from '../src/log.js';
import { createMqttConnection, type MqttConnection } from '../src/devices/mqtt/index.js';
import { transportFor } from '../src/devices/mqtt/transport.js';
import { eventually } from './helpers/aedes.js';

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** aedes over WebSocket (subprotocol `mqtt`) on `port` (0: any free one). */
async function startWsBroker(port = 0): Promise<{ url: string; port: number; close: () => Promise<void> }> {
  const broker = await Aedes.createBroker();
  const http: Server = createServer();
  const wss = new WebSocketServer({ server: http, handleProtocols: (protocols) => (protocols.has('mqtt') ? 'mqtt' : false) });
  wss.on('connection', (socket) => broker.handle(createWebSocketStream(socket)));
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', () => resolve()));
  const bound = (http.address() as { port: number }).port;
  return {
    url: `ws://127.0.0.1:${bound}/mqtt`,
    port: bound,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await new Promise<void>((resolve) => broker.close(() => resolve()));
    },
  };
}

function connect(url: string, extra: { maxPacketBytes?: number; onOversized?: (p: { topic?: string }) => void } = {}): MqttConnection {
  const conn = createMqttConnection({ url, reconnectPeriodMs: 50, ...extra }, { logger: silentLogger() });
  cleanups.push(() => conn.close());
  return conn;
}

it('delivers over ws:// and skips an oversized message without dropping the connection', async () => {
  const broker = await startWsBroker();
  cleanups.push(() => broker.close());
  const oversized: (string | undefined)[] = [];
  const conn = connect(broker.url, { maxPacketBytes: 16 * 1024, onOversized: (p) => oversized.push(p.topic) });
  await conn.waitConnected(AbortSignal.timeout(5000));
  const got: string[] = [];
  conn.subscribe('dev/#', (topic, payload) => got.push(`${topic}=${payload.length}`));

  const publisher = await mqtt.connectAsync(broker.url);
  cleanups.push(() => publisher.endAsync());
  await eventually(
    async () => {
      await publisher.publishAsync('dev/a', 'x', { qos: 1 });
      expect(got).toContain('dev/a=1');
    },
    5000,
    100,
  );
  await publisher.publishAsync('dev/big', Buffer.alloc(64 * 1024, 0x41), { qos: 1 });
  await publisher.publishAsync('dev/b', 'yy', { qos: 1 });
  await eventually(() => expect(got).toContain('dev/b=2'));
  expect(oversized).toEqual(['dev/big']);
  expect(got.some((g) => g.startsWith('dev/big'))).toBe(false);
  expect(conn.connected).toBe(true);
});

it('reconnects over ws:// when the broker comes back', async () => {
  let broker = await startWsBroker();
  const port = broker.port;
  const conn = connect(broker.url);
  cleanups.push(() => broker.close());
  await conn.waitConnected(AbortSignal.timeout(5000));
  const states: string[] = [];
  conn.onState((s) => states.push(s));
  await broker.close();
  await eventually(() => expect(states).toEqual(['down']));
  broker = await startWsBroker(port);
  await eventually(() => expect(states).toEqual(['down', 'up']), 5000);
  expect(conn.connected).toBe(true);
});

it('refuses a URL scheme it has no transport for', () => {
  expect(() => transportFor({ url: 'http://127.0.0.1:1883' })).toThrow(/unsupported MQTT URL scheme: http:/);
});
