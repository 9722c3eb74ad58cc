/**
 * `npm run package` builds a .deb with dpkg-deb; installed into a scratch root (`dpkg -x`, no
 * maintainer scripts run on this machine) it holds the program with its production dependencies,
 * the `wattshift` command, the unit and the docs, and the command runs from there.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { suiteTempDir } from './helpers/temp-dir.js';

const dir = suiteTempDir('wattshift-deb-');
const root = join(dir, 'root');
let deb = '';

describe.skipIf(!existsSync('/usr/bin/dpkg-deb'))('the .deb', { timeout: 600_000 }, () => {
  beforeAll(() => {
    deb = execFileSync('bash', ['scripts/package-deb.sh', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').at(-1)!;
    execFileSync('dpkg', ['-x', deb, root]);
  }, 600_000);

  it('is named and described for this architecture, asks for Node 20.18, runs the host set-up after install', () => {
    const arch = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
    expect(deb).toBe(join(dir, `wattshift_0.1.0_${arch}.deb`));
    const field = (f: string): string => execFileSync('dpkg-deb', ['-f', deb, f], { encoding: 'utf8' }).trim();
    expect(field('Package')).toBe('wattshift');
    expect(field('Architecture')).toBe(arch);
    expect(field('Recommends')).toBe('nodejs (>= 20.18)');
    const control = join(dir, 'control');
    execFileSync('dpkg-deb', ['-e', deb, control]);
    expect(readFileSync(join(control, 'postinst'), 'utf8')).toContain('/opt/wattshift/packaging/setup-host.sh /opt/wattshift /lib/systemd/system/wattshift.service');
    for (const script of ['postinst', 'prerm', 'postrm']) execFileSync('sh', ['-n', join(control, script)]);
    execFileSync('sh', ['-n', join(root, 'opt/wattshift/packaging/setup-host.sh')]);
  });

  it('installs the unit, the command, the docs and the program with its production dependencies only', () => {
    expect(readFileSync(join(root, 'lib/systemd/system/wattshift.service'), 'utf8')).toBe(readFileSync('systemd/wattshift.service', 'utf8'));
    expect(statSync(join(root, 'usr/bin/wattshift')).mode & 0o777).toBe(0o755);
    for (const doc of ['README.md', 'mqtt.md', 'install.md', 'config.md', 'errors.md']) expect(existsSync(join(root, 'usr/share/doc/wattshift', doc)), doc).toBe(true);
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
    writeFileSync(config, [
      'version: 1',
      'site: {timezone: Europe/Oslo, priceArea: NO1, currency: NOK, locationLimitKw: 11}',
      'spark: {clientId: c, clientSecret: {env: SECRET}}',
      `storage: {path: ${join(dir, 'w.db')}}`,
    ].join('\n'));
    expect(execFileSync(wattshift, ['check'], { env: { ...env, WATTSHIFT_CONFIG: config, SECRET: 'x1234' }, encoding: 'utf8' })).toContain(`${config}: ok`);
  });
});
