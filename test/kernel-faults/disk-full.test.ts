/**
 * Fault (f) on the simulation kernel: the database's file system fills up. The daemon keeps
 * controlling (an LPC inside the full-disk window holds, the floor holds) and reports STORE_FAILED
 * in its log and on /healthz. Needs a small tmpfs: mounted here when the test runs as root with
 * mount rights, skipped otherwise.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { findFreePort } from '../../src/sandbox/devices/modbus-tank.js';
import { secretLeaks } from '../helpers/daemon-harness.js';
import { fillUp, suiteTmpfs } from '../helpers/small-tmpfs.js';
import { errorLines, floorC, logsWith, tankLpc } from '../faults/common.js';
import { closeFaultHomes, faultHome } from './fault-home.js';

const { mountPoint, skipReason } = suiteTmpfs('kernel-fault-disk-full');
afterEach(closeFaultHomes, 60_000);

it.skipIf(skipReason !== null)(
  'keeps controlling with a full disk and reports STORE_FAILED',
  async () => {
    const home = await faultHome('disk-full');
    home.config.storage = { path: join(mountPoint, 'wattshift.db') };
    // Registered again into the database on the tmpfs (idempotent on the API).
    await home.register();
    const lpc = await tankLpc(home, [12]);
    const port = await findFreePort();
    home.config.http = { enabled: true, host: '127.0.0.1', port };
    const samples = home.sampleTruth();
    const daemon = await home.startDaemon();
    expect(daemon.running).toBe(true);
    await home.untilLog(daemon, (l) => l.msg === 'report accepted' && l.eventId === lpc.id, 60 * 60_000);

    await home.until(home.localTime(0, 11));
    const filler = join(mountPoint, 'filler');
    fillUp(filler);
    await home.untilLog(daemon, (l) => l.code === 'STORE_FAILED' || l.code === 'STORE_FULL', 60 * 60_000);
    // /healthz each minute while the disk is full (a commit that fits in the WAL's free pages succeeds).
    const healthSeen: { status: number; body: string }[] = [];
    while (home.clock.nowMs() < home.localTime(0, 13, 10)) {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      healthSeen.push({ status: res.status, body: await res.text() });
      await home.until(home.clock.nowMs() + 60_000);
    }
    rmSync(filler);
    await home.until(home.localTime(0, 14));
    expect(await daemon.stop()).toBe(0);

    const unhealthy = healthSeen.filter((h) => h.status !== 200 && /STORE_FAILED|STORE_FULL|metering/.test(h.body));
    expect(unhealthy.length, `health seen: ${JSON.stringify(healthSeen.slice(0, 3))}`).toBeGreaterThan(0);
    const storeErrors = logsWith([daemon], (l) => l.code === 'STORE_FAILED' || l.code === 'STORE_FULL');
    expect(storeErrors.length).toBeGreaterThan(0);

    // Control went on: the LPC inside the full-disk window held from its first control tick, the floor held.
    const inLpc = samples.filter((s) => s.atMs >= lpc.startMs + 60_000 && s.atMs < lpc.endMs);
    expect(inLpc.length).toBe(59);
    expect(inLpc.filter((s) => s.tankPowerW > 0)).toEqual([]);
    expect(samples.filter((s) => s.tankC < floorC - 0.5)).toEqual([]);

    // Error lines: only the store's.
    expect(errorLines([daemon]).filter((l) => l.code !== 'STORE_FAILED' && l.code !== 'STORE_FULL')).toEqual([]);
    expect(secretLeaks(home, [daemon])).toEqual([]);
  },
  120_000,
);
