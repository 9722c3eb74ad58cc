/**
 * A damaged database against the real daemon process: once, it kept the service down for good
 * (exit 1, endless restarts), and damage in later pages went unnoticed at start. Now the daemon
 * moves it aside, starts on a new one, logs STORE_CORRUPT and shows it in its status.
 */
import { closeSync, openSync, readdirSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterAll, expect, it, onTestFailed } from 'vitest';
import { findFreePort } from '../../src/sandbox/devices/modbus-tank.js';
import { spawnDaemon, stopAll, writeConfig } from '../helpers/daemon-harness.js';
import { faultOverrides, faultWorld } from '../faults/common.js';
import { report } from './common.js';

afterAll(stopAll, 30_000);

it('moves a database damaged in later pages aside, starts on a new one and says so', async () => {
  const world = await faultWorld('hostile-corrupt');
  const dbPath = String(world.config.storage!.path);
  // The registered home's database, padded so that the damage lands past the schema pages.
  const size = statSync(dbPath).size;
  const fd = openSync(dbPath, 'r+');
  writeSync(fd, Buffer.alloc(8 * 4096, 0xa5), 0, 8 * 4096, Math.max(4096 * 2, Math.floor(size / 2 / 4096) * 4096));
  closeSync(fd);

  const httpPort = await findFreePort();
  const daemon = spawnDaemon(world, {
    configPath: writeConfig(world, { ...faultOverrides, http: { enabled: true, host: '127.0.0.1', port: httpPort } }),
  });
  onTestFailed(() => writeFileSync(join(world.dataDir, 'daemon.log'), daemon.rawOutput.join('\n')));
  const corrupt = await daemon.waitForLog((l) => l.code === 'STORE_CORRUPT');
  await daemon.waitForLog((l) => l.msg === 'wattshift started');
  const moved = readdirSync(dirname(dbPath)).filter((f) => f.startsWith(`${basename(dbPath)}.corrupt.`));
  expect(moved.length).toBeGreaterThanOrEqual(1);
  const view = await (await fetch(`http://127.0.0.1:${httpPort}/api/view`)).text();
  expect(view).toContain('STORE_CORRUPT');
  daemon.kill('SIGTERM');
  expect((await daemon.exited).code).toBe(0);

  // The next start finds a sound database and replaces nothing.
  const again = spawnDaemon(world);
  await again.waitForLog((l) => l.msg === 'wattshift started');
  expect(again.logs.filter((l) => l.code === 'STORE_CORRUPT')).toEqual([]);
  again.kill('SIGTERM');
  expect((await again.exited).code).toBe(0);
  report('corrupt-store', { damagedBytesAt: 'middle of the file', movedTo: moved[0], reason: String(corrupt['reason']).slice(0, 80) });
}, 120_000);
