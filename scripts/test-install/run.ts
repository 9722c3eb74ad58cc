/**
 * `npm run test:install`: the installer's walk of docs/install.md in a machine that boots. Builds
 * this checkout's .deb and the previous release's (from git), makes a Debian 13 root once
 * (make-root.sh, cached), writes it with the packages, the home's config and the walk (walk.sh and
 * its unit) into a disk image, boots it under QEMU (TCG) and follows the walk's report on the second
 * serial port: a pass or fail per step, with its time. Every wait is bounded. Needs root.
 *   TEST_INSTALL_PREVIOUS=<git ref>   the previous release (default: the parent of the newest
 *                                     commit that changed the package)
 *   TEST_INSTALL_TIMEOUT_MIN=<n>      the whole VM run's bound (default 60)
 *   TEST_INSTALL_DEB=<file>           walk this .deb (and the wattshift-sim package beside it) instead of building one (a rerun of the walk)
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { followWalk, type WalkResult } from './follow.js';

const src = join(import.meta.dirname, '../..');
const here = import.meta.dirname;
const options = z
  .object({
    TEST_INSTALL_PREVIOUS: z.string().min(1).optional(),
    TEST_INSTALL_TIMEOUT_MIN: z.coerce.number().positive().default(60),
    TEST_INSTALL_DEB: z.string().endsWith('.deb').optional(),
    XDG_CACHE_HOME: z.string().min(1).optional(),
  })
  .parse(process.env);
const cache = join(options.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'wattshift-test-install');
const work = mkdtempSync(join(tmpdir(), 'wattshift-test-install-'));
const timings: { what: string; seconds: number }[] = [];

const sh = (cmd: string, args: string[], cwd = src): string =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 }).trim();
function timed<T>(what: string, f: () => T): T {
  const t0 = performance.now();
  console.log(`== ${what}`);
  const r = f();
  timings.push({ what, seconds: (performance.now() - t0) / 1000 });
  return r;
}

function preflight(): void {
  if (process.getuid?.() !== 0) throw new Error('run as root: debootstrap and the image need it');
  for (const tool of ['debootstrap', 'qemu-system-x86_64', 'mkfs.ext4', 'dpkg-deb', 'git']) {
    try {
      sh('sh', ['-c', `command -v ${tool}`]);
    } catch {
      throw new Error(`${tool} is missing: apt-get install -y debootstrap qemu-system-x86 e2fsprogs dpkg git`);
    }
  }
  // The walk runs the docs' commands as the docs print them: each must still be in install.md.
  const docs = readFileSync(join(src, 'docs/install.md'), 'utf8');
  const walk = readFileSync(join(here, 'walk.sh'), 'utf8');
  const commands = [...walk.matchAll(/\bdoc '([^']+)'/g)].map((m) => m[1]!);
  const missing = commands.filter((c) => !docs.includes(c));
  if (missing.length > 0) throw new Error(`walk.sh runs commands docs/install.md does not give: ${missing.join('; ')}`);
}

/** The commit the previous package is built from: the parent of the newest change to the package. */
function previousCommit(): string {
  if (options.TEST_INSTALL_PREVIOUS) return sh('git', ['rev-parse', `${options.TEST_INSTALL_PREVIOUS}^{commit}`]);
  const last = sh('git', ['log', '-1', '--format=%H', 'HEAD', '--', 'scripts/package-deb.sh', 'packaging', 'systemd']);
  return sh('git', ['rev-parse', `${last}^`]);
}

/** The previous release's .deb, versioned below this one (`<its version>~git<commit>`); cached by commit. */
function previousDeb(commit: string): string {
  const cached = join(cache, `previous-${commit}.deb`);
  if (existsSync(cached)) return cached;
  const tree = join(work, 'previous');
  sh('git', ['worktree', 'add', '--detach', tree, commit]);
  try {
    symlinkSync(join(src, 'node_modules'), join(tree, 'node_modules'));
    const out = join(work, 'previous-out');
    mkdirSync(out);
    const built = sh('bash', [join(tree, 'scripts/package-deb.sh'), out], tree)
      .split('\n')
      .at(-1)!;
    const unpacked = join(work, 'previous-deb');
    sh('dpkg-deb', ['-R', built, unpacked]);
    const control = join(unpacked, 'DEBIAN/control');
    writeFileSync(control, readFileSync(control, 'utf8').replace(/^Version: (.*)$/m, `Version: $1~git${commit.slice(0, 10)}`));
    mkdirSync(cache, { recursive: true });
    sh('dpkg-deb', ['--root-owner-group', '--build', unpacked, cached]);
    rmSync(out, { recursive: true });
    return cached;
  } finally {
    sh('git', ['worktree', 'remove', '--force', tree]);
  }
}

