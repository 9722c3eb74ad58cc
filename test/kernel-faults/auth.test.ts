/**
 * Fault (b) on the simulation kernel: the token endpoint rejects the credentials. At start: exit 78
 * with a clear line. At run time: the daemon keeps controlling, logs AUTH_REJECTED, retries with
 * backoff, and recovers when the endpoint accepts the credentials again.
 */
import { afterEach, expect, it } from 'vitest';
import { secretLeaks } from '../helpers/daemon-harness.js';
import { errorLines, floorC, logsWith, priceCurve, tankLpc } from '../faults/common.js';
import { closeFaultHomes, faultHome } from './fault-home.js';

afterEach(closeFaultHomes, 60_000);

/** Token requests in the first and second half of the run-time rejection (set by the test below). */
let tokenRetries: { firstHalf: number; secondHalf: number } | undefined;

it('exits 78 with a clear message when the credentials are rejected at start', async () => {
  const home = await faultHome('auth-start', { proxy: true });
  home.proxy!.setMode('auth401');
  const daemon = await home.startDaemon();
  expect(daemon.running).toBe(false);
  expect(await daemon.exited).toBe(78);
  const line = daemon.logs.find((l) => l.code === 'AUTH_REJECTED' && l.level === 'error');
  expect(line, daemon.rawOutput.join('\n')).toBeDefined();
  expect(daemon.rawOutput.join('\n')).toMatch(/rejected the client credentials/);
  expect(secretLeaks(home, [daemon])).toEqual([]);
}, 60_000);

it('keeps controlling while the token endpoint rejects it, retries with backoff, and recovers', async () => {
  const home = await faultHome('auth-run', { proxy: true });
  const proxy = home.proxy!;
  const lpc = await tankLpc(home, [12]);
  const samples = home.sampleTruth();
  const daemon = await home.startDaemon();
  expect(daemon.running).toBe(true);
  await home.untilLog(daemon, (l) => l.msg === 'report accepted' && l.eventId === lpc.id, 60 * 60_000);

  const outageFrom = home.localTime(0, 11);
  const outageTo = home.localTime(0, 12, 30);
  await home.until(outageFrom);
  proxy.setMode('auth401');
  await home.until(outageTo);
  proxy.setMode('pass');
  // A new event after recovery must get through.
  await home.until(home.localTime(0, 12, 40));
  const later = await priceCurve(home, [15], [-0.3]);
  await home.untilLog(daemon, (l) => l.msg === 'event received' && l.eventId === later.id, 60 * 60_000);
  await home.until(home.localTime(0, 14));
  expect(await daemon.stop()).toBe(0);

  // Rejected, said so with its code, retried - but not in a tight loop.
  const rejectedTokens = proxy.seen.filter((r) => r.mode === 'auth401' && r.path.endsWith('/connect/token'));
  expect(rejectedTokens.length).toBeGreaterThanOrEqual(2);
  // The token cached before the outage stays good until its refresh is due: the rejections run
  // from the first refresh asked for to the outage's end, halved there.
  const half = (rejectedTokens[0]!.atMs + outageTo) / 2;
  tokenRetries = {
    firstHalf: rejectedTokens.filter((r) => r.atMs < half).length,
    secondHalf: rejectedTokens.filter((r) => r.atMs >= half).length,
  };
  expect(logsWith([daemon], (l) => l.code === 'AUTH_REJECTED').length).toBeGreaterThan(0);

  // Control went on: the LPC inside the outage held from its first control tick, the floor held.
  const inLpc = samples.filter((s) => s.atMs >= lpc.startMs + 60_000 && s.atMs < outageTo);
  expect(inLpc.length).toBe(29);
  expect(inLpc.filter((s) => s.tankPowerW > 0)).toEqual([]);
  expect(samples.filter((s) => s.tankC < floorC - 0.5)).toEqual([]);

  // Error lines: only the rejected credentials.
  expect(errorLines([daemon]).filter((l) => l.code !== 'AUTH_REJECTED')).toEqual([]);
  expect(secretLeaks(home, [daemon])).toEqual([]);
}, 120_000);

// Rejected credentials pause token requests with a growing delay (src/spark/oauth.ts), instead of
// every API call of every loop posting to /connect/token again.
it('backs off token requests while the credentials stay rejected', () => {
  expect(tokenRetries).toBeDefined();
  expect(tokenRetries!.firstHalf).toBeGreaterThan(0);
  expect(tokenRetries!.secondHalf).toBeLessThanOrEqual(tokenRetries!.firstHalf / 2);
});
