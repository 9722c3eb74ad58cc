/**
 * Interoperability with a real Mosquitto over TLS with a password: the shared connection verifies
 * the broker certificate against a throwaway CA; a wrong password and an untrusted certificate
 * are refused with clear codes. Skipped (with a message) only when mosquitto is not installed
 * and this is not CI; in CI (`CI` set) a missing binary fails the test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { createMqttConnection, createMqttDevice, type MqttConnection } from '../src/devices/mqtt/index.js';
import { createShellySim } from '../src/sandbox/devices/shelly-sim.js';
import { eventually } from './helpers/aedes.js';
import { mosquittoAvailable, startMosquitto, type MosquittoBroker } from './helpers/mosquitto.js';
import { readFileSync } from 'node:fs';

const available = mosquittoAvailable();
const mustRun = Boolean(process.env.CI);
if (!available && !mustRun) {
  // eslint-disable-next-line no-console -- the skip reason must be visible in the test output
  console.warn('mosquitto-interop: /usr/sbin/mosquitto not found; skipping (install with `apt-get install -y mosquitto`)');
}

describe.skipIf(!available && !mustRun)('Mosquitto interoperability (TLS + password)', () => {
  let broker: MosquittoBroker;
  const open: MqttConnection[] = [];

  beforeAll(async () => {
    if (!available) throw new Error('CI is set but /usr/sbin/mosquitto is missing: install the Debian package `mosquitto`');
    broker = await startMosquitto();
  });
  afterAll(async () => {
    for (const c of open) await c.close();
    await broker?.stop();
  });

  const connect = (overrides: Partial<Parameters<typeof createMqttConnection>[0]>) => {
    const c = createMqttConnection(
      { url: broker.url, username: broker.username, password: broker.password, caFile: broker.caFile, reconnectPeriodMs: 200, ...overrides },
      { logger: silentLogger() },
    );
    open.push(c);
    return c;
  };

  it('connects with a verified certificate and drives a Shelly through it', async () => {
    const connection = connect({});
    await connection.waitConnected(AbortSignal.timeout(10_000));
    const t0 = Date.UTC(2025, 0, 6);
    const sim = createShellySim({
      url: broker.url,
      topicPrefix: 'shelly-interop',
      startMs: t0,
      clientOptions: { username: broker.username, password: broker.password, ca: readFileSync(broker.caFile) },
    });
    await sim.start();
    try {
      const clock = new ManualClock(t0);
      const dev = createMqttDevice({ type: 'shelly', topicPrefix: 'shelly-interop' }, { connection, clock, logger: silentLogger() });
      await sim.advance(3_600_000);
      await eventually(async () => expect(await dev.energyMeter!.readEnergyKwh(AbortSignal.timeout(5000))).toBeCloseTo(2, 6));
      await dev.heaterSwitch!.block(600_000, AbortSignal.timeout(5000));
      expect(sim.output).toBe(false);
      expect(sim.toggleAtMs).toBe(t0 + 3_600_000 + 600_000);
      dev.close();
    } finally {
      await sim.close();
    }
  });

  it('refuses a wrong password with MQTT_AUTH_REJECTED', async () => {
    const connection = connect({ password: 'wrong' });
    await expect(connection.waitConnected(AbortSignal.timeout(10_000))).rejects.toMatchObject({ code: 'MQTT_AUTH_REJECTED' });
    expect(connection.connected).toBe(false);
    await expect(connection.publish('x', 'y')).rejects.toMatchObject({ code: 'MQTT_UNAVAILABLE' });
  });

  it('refuses a broker certificate from an untrusted CA with MQTT_TLS_FAILED', async () => {
    const connection = connect({ caFile: broker.otherCaFile });
    const err = await connection.waitConnected(AbortSignal.timeout(10_000)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'MQTT_TLS_FAILED' });
    expect(String((err as Error).message)).toMatch(/certificate|verify/i);
  });

  it('reports an unreadable CA file as a config error', () => {
    expect(() => connect({ caFile: '/nonexistent/ca.crt' })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });
});
