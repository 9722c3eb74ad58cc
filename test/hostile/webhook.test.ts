/**
 * Hostile webhook calls against the real daemon process: no secret configured (refused at start),
 * an unsigned 0 kW LPC, 2,000 forged calls, a slowloris of 200 reopening sockets during 40 genuine
 * deliveries, and signed events with absurd values (stored, refused, never planned).
 */
import { connect, type Socket } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it, onTestFailed } from 'vitest';
import { findFreePort } from '../../src/sandbox/devices/modbus-tank.js';
import { signPayload } from '../../src/spark/webhook-signature.js';
import { spawnDaemon, stopAll, writeConfig, type World } from '../helpers/daemon-harness.js';
import { faultOverrides, faultWorld, readStore } from '../faults/common.js';
import { count, report, sleep } from './common.js';
import { curve, hourFromNow, lpc, post, webhookEvents, webhookSecret as secret } from './webhook-calls.js';

afterAll(stopAll, 30_000);

function webhookConfig(world: World, port: number, withSecret: boolean): string {
  return writeConfig(world, { ...faultOverrides, events: webhookEvents(port, withSecret) });
}

it('refuses to start without a secret (exit 78)', async () => {
  const world = await faultWorld('hostile-webhook-nosecret');
  const daemon = spawnDaemon(world, { configPath: webhookConfig(world, await findFreePort(), false) });
  const exit = await daemon.exited;
  expect(exit.code).toBe(78);
  expect(daemon.rawOutput.join('\n')).toContain('the webhook receiver needs a secret');
}, 60_000);

it('holds against unsigned, forged, slowloris and out-of-range calls', async () => {
  const world = await faultWorld('hostile-webhook');
  const port = await findFreePort();
  const daemon = spawnDaemon(world, { configPath: webhookConfig(world, port, true) });
  onTestFailed(() => writeFileSync(join(world.dataDir, 'daemon.log'), daemon.rawOutput.join('\n')));
  await daemon.waitForLog((l) => l.msg === 'webhook receiver listening');
  await daemon.waitForLog((l) => l.msg === 'wattshift started');
  const hour = (h: number): string => hourFromNow(world, h);

  // An unsigned 0 kW LPC for 24 h is refused.
  const unsigned = lpc(
    world,
    'unsigned-lpc',
    Array.from({ length: 24 }, (_, h) => ({ timestamp: hour(h + 1), maxPowerInKiloWatts: 0 })),
  );
  expect(await post(port, unsigned, null)).toBe(401);

  // 2,000 forged calls: refused, a handful of warning lines.
  const linesBefore = daemon.rawOutput.length;
  const forged: number[] = [];
  for (let i = 0; i < 2000; i += 50) {
    forged.push(...(await Promise.all(Array.from({ length: 50 }, () => post(port, unsigned, 'AAAA')))));
  }
  expect(forged.every((s) => s === 401)).toBe(true);
  await sleep(500);
  // The receiver's own lines: the daemon's other lines (a control tick slowed by the flood) are not its.
  const forgedLines = daemon.rawOutput.slice(linesBefore).filter((l) => l.includes('webhook')).length;
  expect(forgedLines).toBeGreaterThan(0);
  expect(forgedLines).toBeLessThanOrEqual(10);

  // Slowloris: 200 sockets that trickle a header byte a second and reopen when closed, from a
  // device on the home network (an address other than the deliverer's).
  let stopLoris = false;
  const loris = new Set<Socket>();
  const openLoris = (): void => {
    if (stopLoris) return;
    const s = connect({ host: '127.0.0.1', port, localAddress: '127.0.0.2' });
    s.on('error', () => undefined);
    s.on('connect', () => s.write('POST /spark/notify HTTP/1.1\r\nHost: x\r\nX-Slow: '));
    const drip = setInterval(() => s.writable && s.write('a'), 1000);
    loris.add(s);
    s.on('close', () => {
      clearInterval(drip);
      loris.delete(s);
      openLoris();
    });
  };
  for (let i = 0; i < 200; i++) openLoris();
  await sleep(3_000);
  const genuine: number[] = [];
  for (let i = 0; i < 40; i++) {
    const body = curve(world, `genuine-${i}`, [{ timestamp: hour(3 + (i % 10)), price: -0.1 }]);
    genuine.push(await post(port, body, signPayload(body, secret)));
    await sleep(250);
  }
  stopLoris = true;
  for (const s of loris) s.destroy();
  const delivered = genuine.filter((s) => s === 200).length;
  expect(delivered).toBe(40);

  // Signed events with absurd values: answered 200 (stored), refused, never planned.
  const hostile: [string, string][] = [
    [
      'price-1e308',
      curve(world, 'price-1e308', [
        { timestamp: hour(5), price: 1e308 },
        { timestamp: hour(6), price: -1e308 },
      ]),
    ],
    ['cap-negative', lpc(world, 'cap-negative', [{ timestamp: hour(4), maxPowerInKiloWatts: -5 }])],
    ['cap-century', lpc(world, 'cap-century', [{ timestamp: hour(4), maxPowerInKiloWatts: 0 }], '36500.00:00:00')],
    ['year-9999', lpc(world, 'year-9999', [{ timestamp: '9999-01-01T00:00:00Z', maxPowerInKiloWatts: 0 }])],
    [
      'points-3000',
      curve(
        world,
        'points-3000',
        Array.from({ length: 3000 }, (_, i) => ({ timestamp: hour(i), price: 0.1 })),
      ),
    ],
  ];
  for (const [name, body] of hostile) expect(await post(port, body, signPayload(body, secret)), name).toBe(200);
  await sleep(2_000);
  const refused = count(daemon, (l) => l.code === 'EVENT_OUT_OF_RANGE');
  expect(refused).toBe(hostile.length);
  const lastPlan = daemon.logs.filter((l) => l.msg === 'plan updated').at(-1);
  expect(typeof lastPlan?.['cost']).toBe('number');
  expect(Number.isFinite(lastPlan?.['cost'])).toBe(true);
  expect(daemon.child.exitCode).toBeNull();

  daemon.kill('SIGTERM');
  expect((await daemon.exited).code).toBe(0);
  readStore(world, (store) => {
    expect(store.hasEvent('unsigned-lpc')).toBe(false);
    for (const [name] of hostile) expect(store.getEvent(name)?.state, name).toBe('ignored');
    for (let i = 0; i < 40; i++) expect(store.hasEvent(`genuine-${i}`)).toBe(true);
  });
  report('webhook', {
    forgedCalls: 2000,
    forgedWarnLines: forgedLines,
    slowlorisSockets: 200,
    genuineDelivered: `${delivered}/40`,
    hostileEventsRefused: `${refused}/${hostile.length}`,
  });
}, 170_000);
