/**
 * Fault (a) on the simulation kernel: the API answers 500 for an hour, then 429 with Retry-After
 * for an hour, then hangs for five minutes. The daemon keeps controlling on its last plan, queues
 * the report that falls due in the outage and sends it exactly once after recovery, equal to the
 * simulators' truth. A hung request holds the clock until undici's own timer (a real-time one, of
 * about a second's resolution) ends it, and each costs the run that second: the hang is five minutes,
 * not an hour, and shows the same, requests that never answer.
 */
import { afterEach, expect, it } from 'vitest';
import { checkReports, secretLeaks } from '../helpers/daemon-harness.js';
import { errorLines, floorC, logsWith, priceCurve, tankLpc } from '../faults/common.js';
import { closeFaultHomes, faultHome } from './fault-home.js';

afterEach(closeFaultHomes, 60_000);

it('keeps controlling through 500s, 429s and timeouts and sends the queued report once after recovery', async () => {
  const home = await faultHome('api', { proxy: true });
  const proxy = home.proxy!;
  const curve = await priceCurve(home, [11, 12], [-0.5, -0.6]);
  const lpc = await tankLpc(home, [13, 14]);
  const samples = home.sampleTruth();
  const daemon = await home.startDaemon();
  expect(daemon.running).toBe(true);

  const outageStart = home.localTime(0, 12);
  const recovered = home.localTime(0, 14, 5);
  await home.until(outageStart);
  proxy.setMode('error500');
  await home.until(home.localTime(0, 13));
  proxy.setMode('rate429');
  await home.until(home.localTime(0, 14));
  proxy.setMode('timeout');
  await home.until(recovered);
  proxy.setMode('pass');
  // Backoff is capped at an hour: the retry comes within about an hour of recovery.
  await home.until(home.localTime(0, 15, 35));
  expect(await daemon.stop()).toBe(0);

  // The daemon met every failure mode and said so.
  for (const mode of ['error500', 'rate429', 'timeout'] as const) expect(proxy.seen.filter((r) => r.mode === mode).length).toBeGreaterThan(0);
  expect(logsWith([daemon], (l) => l.msg === 'report send failed; will retry' && l.code === 'API_UNAVAILABLE').length).toBeGreaterThan(0);

  // The usage report: accepted once, after recovery, equal to the truth to the report's Wh.
  const check = checkReports(home, { relTol: 0 });
  expect(check.problems).toEqual([]);
  expect(check.usageByEvent.get(curve.id)).toBe(1);
  const accepted = home.env.sandbox.acceptedReports(String(home.config.spark.clientId));
  const usage = accepted.find((r) => r.eventId === curve.id)!;
  expect(usage.createdAtMs).toBeGreaterThanOrEqual(recovered);
  expect(check.acksByEvent.get(lpc.id)?.length).toBe(1);
  expect(home.readStore((s) => s.listReports({ states: ['pending', 'sending', 'rejected'] }))).toEqual([]);

  // Control went on: the LPC inside the outage held from its first control tick, the floor held.
  const inLpc = samples.filter((s) => s.atMs >= lpc.startMs + 60_000 && s.atMs < lpc.endMs);
  expect(inLpc.length).toBe(119);
  expect(inLpc.filter((s) => s.tankPowerW > 0)).toEqual([]);
  expect(samples.filter((s) => s.tankC < floorC - 0.5)).toEqual([]);

  // The only error lines: the event poller's failed ticks during the outage (one per retry).
  const errors = errorLines([daemon]);
  expect(errors.filter((l) => !(l.msg === 'event-poller tick failed' && l.code === 'API_UNAVAILABLE'))).toEqual([]);
  expect(secretLeaks(home, [daemon])).toEqual([]);
}, 300_000);