/** The disk image: the cached root with the walk, its unit, the packages and the config in it. */
function makeImage(root: string, debs: { current: string; previous: string }): string {
  const stage = join(work, 'stage');
  sh('cp', ['-a', root, stage]);
  const payload = join(stage, 'usr/local/lib/wattshift-walk');
  mkdirSync(payload, { recursive: true });
  copyFileSync(join(here, 'walk.sh'), join(payload, 'walk.sh'));
  sh('chmod', ['0755', join(payload, 'walk.sh')]);
  copyFileSync(join(here, 'config.yaml'), join(payload, 'config.yaml'));
  copyFileSync(debs.current, join(payload, basename(debs.current)));
  // The sandbox and the simulated tank the walk runs beside the daemon: the package built with the gateway's.
  const sim = join(dirname(debs.current), basename(debs.current).replace(/^wattshift_/, 'wattshift-sim_'));
  copyFileSync(sim, join(payload, basename(sim)));
  copyFileSync(debs.previous, join(payload, 'wattshift_previous.deb'));
  copyFileSync(join(here, 'wattshift-walk.service'), join(stage, 'etc/systemd/system/wattshift-walk.service'));
  symlinkSync('/etc/systemd/system/wattshift-walk.service', join(stage, 'etc/systemd/system/multi-user.target.wants/wattshift-walk.service'));
  const image = join(work, 'disk.img');
  sh('mkfs.ext4', ['-q', '-F', '-L', 'wattshift-vm', '-d', stage, image, '4G']);
  rmSync(stage, { recursive: true, force: true });
  return image;
}

async function boot(root: string, image: string): Promise<WalkResult> {
  const boot = join(root, 'boot');
  const kernel = join(
    boot,
    readdirSync(boot).find((f) => f.startsWith('vmlinuz-'))!,
  );
  const initrd = join(
    boot,
    readdirSync(boot).find((f) => f.startsWith('initrd.img-'))!,
  );
  const consoleLog = join(work, 'console.log');
  const walkLog = join(work, 'walk.log');
  writeFileSync(walkLog, '');
  // The console on the first serial port, the walk's report on the second; no network is needed.
  const qemu = spawn(
    'qemu-system-x86_64',
    [
      '-accel',
      'tcg',
      '-m',
      '2048',
      '-smp',
      '2',
      '-kernel',
      kernel,
      '-initrd',
      initrd,
      '-append',
      'root=/dev/vda rw console=ttyS0 systemd.show_status=auto',
      '-drive',
      `file=${image},if=virtio,format=raw`,
      '-nic',
      'none',
      '-display',
      'none',
      '-monitor',
      'none',
      '-serial',
      `file:${consoleLog}`,
      '-serial',
      `file:${walkLog}`,
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  return followWalk({ qemu, walkLog, consoleLog, overallMs: options.TEST_INSTALL_TIMEOUT_MIN * 60_000 });
}

async function main(): Promise<number> {
  preflight();
  console.log(`logs and the image: ${work}`);
  const current =
    options.TEST_INSTALL_DEB ??
    timed('build the .deb (npm run package)', () =>
      sh('bash', [join(src, 'scripts/package-deb.sh'), work])
        .split('\n')
        .at(-1)!,
    );
  const commit = previousCommit();
  const previous = timed(`build the previous .deb (git worktree of ${commit.slice(0, 10)})`, () => previousDeb(commit));
  const root = timed('the Debian 13 root (debootstrap, cached)', () => sh('bash', [join(here, 'make-root.sh'), cache]));
  const image = timed('the disk image (mkfs.ext4 -d)', () => makeImage(root, { current, previous }));
  const t0 = performance.now();
  console.log('== boot the VM and walk docs/install.md');
  const result = await boot(root, image);
  timings.push({ what: 'the VM: boots, walk, reboot, power off', seconds: (performance.now() - t0) / 1000 });

  console.log('\n== times');
  for (const t of timings) console.log(`${t.seconds.toFixed(1).padStart(8)} s  ${t.what}`);
  console.log('\n== the walk');
  for (const s of result.steps)
    console.log(`${s.pass ? 'PASS' : 'FAIL'} ${s.seconds.toFixed(1).padStart(7)} s  ${s.name}${s.why ? `  (${s.why})` : ''}`);
  const ok = result.problem === null && result.steps.length > 0 && result.steps.every((s) => s.pass);
  if (!ok) {
    if (result.problem) console.log(`\nFAIL: ${result.problem}`);
    console.log(`serial console: ${join(work, 'console.log')}\nwalk report:    ${join(work, 'walk.log')}`);
    return 1;
  }
  rmSync(image, { force: true });
  console.log(`\nPASS: ${result.steps.length} steps (logs in ${work})`);
  return 0;
}

process.exitCode = await main().catch((err: unknown) => {
  console.error(`test:install: ${err instanceof Error ? err.message : String(err)}\nlogs: ${work}`);
  return 1;
});
