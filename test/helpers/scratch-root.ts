/**
 * A throw-away root file system for installing a package for real: an overlay of this machine's
 * `/` in a private mount namespace, entered with chroot. Whatever a command changes lands in
 * `upper` (a directory of the test), never on the machine. Needs root and overlayfs.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ScratchRun {
  code: number;
  /** stdout and stderr together, in order. */
  out: string;
}

export class ScratchRoot {
  readonly upper: string;
  private readonly work: string;
  private readonly merged: string;

  constructor(dir: string) {
    this.upper = join(dir, 'upper');
    this.work = join(dir, 'work');
    this.merged = join(dir, 'merged');
    for (const d of [this.upper, this.work, this.merged]) mkdirSync(d, { recursive: true });
  }

  /** Runs `command` with `sh -c` as root inside the scratch root; earlier runs' changes are there. */
  run(command: string): ScratchRun {
    const m = this.merged;
    const enter =
      `mount -t overlay overlay -o lowerdir=/,upperdir=${this.upper},workdir=${this.work} ${m} ` +
      `&& for d in proc dev sys; do mount --bind /$d ${m}/$d; done && exec chroot ${m} sh -c "$1" 2>&1`;
    const r = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', enter, 'scratch-root', command], {
      encoding: 'utf8',
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8', DEBIAN_FRONTEND: 'noninteractive' },
    });
    return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
  }
}

/** Why a scratch root cannot be made on this machine, or null when it can. */
export function scratchRootUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'not root';
  const dir = mkdtempSync(join(tmpdir(), 'wattshift-overlay-probe-'));
  try {
    const r = new ScratchRoot(dir).run('true');
    return r.code === 0 ? null : `overlay mount failed: ${r.out.trim()}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
