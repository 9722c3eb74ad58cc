/**
 * Fault (a): the API answers 500, then 429 with Retry-After, then hangs, for three simulated
 * hours. The daemon keeps controlling on its last plan, queues the report that falls due in the
 * outage and sends it exactly once after recovery.
 */
import { afterAll, expect, it } from 'vitest';
import { checkReports, localTime, sampleTruth, secretLeaks, spawnDaemon, stopAll, waitUntilSim, writeConfig } from '../helpers/daemon-harness.js';
import { errorLines, faultOverrides, faultWorld, floorC, logsWith, priceCurve, readStore, tankLpc, wallSeconds } from './common.js';

afterAll(stopAll, 30_000);

it('keeps controlling through 500s, 429s and timeouts and sends the queued report once after recovery', async () => {
  const t0 = Date.now();
  const world = await faultWorld('api', { proxy: true });
  const proxy = world.proxy!;
  const curve = await priceCurve(world, [11, 12], [-0.5, -0.6]);
  const lpc = await tankLpc(world, [14]);
  const sampler = sampleTruth(world);
  const daemon = spawnDaemon(world, { configPath: writeConfig(world, faultOverrides) });
  await daemon.waitForLog((l) => l.msg === 'wattshift started');

  const outageStart = localTime(world, 0, 12);
  const recovered = localTime(world, 0, 15);
  await waitUntilSim(world, outageStart);
  proxy.setMode('error500');
  await waitUntilSim(world, localTime(world, 0, 13));
  proxy.setMode('rate429');
  await waitUntilSim(world, localTime(world, 0, 14));
  proxy.setMode('timeout');
  await waitUntilSim(world, recovered);
  proxy.setMode('pass');
  // Backoff is capped at an hour: the retry comes within about an hour of recovery.
  await waitUntilSim(world, localTime(world, 0, 16, 30));
  daemon.kill('SIGTERM');
  expect((await daemon.exited).code).toBe(0);
  sampler.stop();

  // The daemon met every failure mode and said so.
  for (const mode of ['error500', 'rate429', 'timeout'] as const) expect(proxy.seen.filter((r) => r.mode === mode).length).toBeGreaterThan(0);
  expect(logsWith([daemon], (l) => l.msg === 'report send failed; will retry' && l.code === 'API_UNAVAILABLE').length).toBeGreaterThan(0);

  // The usage report: accepted once, after recovery, equal to the truth.
  const check = checkReports(world);
  expect(check.problems).toEqual([]);
  expect(check.usageByEvent.get(curve.id)).toBe(1);
  const accepted = world.env.sandbox.acceptedReports(String(world.config.spark.clientId));
  const usage = accepted.find((r) => r.eventId === curve.id)!;
  expect(usage.createdAtMs).toBeGreaterThanOrEqual(recovered);
  expect(check.acksByEvent.get(lpc.id)?.length).toBe(1);
  expect(readStore(world, (s) => s.listReports({ states: ['pending', 'sending', 'rejected'] }))).toEqual([]);

  // Control went on: the LPC inside the outage held, the floor held.
  const inLpc = sampler.samples.filter((s) => s.atMs >= lpc.startMs + 60_000 && s.atMs < lpc.endMs);
  expect(inLpc.length).toBeGreaterThan(20);
  expect(inLpc.filter((s) => s.tankPowerW > 0)).toEqual([]);
  expect(sampler.samples.filter((s) => s.tankC < floorC - 0.5)).toEqual([]);

  // The only error lines: the event poller's failed ticks during the outage (one per retry; see
  // the report: a retryable outage could be a warning, logged once).
  const errors = errorLines([daemon]);
  expect(errors.filter((l) => !(l.msg === 'event-poller tick failed' && l.code === 'API_UNAVAILABLE'))).toEqual([]);
  expect(secretLeaks(world, [daemon])).toEqual([]);
  process.stderr.write(`fault api-outage: ${wallSeconds(t0)} s wall\n`);
}, 150_000);
