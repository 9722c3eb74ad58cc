/**
 * The broker away when wattshift starts: every subscription made meanwhile fails, and the log
 * says so once, not once a topic; when the broker comes, every subscription is made and works.
 */
import mqtt from 'mqtt';
import { describe, expect, it } from 'vitest';
import { startEmbeddedBroker } from '../src/demo/broker.js';
import { createMqttConnection } from '../src/devices/mqtt/connection.js';
import { memoryLogger } from './fixtures/modbus/servers.js';
import { eventually } from './helpers/aedes.js';
import { freePort } from './helpers/mosquitto.js';

describe('MQTT with the broker away at start', () => {
  it('warns once for the failed subscriptions and makes them all when the broker comes', async () => {
    const port = await freePort();
    const { logger, lines } = memoryLogger();
    const connection = createMqttConnection({ url: `mqtt://127.0.0.1:${port}`, reconnectPeriodMs: 100 }, { logger });
    const heard = new Set<string>();
    for (let i = 0; i < 11; i++) connection.subscribe(`dev/${i}`, (topic) => void heard.add(topic));
    await eventually(() => expect(lines.filter((l) => String(l.msg).startsWith('MQTT subscribe failed')).length).toBeGreaterThan(0), 10_000);
    await new Promise((r) => setTimeout(r, 500));
    const warned = lines.filter((l) => l.level === 40 && String(l.msg).startsWith('MQTT subscribe failed'));
    expect(warned).toHaveLength(1);

    const broker = await startEmbeddedBroker(port);
    try {
      await eventually(() => expect(connection.connected).toBe(true), 10_000);
      const device = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`);
      await eventually(
        async () => {
          for (let i = 0; i < 11; i++) await device.publishAsync(`dev/${i}`, 'x');
          expect(heard.size).toBe(11);
        },
        10_000,
        200,
      );
      await device.endAsync();
    } finally {
      await connection.close();
      await broker.close();
    }
  });
});
