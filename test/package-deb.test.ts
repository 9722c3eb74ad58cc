/**
 * `npm run package` builds a .deb with dpkg-deb; unpacked (`dpkg -x`) it holds the program with
 * its production dependencies, the `wattshift` command, the unit and the docs, and the command runs
 * from there. Then `dpkg -i` installs it for real, maintainer scripts included, into a scratch root
 * (an overlay of this machine's root, test/helpers/scratch-root.ts): the user, the directories, the
 * config, a second install that keeps the operator's edits, remove and purge.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ScratchRoot, scratchRootUnavailable } from './helpers/scratch-root.js';
import { suiteTempDir } from './helpers/temp-dir.js';

const dir = suiteTempDir('wattshift-deb-');
const root = join(dir, 'root');
let deb = '';
let hubDeb = '';
let simDeb = '';

describe.skipIf(!existsSync('/usr/bin/dpkg-deb'))('the .deb', { timeout: 600_000 }, () => {
  beforeAll(() => {
    // The hub's and the simulation's packages first, the gateway's last.
    [hubDeb, simDeb, deb] = execFileSync('bash', ['scripts/package-deb.sh', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
      .trim()
      .split('\n')
      .slice(-3) as [string, string, string];
    execFileSync('dpkg', ['-x', deb, root]);
  }, 600_000);

  it('is named and described for this architecture, asks for Node 20.18.1, runs the host set-up after install', () => {
    const arch = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
    expect(deb).toBe(join(dir, `wattshift_0.1.0_${arch}.deb`));
    const field = (f: string): string => execFileSync('dpkg-deb', ['-f', deb, f], { encoding: 'utf8' }).trim();
    expect(field('Package')).toBe('wattshift');
    expect(field('Architecture')).toBe(arch);
    expect(field('Recommends')).toBe('nodejs (>= 20.18.1)');
    const control = join(dir, 'control');
    execFileSync('dpkg-deb', ['-e', deb, control]);
    expect(readFileSync(join(control, 'postinst'), 'utf8')).toContain(
      '/opt/wattshift/packaging/setup-host.sh /opt/wattshift /usr/lib/systemd/system/wattshift.service',
    );
    for (const script of ['postinst', 'prerm', 'postrm']) execFileSync('sh', ['-n', join(control, script)]);
    for (const script of ['setup-host.sh', 'node-ok.sh']) execFileSync('sh', ['-n', join(root, 'opt/wattshift/packaging', script)]);
  });

  it('holds what runs and nothing more: a root entry of mode 0755, no source maps, the SQLite addon without its sources and build objects', () => {
    const entries = execFileSync('dpkg-deb', ['-c', deb], { encoding: 'utf8', maxBuffer: 64 << 20 })
      .trim()
      .split('\n');
    // dpkg gives the machine's / the mode of this entry.
    expect(entries[0]).toMatch(/^drwxr-xr-x root\/root +0 \S+ \S+ \.\/$/);
    const files = entries.filter((e) => !e.startsWith('d')).map((e) => e.split(/\s+/)[5]!);
    expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
    expect(files.filter((f) => f.startsWith('./opt/wattshift/node_modules/better-sqlite3/') && /\/(build|deps|src)\//.test(f))).toEqual([
      './opt/wattshift/node_modules/better-sqlite3/build/Release/better_sqlite3.node',
    ]);
    const platform = `${process.platform}-${process.arch}`;
    expect(files.filter((f) => f.includes('/prebuilds/') && !f.includes(`/prebuilds/${platform}/`))).toEqual([]);
    // The addon still loads from where the package puts it.
    const sqlite = join(root, 'opt/wattshift/node_modules/better-sqlite3');
    const probe = `const D = require(${JSON.stringify(sqlite)}); console.log(new D(':memory:').prepare('select 41 + 1 as x').get().x)`;
    expect(execFileSync(process.execPath, ['-e', probe], { encoding: 'utf8' }).trim()).toBe('42');
  });

  it('is ignored by git where `npm run package` puts it, the checkout', () => {
    expect(execFileSync('git', ['check-ignore', basename(deb)], { encoding: 'utf8' }).trim()).toBe(basename(deb));
  });

  it('installs the unit, the command, the docs and the program with its production dependencies only', () => {
    // Debian Policy 9.3 and DEP 17: a package's units live under /usr/lib; /lib is only an alias on a merged-/usr system.
    expect(readFileSync(join(root, 'usr/lib/systemd/system/wattshift.service'), 'utf8')).toBe(readFileSync('systemd/wattshift.service', 'utf8'));
    const entries = execFileSync('dpkg-deb', ['-c', deb], { encoding: 'utf8', maxBuffer: 64 << 20 })
      .trim()
      .split('\n')
      .map((e) => e.split(/\s+/)[5]!);
    expect(entries.filter((p) => p.startsWith('./lib/') || p.startsWith('./etc/systemd/'))).toEqual([]);
    expect(statSync(join(root, 'usr/bin/wattshift')).mode & 0o777).toBe(0o755);
    for (const doc of ['README.md', 'mqtt.md', 'install.md', 'config.md', 'errors.md'])
      expect(existsSync(join(root, 'usr/share/doc/wattshift', doc)), doc).toBe(true);
    const modules = join(root, 'opt/wattshift/node_modules');
    for (const dep of ['better-sqlite3', 'prom-client', 'pino', 'mqtt', 'zod']) expect(existsSync(join(modules, dep)), dep).toBe(true);
    for (const dev of ['vitest', 'typescript', 'playwright-core', 'esbuild', '@vitest']) expect(existsSync(join(modules, dev)), dev).toBe(false);
    expect(existsSync(join(root, 'opt/wattshift/profiles/generic-relay.yaml'))).toBe(true);
    expect(existsSync(join(root, 'opt/wattshift/tariffs/elvia.yaml'))).toBe(true);
  });

  it('the installed command runs, and gives commands the installed config', () => {
    const env = { ...process.env, WATTSHIFT_PREFIX: join(root, 'opt/wattshift'), WATTSHIFT_AS_ROOT: '1' };
    const wattshift = join(root, 'usr/bin/wattshift');
    expect(execFileSync(wattshift, ['version'], { env, encoding: 'utf8' })).toMatch(/^wattshift 0\.1\.0 \(node /);
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      [
        'version: 1',
        'site: {timezone: Europe/Oslo, priceArea: NO1, currency: NOK, locationLimitKw: 11}',
        'spark: {clientId: c, clientSecret: {env: SECRET}}',
        `storage: {path: ${join(dir, 'w.db')}}`,
      ].join('\n'),
    );
    expect(execFileSync(wattshift, ['check'], { env: { ...env, WATTSHIFT_CONFIG: config, SECRET: 'x1234' }, encoding: 'utf8' })).toContain(
      `${config}: ok`,
    );
  });

  it("leaves the hub and the simulation to packages of their own, which need this version of the gateway's and run from its command", () => {
    const arch = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
    expect(hubDeb).toBe(join(dir, `wattshift-hub_0.1.0_${arch}.deb`));
    expect(simDeb).toBe(join(dir, `wattshift-sim_0.1.0_${arch}.deb`));
    const filesOf = (d: string): string[] =>
      execFileSync('dpkg-deb', ['-c', d], { encoding: 'utf8', maxBuffer: 64 << 20 })
        .trim()
        .split('\n')
        .filter((e) => !e.startsWith('d'))
        .map((e) => e.split(/\s+/)[5]!);
    const env = { ...process.env, WATTSHIFT_PREFIX: join(root, 'opt/wattshift'), WATTSHIFT_AS_ROOT: '1' };
    const run = (args: string[]): ReturnType<typeof spawnSync> => spawnSync(join(root, 'usr/bin/wattshift'), args, { env, encoding: 'utf8' });
    const cases = [
      { part: 'hub', pkg: hubDeb, args: ['hub'], usage: 'wattshift hub: --config FILE is required' },
      { part: 'sim', pkg: simDeb, args: ['sim'], usage: 'wattshift sim' },
    ];
    for (const { part, pkg, args, usage } of cases) {
      expect(execFileSync('dpkg-deb', ['-f', pkg, 'Depends'], { encoding: 'utf8' }).trim()).toBe('wattshift (= 0.1.0)');
      const ofPart = (f: string): boolean => new RegExp(`^\\./opt/wattshift/dist/(${part}\\.js|chunks/${part}-)`).test(f);
      expect(filesOf(deb).filter(ofPart), `${part} in the gateway's package`).toEqual([]);
      expect(filesOf(pkg)).toContain(`./opt/wattshift/dist/${part}.js`);
      expect(filesOf(pkg).filter((f) => f.startsWith('./opt/') && !ofPart(f))).toEqual([]);
      const alone = run(args);
      expect(alone.status).toBe(1);
      expect(alone.stderr).toContain('PART_NOT_INSTALLED');
      expect(alone.stderr).toContain(basename(pkg).split('_')[0]);
      execFileSync('dpkg', ['-x', pkg, root]);
      const both = run(args);
      expect(both.status, String(both.stderr)).toBe(2);
      expect(both.stderr).toContain(usage);
    }
  });
});

// Root and overlayfs are needed to install for real; CI runs as root on a Debian machine.
const noScratch = existsSync('/usr/bin/dpkg-deb') ? scratchRootUnavailable() : 'no dpkg-deb';

describe.skipIf(noScratch !== null)(`dpkg -i into a scratch root${noScratch ? ` (skipped: ${noScratch})` : ''}`, { timeout: 600_000 }, () => {
  let scratch: ScratchRoot;
  const sh = (command: string): string => {
    const r = scratch.run(command);
    expect(r.code, `${command}\n${r.out}`).toBe(0);
    return r.out;
  };

  beforeAll(() => {
    scratch = new ScratchRoot(join(dir, 'scratch'));
  });

  it('installs the command on the PATH, the service user in dialout, the config and an empty secret only root reads', () => {
    expect(sh(`dpkg -i ${deb}`)).toContain('wattshift installed. Next: edit /etc/wattshift/config.yaml');
    expect(sh('command -v wattshift').trim()).toBe('/usr/bin/wattshift');
    expect(sh('id -nG wattshift').trim().split(' ').sort()).toEqual(['dialout', 'wattshift']);
    expect(sh('getent passwd wattshift')).toMatch(/^wattshift:x:\d+:\d+::\/var\/lib\/wattshift:\/usr\/sbin\/nologin$/m);
    const modes = sh(
      'stat -c "%n %a %U:%G" /etc/wattshift /etc/wattshift/config.yaml /etc/wattshift/credentials /etc/wattshift/credentials/spark-client-secret',
    )
      .trim()
      .split('\n');
    expect(modes).toEqual([
      '/etc/wattshift 750 root:wattshift',
      '/etc/wattshift/config.yaml 640 root:wattshift',
      '/etc/wattshift/credentials 700 root:root',
      '/etc/wattshift/credentials/spark-client-secret 600 root:root',
    ]);
    expect(readFileSync(join(scratch.upper, 'etc/wattshift/config.yaml'), 'utf8')).toBe(readFileSync('config.example.yaml', 'utf8'));
    expect(sh('wc -c < /etc/wattshift/credentials/spark-client-secret').trim()).toBe('0');
    expect(sh('systemd-analyze verify /usr/lib/systemd/system/wattshift.service')).toBe('');
    expect(sh('runuser -u nobody -- wattshift version')).toMatch(/^wattshift 0\.1\.0 \(node /);
    // A command that uses the service's state goes through systemd-run to the service's user as
    // root; where systemd is not running it says so. Version and help need no state: no word of it.
    expect(sh('wattshift version')).toMatch(/^wattshift 0\.1\.0 \(node /);
    expect(sh('wattshift --help 2>&1')).not.toContain('systemd is not running');
    if (!existsSync('/run/systemd/system')) {
      expect(sh('wattshift check 2>&1 || true')).toMatch(
        /^wattshift: systemd is not running here, so this runs as root, without the service's state directory and credentials\n/,
      );
    }
    // The machine's own root is untouched.
    expect(existsSync('/etc/wattshift')).toBe(false);
  });

  it('as the service user, with the state directory and credential systemd gives it, the example config checks ok', () => {
    sh('printf s3cret-from-test > /etc/wattshift/credentials/spark-client-secret');
    // What the unit's StateDirectory= and LoadCredential= provide (systemd-run does it for `sudo wattshift`).
    sh(
      'install -d -o wattshift -g wattshift -m 700 /var/lib/wattshift /tmp/creds && install -o wattshift -m 400 /etc/wattshift/credentials/spark-client-secret /tmp/creds/',
    );
    const out = sh('runuser -u wattshift -- env STATE_DIRECTORY=/var/lib/wattshift CREDENTIALS_DIRECTORY=/tmp/creds wattshift check');
    expect(out).toContain('/etc/wattshift/config.yaml: ok');
  });

  it("a second install keeps the operator's config and secret and adds no second user", () => {
    sh('echo "# the operator\'s edit" >> /etc/wattshift/config.yaml');
    sh(`dpkg -i ${deb}`);
    expect(sh('tail -n 1 /etc/wattshift/config.yaml').trim()).toBe("# the operator's edit");
    expect(sh('cat /etc/wattshift/credentials/spark-client-secret')).toBe('s3cret-from-test');
    expect(sh('grep -c "^wattshift:" /etc/passwd').trim()).toBe('1');
  });

  it('a node outside /usr/bin gets a drop-in for the unit; one too old is named, with where to read on', () => {
    // A Node 18 where a NodeSource or tarball node would be: first on the PATH, not /usr/bin/node.
    sh('printf \'#!/bin/sh\\ncase "$1" in --version) echo v18.19.0;; *) exit 1;; esac\\n\' > /usr/local/bin/node && chmod 755 /usr/local/bin/node');
    const out = sh('PATH=/usr/local/bin:/usr/bin:/bin /var/lib/dpkg/info/wattshift.postinst configure 0.1.0');
    expect(out).toContain(
      "wattshift: Node.js v18.19.0 is too old; it needs 20.18.1 or newer (Debian 12's nodejs is 18: see /usr/share/doc/wattshift/install.md)",
    );
    const dropIn = sh('cat /etc/systemd/system/wattshift.service.d/node.conf').split('\n');
    expect(dropIn.slice(1, 4)).toEqual([
      '[Service]',
      'ExecStart=',
      expect.stringMatching(
        /^ExecStart=\/usr\/local\/bin\/node --max-semi-space-size=1 .* \/opt\/wattshift\/dist\/main\.js run --config \$\{CONFIGURATION_DIRECTORY\}\/config\.yaml$/,
      ),
    ]);
    sh('rm /usr/local/bin/node');
    expect(
      sh(
        '/var/lib/dpkg/info/wattshift.postinst configure 0.1.0 && test ! -e /etc/systemd/system/wattshift.service.d/node.conf && echo no-drop-in',
      ).trim(),
    ).toBe('no-drop-in');
  });

  it('remove keeps the config; purge removes it and keeps the database directory', () => {
    // No warning about the unit's directory: on a merged-/usr system where no other package ships
    // under /lib/systemd (Debian 13), dpkg cannot remove a /lib/systemd/system it thinks is the package's.
    expect(sh('dpkg -r wattshift 2>&1')).not.toMatch(/warning: .*systemd/);
    expect(sh('ls /etc/wattshift/config.yaml; test ! -e /usr/bin/wattshift && test ! -e /opt/wattshift/dist && echo gone')).toContain('gone');
    expect(sh('dpkg -P wattshift 2>&1')).not.toMatch(/warning: .*systemd/);
    expect(sh('test ! -e /etc/wattshift && test -d /var/lib/wattshift && echo purged').trim()).toBe('purged');
  });
});

/** The system calls a `SystemCallFilter=` group stands for, by this machine's systemd. */
function syscallGroup(group: string): string[] {
  const lines = execFileSync('systemd-analyze', ['syscall-filter', group], { encoding: 'utf8' }).split('\n').slice(1);
  return lines
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .flatMap((n) => (n.startsWith('@') ? syscallGroup(n) : [n]));
}

describe.skipIf(!existsSync('/usr/bin/systemd-analyze'))('the unit the package ships', () => {
  it("lets node take a memory protection key: Debian 13's node asks for one at start, and a filtered call kills it with SIGSYS", () => {
    const allowed = new Set<string>();
    for (const [, deny, names] of readFileSync('systemd/wattshift.service', 'utf8').matchAll(/^SystemCallFilter=(~?)(.*)$/gm)) {
      const calls = names!
        .trim()
        .split(/\s+/)
        .flatMap((n) => (n.startsWith('@') ? syscallGroup(n) : [n]));
      for (const call of calls) {
        if (deny) allowed.delete(call);
        else allowed.add(call);
      }
    }
    expect(allowed.has('openat')).toBe(true);
    expect(['pkey_alloc', 'pkey_free', 'pkey_mprotect'].filter((c) => !allowed.has(c))).toEqual([]);
  });
});
