/** The MQTT packet size guard on a real broker (aedes) and a real mqtt.js client. */
import mqtt from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.js';
import { createMqttConnection, type MqttConnection } from '../src/devices/mqtt/index.js';
import { eventually, startAedes, type TestBroker } from './helpers/aedes.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(maxPacketBytes: number): Promise<{ broker: TestBroker; conn: MqttConnection; lines: Record<string, unknown>[]; oversized: { bytes: number; topic?: string }[] }> {
  const broker = await startAedes();
  cleanups.push(() => broker.close());
  const lines: Record<string, unknown>[] = [];
  const oversized: { bytes: number; topic?: string }[] = [];
  const logger = createLogger({ destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });
  const conn = createMqttConnection({ url: broker.url, reconnectPeriodMs: 50, maxPacketBytes, onOversized: (p) => oversized.push(p) }, { logger });
  cleanups.push(() => conn.close());
  await conn.waitConnected(AbortSignal.timeout(5000));
  return { broker, conn, lines, oversized };
}

describe('MQTT packet size guard', () => {
  it('delivers packets up to the limit, refuses a larger one unread, reconnects and delivers again', async () => {
    const { broker, conn, lines, oversized } = await setup(8 * 1024);
    const got: number[] = [];
    conn.subscribe('t/#', (_topic, payload) => got.push(payload.length));
    const pub = await mqtt.connectAsync(broker.url);
    cleanups.push(() => pub.endAsync());
    await eventually(async () => {
      await pub.publishAsync('t/a', Buffer.alloc(100), { qos: 1 });
      expect(got).toContain(100);
    });
    await pub.publishAsync('t/big', Buffer.alloc(100 * 1024, 1), { qos: 0 });
    // Type byte, three length bytes, the topic with its length, the payload.
    await eventually(() => expect(oversized).toEqual([{ bytes: 1 + 3 + 2 + 5 + 100 * 1024, topic: 't/big' }]));
    expect(lines.some((l) => l.code === 'MQTT_MESSAGE_TOO_LARGE' && l.topic === 't/big')).toBe(true);
    expect(got).not.toContain(100 * 1024);
    // Back on its feet: the subscription was renewed and a message just under the limit arrives.
    await eventually(async () => {
      expect(conn.connected).toBe(true);
      await pub.publishAsync('t/c', Buffer.alloc(8 * 1024 - 20), { qos: 1 });
      expect(got).toContain(8 * 1024 - 20);
    }, 5000, 100);
  });
});
