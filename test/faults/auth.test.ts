/**
 * Fault (b): the token endpoint rejects the credentials. At start: exit 78 with a clear line. At
 * run time: the daemon keeps controlling, logs AUTH_REJECTED, retries with backoff, and recovers
 * when the endpoint accepts the credentials again.
 */
import { afterAll, expect, it } from 'vitest';
import { localTime, sampleTruth, secretLeaks, spawnDaemon, stopAll, waitUntilSim, writeConfig } from '../helpers/daemon-harness.js';
import { errorLines, faultOverrides, faultWorld, floorC, logsWith, priceCurve, tankLpc, wallSeconds } from './common.js';

afterAll(stopAll, 30_000);

/** Token requests in the first and second half of the run-time rejection (set by the test below). */
let tokenRetries: { firstHalf: number; secondHalf: number } | undefined;

it('exits 78 with a clear message when the credentials are rejected at start', async () => {
  const t0 = Date.now();
  const world = await faultWorld('auth-start', { proxy: true });
  world.proxy!.setMode('auth401');
  const daemon = spawnDaemon(world, { configPath: writeConfig(world, faultOverrides) });
  const exit = await daemon.exited;
  expect(exit.code).toBe(78);
  const line = daemon.logs.find((l) => l.code === 'AUTH_REJECTED' && l.level === 'error');
  expect(line, daemon.rawOutput.join('\n')).toBeDefined();
  expect(daemon.rawOutput.join('\n')).toMatch(/rejected the client credentials/);
  expect(secretLeaks(world, [daemon])).toEqual([]);
  await world.close();
  process.stderr.write(`fault auth-at-start: ${wallSeconds(t0)} s wall\n`);
}, 60_000);

it('keeps controlling while the token endpoint rejects it, retries with backoff, and recovers', async () => {
  const t0 = Date.now();
  const world = await faultWorld('auth-run', { proxy: true });
  const proxy = world.proxy!;
  const lpc = await tankLpc(world, [12]);
  const sampler = sampleTruth(world);
  const daemon = spawnDaemon(world, { configPath: writeConfig(world, faultOverrides) });
  await daemon.waitForLog((l) => l.msg === 'wattshift started');
  await daemon.waitForLog((l) => l.msg === 'report accepted' && l.eventId === lpc.id);

  await waitUntilSim(world, localTime(world, 0, 11));
  proxy.setMode('auth401');
  const outageReal = Date.now();
  await waitUntilSim(world, localTime(world, 0, 12, 30));
  proxy.setMode('pass');
  const outageRealMs = Date.now() - outageReal;
  // A new event after recovery must get through.
  await waitUntilSim(world, localTime(world, 0, 12, 40));
  const later = await priceCurve(world, [15], [-0.3]);
  await daemon.waitForLog((l) => l.msg === 'event received' && l.eventId === later.id, 20_000);
  await waitUntilSim(world, localTime(world, 0, 14));
  daemon.kill('SIGTERM');
  expect((await daemon.exited).code).toBe(0);
  sampler.stop();

  // Rejected, said so with its code, retried - but not in a tight loop.
  const rejectedTokens = proxy.seen.filter((r) => r.mode === 'auth401' && r.path.endsWith('/connect/token'));
  expect(rejectedTokens.length).toBeGreaterThanOrEqual(2);
  const simMinutes = (outageRealMs * world.speed) / 60_000;
  const half = outageReal + outageRealMs / 2;
  tokenRetries = {
    firstHalf: rejectedTokens.filter((r) => r.realMs < half).length,
    secondHalf: rejectedTokens.filter((r) => r.realMs >= half).length,
  };
  expect(logsWith([daemon], (l) => l.code === 'AUTH_REJECTED').length).toBeGreaterThan(0);

  // Control went on: the LPC inside the outage held, the floor held.
  const inLpc = sampler.samples.filter((s) => s.atMs >= lpc.startMs + 60_000 && s.atMs < localTime(world, 0, 12, 30));
  expect(inLpc.length).toBeGreaterThan(10);
  expect(inLpc.filter((s) => s.tankPowerW > 0)).toEqual([]);
  expect(sampler.samples.filter((s) => s.tankC < floorC - 0.5)).toEqual([]);

  // Error lines: only the rejected credentials.
  expect(errorLines([daemon]).filter((l) => l.code !== 'AUTH_REJECTED')).toEqual([]);
  expect(secretLeaks(world, [daemon])).toEqual([]);
  process.stderr.write(
    `fault auth-at-run-time: ${wallSeconds(t0)} s wall (${rejectedTokens.length} rejected token requests in ${simMinutes.toFixed(0)} simulated minutes)\n`,
  );
}, 120_000);

// Rejected credentials pause token requests with a growing delay (src/spark/oauth.ts), instead of
// every API call of every loop posting to /connect/token again.
it('backs off token requests while the credentials stay rejected', () => {
  expect(tokenRetries).toBeDefined();
  expect(tokenRetries!.secondHalf).toBeLessThanOrEqual(tokenRetries!.firstHalf / 2);
});
