/** A small tmpfs for full-disk scenarios (root with mount rights), and a way to fill it. */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { stopAll } from './daemon-harness.js';

export interface SmallTmpfs {
  readonly mountPoint: string;
  /** Why the tmpfs could not be mounted (the scenario is then skipped), or null. */
  readonly skipReason: string | null;
  /** Unmounts (lazily) and removes the mount point. */
  remove(): void;
}

/** Mounts a tmpfs of `size` (e.g. `3m`) on a fresh temp dir; reports SKIPPED on stderr when it cannot. */
export function mountSmallTmpfs(name: string, size = '3m'): SmallTmpfs {
  const mountPoint = mkdtempSync(join(tmpdir(), `wattshift-${name}-`));
  let skipReason: string | null = null;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', mountPoint], { stdio: 'pipe' });
  } catch (err) {
    skipReason = `cannot mount a tmpfs here (${String((err as { stderr?: Buffer }).stderr ?? err).trim()}); needs root with mount rights`;
    process.stderr.write(`${name}: SKIPPED: ${skipReason}\n`);
  }
  return {
    mountPoint,
    skipReason,
    remove() {
      if (skipReason === null) execFileSync('umount', ['-l', mountPoint], { stdio: 'pipe' });
      rmSync(mountPoint, { recursive: true, force: true });
    },
  };
}

/** A tmpfs for a suite of daemon scenarios: after them, every daemon and world stops and it goes. */
export function suiteTmpfs(name: string): SmallTmpfs {
  const tmpfs = mountSmallTmpfs(name);
  afterAll(async () => {
    await stopAll();
    tmpfs.remove();
  }, 30_000);
  return tmpfs;
}

/** Writes until the file system says ENOSPC; returns the bytes written. */
export function fillUp(path: string): number {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  let written = 0;
  try {
    for (;;) written += writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  return written;
}
