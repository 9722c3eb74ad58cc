/**
 * Acknowledge only what is durable, against the real daemon process: with the database's file
 * system full, a signed 0 kW LPC on the tank is answered 500 (so the API delivers it again),
 * `/healthz` says the store failed, and the cap still holds from memory while the tank is boosted.
 * Once there is room again, the redelivery is stored and answered 200. Needs a small tmpfs
 * (root with mount rights); skipped otherwise.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it, onTestFailed } from 'vitest';
import { findFreePort } from '../../src/sandbox/devices/modbus-tank.js';
import { signPayload } from '../../src/spark/webhook-signature.js';
import { registerHome, spawnDaemon, writeConfig } from '../helpers/daemon-harness.js';
import { fillUp, suiteTmpfs } from '../helpers/small-tmpfs.js';
import { faultOverrides, faultWorld, readStore } from '../faults/common.js';
import { brokerClient, report, sleep } from './common.js';

const { mountPoint, skipReason } = suiteTmpfs('hostile-full');

const secret = 'durable-ack-secret-5b2a';
const hourMs = 3_600_000;

it.skipIf(skipReason !== null)(
  'answers 500 to an event it cannot store, enforces its cap from memory, and stores the redelivery',
  async () => {
    // A slow clock (20×) so that a real second of boost-versus-cap is visible in the tank's power.
    const world = await faultWorld('hostile-full', { speed: 20 });
    world.config.storage = { path: join(mountPoint, 'wattshift.db') };
    await registerHome(world);
    const port = await findFreePort();
    const httpPort = await findFreePort();
    const daemon = spawnDaemon(world, {
      configPath: writeConfig(world, {
        ...faultOverrides,
        http: { enabled: true, host: '127.0.0.1', port: httpPort },
        events: { poll: false, webhook: { enabled: true, port, secret } },
      }),
    });
    onTestFailed(() => writeFileSync(join(world.dataDir, 'daemon.log'), daemon.rawOutput.join('\n')));
    await daemon.waitForLog((l) => l.msg === 'wattshift started');

    // The user boosts the tank: it heats.
    const client = await brokerClient(world);
    await client.publishAsync('wattshift/tank/set', 'boost', { qos: 1 });
    const heatingEnd = Date.now() + 15_000;
    while (world.env.tank.state().powerW === 0 && Date.now() < heatingEnd) await sleep(100);
    expect(world.env.tank.state().powerW).toBeGreaterThan(0);

    // The disk fills; a 0 kW LPC on the tank for the next 3 hours arrives.
    fillUp(join(mountPoint, 'filler'));
    const reg = world.registration!;
    const now = world.clock.nowMs();
    const start = Math.floor(now / hourMs) * hourMs;
    const at = new Date(now).toISOString();
    const body = JSON.stringify({
      notificationId: 'n-full-lpc',
      eventId: 'full-lpc',
      eventCreatedAtUtc: at,
      notificationSentUtc: at,
      notificationType: 'ResourceLPCRequested',
      payload: {
        payloadType: 'ResourceLPC',
        targets: [
          {
            resourceId: reg.resources['tank']!,
            locationId: reg.locationId,
            resolution: '01:00:00',
            points: [0, 1, 2].map((h) => ({ timestamp: new Date(start + h * hourMs).toISOString(), maxPowerInKiloWatts: 0 })),
          },
        ],
      },
      // Room the full disk cannot give.
      padding: 'x'.repeat(200_000),
    });
    const send = async (): Promise<number> =>
      (
        await fetch(`http://127.0.0.1:${port}/spark/notify`, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', 'x-payload-signature': signPayload(body, secret) },
        })
      ).status;
    const whileFull = await send();
    expect(whileFull).toBe(500);

    // /healthz says so, and the cap holds from memory: the boosted tank stops within seconds.
    const health = await fetch(`http://127.0.0.1:${httpPort}/healthz`);
    const healthBody = await health.text();
    expect(health.status).toBe(503);
    expect(healthBody).toContain('STORE_FAILED');
    const capEnd = Date.now() + 15_000;
    while (world.env.tank.state().powerW > 0 && Date.now() < capEnd) await sleep(100);
    const powerUnderCap: number[] = [];
    for (let i = 0; i < 20; i++) {
      powerUnderCap.push(world.env.tank.state().powerW);
      await sleep(100);
    }
    expect(powerUnderCap.every((w) => w === 0)).toBe(true);

    // Room again: the API's redelivery is stored and acknowledged.
    rmSync(join(mountPoint, 'filler'));
    const afterRoom = await send();
    expect(afterRoom).toBe(200);
    daemon.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
    await client.endAsync();
    readStore(world, (store) => expect(store.hasEvent('full-lpc')).toBe(true));
    report('durable-ack', { whileFull, healthz: health.status, tankWUnderCapFromMemory: Math.max(...powerUnderCap), afterRoom });
  },
  120_000,
);
