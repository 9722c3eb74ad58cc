/**
 * Fault (f): the database's file system fills up. The daemon keeps controlling (an LPC inside the
 * full-disk window holds, the floor holds) and reports STORE_FAILED in its log and on /healthz.
 * Needs a small tmpfs: mounted here when the test runs as root with mount rights, skipped otherwise.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { findFreePort } from '../../src/sandbox/devices/modbus-tank.js';
import { localTime, registerHome, sampleTruth, secretLeaks, spawnDaemon, waitUntilSim, writeConfig } from '../helpers/daemon-harness.js';
import { fillUp, suiteTmpfs } from '../helpers/small-tmpfs.js';
import { errorLines, faultOverrides, faultWorld, floorC, logsWith, tankLpc, wallSeconds } from './common.js';

const { mountPoint, skipReason } = suiteTmpfs('fault-disk-full');

it.skipIf(skipReason !== null)(
  'keeps controlling with a full disk and reports STORE_FAILED',
  async () => {
    const t0 = Date.now();
    const world = await faultWorld('disk-full');
    const dbPath = join(mountPoint, 'wattshift.db');
    world.config.storage = { path: dbPath };
    // Registered again into the database on the tmpfs (idempotent on the API).
    await registerHome(world);
    const lpc = await tankLpc(world, [12]);
    const port = await findFreePort();
    const sampler = sampleTruth(world);
    const daemon = spawnDaemon(world, { configPath: writeConfig(world, { ...faultOverrides, http: { enabled: true, host: '127.0.0.1', port } }) });
    await daemon.waitForLog((l) => l.msg === 'wattshift started');
    await daemon.waitForLog((l) => l.msg === 'report accepted' && l.eventId === lpc.id);

    await waitUntilSim(world, localTime(world, 0, 11));
    const filler = join(mountPoint, 'filler');
    fillUp(filler);
    await daemon.waitForLog((l) => l.code === 'STORE_FAILED' || l.code === 'STORE_FULL', 20_000);
    // /healthz while the disk is full (polled: a commit that fits in the WAL's free pages succeeds).
    const healthSeen: { status: number; body: string }[] = [];
    while (world.clock.nowMs() < localTime(world, 0, 13, 10)) {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null);
      if (res) healthSeen.push({ status: res.status, body: await res.text() });
      await new Promise((r) => setTimeout(r, 250));
    }
    rmSync(filler);
    await waitUntilSim(world, localTime(world, 0, 14));
    daemon.kill('SIGTERM');
    const exit = await daemon.exited;
    sampler.stop();
    expect(exit.code).toBe(0);

    writeFileSync(join(world.dataDir, 'daemon.log'), daemon.rawOutput.join('\n'));
    const unhealthy = healthSeen.filter((h) => h.status !== 200 && /STORE_FAILED|STORE_FULL|metering/.test(h.body));
    expect(unhealthy.length, `${world.dataDir}/daemon.log; health seen: ${JSON.stringify(healthSeen.slice(0, 3))}`).toBeGreaterThan(0);
    const storeErrors = logsWith([daemon], (l) => l.code === 'STORE_FAILED' || l.code === 'STORE_FULL');
    expect(storeErrors.length).toBeGreaterThan(0);

    // Control went on: the LPC inside the full-disk window held, the floor held.
    const inLpc = sampler.samples.filter((s) => s.atMs >= lpc.startMs + 60_000 && s.atMs < lpc.endMs);
    expect(inLpc.length).toBeGreaterThan(20);
    expect(inLpc.filter((s) => s.tankPowerW > 0)).toEqual([]);
    expect(sampler.samples.filter((s) => s.tankC < floorC - 0.5)).toEqual([]);

    // Error lines: only the store's.
    expect(errorLines([daemon]).filter((l) => l.code !== 'STORE_FAILED' && l.code !== 'STORE_FULL')).toEqual([]);
    expect(secretLeaks(world, [daemon])).toEqual([]);
    process.stderr.write(
      `fault disk-full: ${wallSeconds(t0)} s wall; ${storeErrors.length} store error lines; /healthz unhealthy in ${unhealthy.length}/${healthSeen.length} polls\n`,
    );
  },
  120_000,
);
