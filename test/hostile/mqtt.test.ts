/**
 * Hostile MQTT against the real daemon process: a 32 MB retained command waiting at start (once a
 * crash loop), a 64 MB live one, a 100 kB one, out-of-range and foreign-device commands, a burst
 * of 60 alternating off/boost, a flood of 5,000 commands, and a retained command across a restart.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it, onTestFailed } from 'vitest';
import type { MqttClient } from 'mqtt';
import { spawnDaemon, stopAll, writeConfig, type DaemonProcess, type World } from '../helpers/daemon-harness.js';
import { faultOverrides, faultWorld } from '../faults/common.js';
import { brokerClient, count, cpuSeconds, report, retainedOn, rssMiB, sleep } from './common.js';

afterAll(stopAll, 30_000);

interface Response {
  status: 'ok' | 'error';
  error?: { code: string; message: string };
}

/** Collects the daemon's command responses for a device. */
function responses(client: MqttClient, deviceId: string): Response[] {
  const seen: Response[] = [];
  client.on('message', (topic, payload) => {
    if (topic === `wattshift/response/${deviceId}/set`) seen.push(JSON.parse(payload.toString()) as Response);
  });
  void client.subscribeAsync(`wattshift/response/${deviceId}/set`, { qos: 1 });
  return seen;
}

