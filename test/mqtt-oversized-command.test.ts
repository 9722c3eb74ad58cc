/**
 * An oversized retained command on wattshift's own command topic, on aedes and on Mosquitto: the
 * shared connection skips it without a reconnect, the HA bridge clears the topic (wattshift owns
 * it), and a normal command on the same connection is applied afterwards.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHaBridge } from '../src/ha/bridge.js';
import type { DeviceCommand } from '../src/ha/commands.js';
import { sharedConnectionPort } from '../src/ha/port.js';
import { createMqttConnection } from '../src/devices/mqtt/connection.js';
import { silentLogger } from '../src/log.js';
import { sampleView } from './fixtures/ha/sample-view.js';
import { eventually } from './helpers/aedes.js';
import { client, retained, startBroker } from './helpers/ha-broker.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe.each(['aedes', 'mosquitto'] as const)('oversized retained command on %s', (brokerName) => {
  it('is skipped without a reconnect and cleared; the next command applies', async () => {
    const broker = await startBroker(brokerName);
    cleanups.push(() => broker.close());
    const attacker = await client(broker.url);
    cleanups.push(() => attacker.endAsync(true));
    await attacker.publishAsync('wattshift/tank/set', Buffer.alloc(300 * 1024, 0x7b), { qos: 1, retain: true });

    let ups = 0;
    const commands: DeviceCommand[] = [];
    // The bridge exists before the connection reports anything (as in the daemon's wiring).
    let clear: (topic: string) => void = () => undefined;
    const conn = createMqttConnection(
      { url: broker.url, reconnectPeriodMs: 50, maxPacketBytes: 64 * 1024, onOversized: (p) => p.topic !== undefined && clear(p.topic) },
      { logger: silentLogger() },
    );
    cleanups.push(() => conn.close());
    conn.onState((s) => void (s === 'up' && ups++));
    await conn.waitConnected(AbortSignal.timeout(10_000));
    const bridge = createHaBridge({
      port: sharedConnectionPort(conn),
      baseTopic: 'wattshift',
      discovery: { enabled: false, prefix: 'homeassistant' },
      currency: 'EUR',
      swVersion: '0.1.0-test',
      logger: silentLogger(),
      getView: () => sampleView(),
      onCommand: async (cmd) => void commands.push(cmd),
      previousDeviceIds: [],
    });
    clear = (topic) => bridge.clearOversizedCommand(topic);
    await bridge.start();

    await eventually(async () => expect((await retained(broker.url, 'wattshift/tank/set', 200)).has('wattshift/tank/set')).toBe(false), 10_000, 100);
    await attacker.publishAsync('wattshift/tank/set', 'boost', { qos: 1 });
    await eventually(() => expect(commands.map((c) => c.deviceId)).toEqual(['tank']), 10_000);
    expect(ups).toBe(1);
    await bridge.stop();
  }, 30_000);
});
