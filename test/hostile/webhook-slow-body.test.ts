/**
 * Slow bodies against the real daemon's webhook receiver: 300 sockets that send whole headers and
 * then one byte of body a second, reopening whenever they are closed, while the API delivers
 * signed events from another address. First the attacker has one address (a device on the home
 * network), then ten (enough together to fill the receiver's connection table).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it, onTestFailed } from 'vitest';
import { findFreePort } from '../../src/sandbox/devices/modbus-tank.js';
import { signPayload } from '../../src/spark/webhook-signature.js';
import { spawnDaemon, stopAll, writeConfig } from '../helpers/daemon-harness.js';
import { slowBodies } from '../helpers/http-fuzz-send.js';
import { faultOverrides, faultWorld, readStore } from '../faults/common.js';
import { report, sleep } from './common.js';
import { curve, hourFromNow, post, webhookEvents, webhookPath, webhookSecret } from './webhook-calls.js';

afterAll(stopAll, 30_000);

it('acknowledges every genuine delivery while 300 slow-body sockets are open', async () => {
  const world = await faultWorld('hostile-webhook-slow-body');
  const port = await findFreePort();
  const daemon = spawnDaemon(world, { configPath: writeConfig(world, { ...faultOverrides, events: webhookEvents(port) }) });
  onTestFailed(() => writeFileSync(join(world.dataDir, 'daemon.log'), daemon.rawOutput.join('\n')));
  await daemon.waitForLog((l) => l.msg === 'wattshift started');

  const phases = [
    { name: 'one address', addresses: ['127.0.0.2'] },
    { name: 'ten addresses', addresses: Array.from({ length: 10 }, (_, i) => `127.0.0.${i + 2}`) },
  ];
  const figures: Record<string, string> = {};
  let n = 0;
  for (const phase of phases) {
    const attack = slowBodies({ port, path: webhookPath, count: 300, addresses: phase.addresses });
    await sleep(3_000);
    const genuine: number[] = [];
    for (let i = 0; i < 12; i++) {
      const body = curve(world, `slow-body-genuine-${n}`, [{ timestamp: hourFromNow(world, 3 + (n % 10)), price: -0.1 }]);
      n++;
      genuine.push(await post(port, body, signPayload(body, webhookSecret)));
      await sleep(100);
    }
    attack.stop();
    figures[phase.name] = `${genuine.filter((s) => s === 200).length}/${genuine.length}`;
    expect(genuine, phase.name).toEqual(genuine.map(() => 200));
    expect(daemon.child.exitCode).toBeNull();
    await sleep(500);
  }

  daemon.kill('SIGTERM');
  expect((await daemon.exited).code).toBe(0);
  readStore(world, (store) => {
    for (let i = 0; i < n; i++) expect(store.hasEvent(`slow-body-genuine-${i}`)).toBe(true);
  });
  report('webhook-slow-body', { slowBodySockets: 300, genuineDelivered: figures });
}, 170_000);