async function until(what: string, predicate: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Publishes one command and waits for its response. */
async function command(client: MqttClient, seen: Response[], topic: string, payload: string): Promise<Response> {
  const before = seen.length;
  await client.publishAsync(topic, payload, { qos: 1 });
  await until(`a response to ${payload.slice(0, 40)}`, () => seen.length > before);
  return seen[before]!;
}

function start(world: World): DaemonProcess {
  return spawnDaemon(world, { configPath: writeConfig(world, faultOverrides) });
}

it('refuses oversized messages unread, keeps commands inside the envelope, and survives floods', async () => {
  // A slow clock (20×): a minute of anti-cycling or rate limit is three real seconds.
  const world = await faultWorld('hostile-mqtt', { speed: 20 });
  let attacker = await brokerClient(world);

  // 1. A 32 MB retained command is waiting when the daemon starts.
  await attacker.publishAsync('wattshift/tank/set', Buffer.alloc(32 * 1024 * 1024, 0x7b), { qos: 1, retain: true });
  const daemon = start(world);
  onTestFailed(() => writeFileSync(join(world.dataDir, 'daemon.log'), daemon.rawOutput.join('\n')));
  await daemon.waitForLog((l) => l.msg === 'wattshift started');
  await daemon.waitForLog((l) => l.code === 'MQTT_MESSAGE_TOO_LARGE' && l.msg === 'cleared an oversized retained command', 30_000);
  await sleep(2_000);
  expect(daemon.child.exitCode).toBeNull();
  expect(await retainedOn(world, 'wattshift/tank/set')).toEqual([]);
  const rssAfterRetained = rssMiB(daemon.pid);

  // 2. A 64 MB live message: refused before it is buffered; the connection comes back.
  const tooLargeBefore = count(daemon, (l) => l.code === 'MQTT_MESSAGE_TOO_LARGE');
  await attacker.publishAsync('wattshift/car/set', Buffer.alloc(64 * 1024 * 1024, 0x7b), { qos: 0 });
  await until('the 64 MB refusal', () => count(daemon, (l) => l.code === 'MQTT_MESSAGE_TOO_LARGE') > tooLargeBefore);
  const rssAfterLive = rssMiB(daemon.pid);
  await attacker.endAsync();
  attacker = await brokerClient(world);
  await sleep(3_000);

  // 3. A 100 kB command (under the packet limit, over the command limit): refused unread.
  const seen = responses(attacker, 'tank');
  await sleep(200);
  expect((await command(attacker, seen, 'wattshift/tank/set', `{"floorC":${' '.repeat(100_000)}50}`)).error?.code).toBe('MQTT_MESSAGE_TOO_LARGE');

  // 4. Out of the device's envelope, or naming another device: refused with a reason.
  const carSeen = responses(attacker, 'car');
  await sleep(200);
  for (const [topic, payload, list] of [
    ['wattshift/tank/set', '{"floorC":5}', seen],
    ['wattshift/tank/set', '{"floorC":80}', seen],
    ['wattshift/car/set', '{"targetKwh":150}', carSeen],
    ['wattshift/car/set', '{"departure":"9999-01-01T00:00:00Z"}', carSeen],
    ['wattshift/request/tank/set', '{"deviceId":"car","mode":"off","transaction":7}', seen],
  ] as const) {
    const r = await command(attacker, list, topic, payload);
    expect(r.status, payload).toBe('error');
    expect(r.error?.code, payload).toBe('MQTT_COMMAND_INVALID');
  }
  expect(seen.at(-1)?.error?.message).toContain("does not match the topic's device");

  // 5. A burst of 60 alternating off/boost, all at once.
  const plansBefore = count(daemon, (l) => l.msg === 'plan updated' && String(l['reason']).startsWith('command'));
  const okBefore = seen.filter((r) => r.status === 'ok').length;
  const responsesBefore = seen.length;
  let flips = 0;
  let blocked = world.env.tank.state().blocked;
  const watch = setInterval(() => {
    const now = world.env.tank.state().blocked;
    if (now !== blocked) flips++;
    blocked = now;
  }, 10);
  for (let i = 0; i < 60; i++) void attacker.publishAsync('wattshift/tank/set', i % 2 === 0 ? 'off' : 'boost', { qos: 1 });
  // Beyond the queue bound (32) commands are dropped without a response.
  await until('the burst answered', () => seen.length >= responsesBefore + 32);
  await sleep(6_000);
  const burstAnswered = seen.length - responsesBefore;
  clearInterval(watch);
  const burstOk = seen.filter((r) => r.status === 'ok').length - okBefore;
  const burstReplans = count(daemon, (l) => l.msg === 'plan updated' && String(l['reason']).startsWith('command')) - plansBefore;
  expect(burstOk).toBeLessThanOrEqual(10);
  expect(burstReplans).toBeLessThanOrEqual(1);
  expect(flips).toBeLessThanOrEqual(2);

  // 6. A flood of 5,000 commands.
  const rssBeforeFlood = rssMiB(daemon.pid);
  const cpuBeforeFlood = cpuSeconds(daemon.pid);
  const linesBeforeFlood = daemon.rawOutput.length;
  for (let i = 0; i < 5000; i++) void attacker.publishAsync('wattshift/tank/set', i % 2 === 0 ? 'off' : 'boost', { qos: 0 });
  await sleep(10_000);
  const rssAfterFlood = rssMiB(daemon.pid);
  const floodCpuS = cpuSeconds(daemon.pid) - cpuBeforeFlood;
  const floodLines = daemon.rawOutput.length - linesBeforeFlood;
  expect(daemon.child.exitCode).toBeNull();
  expect(rssAfterFlood).toBeLessThan(200);

  // 7. A retained command is applied once and cleared: a restart does not replay it.
  await command(attacker, seen, 'wattshift/tank/set/floor', '52');
  expect(seen.at(-1)?.status).toBe('ok');
  await attacker.publishAsync('wattshift/tank/set/floor', '55', { qos: 1, retain: true });
  await until('the retained command applied', () =>
    daemon.logs.some((l) => l.msg === 'command applied' && (l['command'] as { floorC?: number })?.floorC === 55),
  );
  await sleep(500);
  expect(await retainedOn(world, 'wattshift/tank/set/floor')).toEqual([]);
  daemon.kill('SIGTERM');
  expect((await daemon.exited).code).toBe(0);
  const again = start(world);
  await again.waitForLog((l) => l.msg === 'wattshift started');
  await sleep(3_000);
  expect(again.logs.filter((l) => l.msg === 'command applied')).toEqual([]);
  again.kill('SIGTERM');
  await again.exited;
  await attacker.endAsync();

  const figures = {
    rssMiBAfter32MBRetained: Math.round(rssAfterRetained),
    rssMiBAfter64MBLive: Math.round(rssAfterLive),
    burst: { sent: 60, answered: burstAnswered, accepted: burstOk, replans: burstReplans, relayFlips: flips },
    flood: {
      sent: 5000,
      rssMiBBefore: Math.round(rssBeforeFlood),
      rssMiBAfter: Math.round(rssAfterFlood),
      cpuSeconds: floodCpuS,
      logLines: floodLines,
    },
  };
  report('mqtt', figures);
}, 170_000);
