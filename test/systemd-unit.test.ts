/**
 * The shipped unit as systemd reads it: `systemd-analyze verify` (Debian package `systemd`; no
 * running systemd needed) finds no unknown directive, bad value or missing program. The interpreter
 * path is this test's node, as the install's drop-in sets it when node is not /usr/bin/node.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers/temp-dir.js';

/** The unit as a file systemd-analyze can read, with this test's node as the interpreter. */
function unitFile(unitText: string): string {
  const file = join(tempDir('wattshift-unit-'), 'wattshift.service');
  writeFileSync(file, unitText.replaceAll('/usr/bin/node ', `${process.execPath} `));
  return file;
}

function verify(unitText: string): { status: number | null; output: string } {
  const r = spawnSync('systemd-analyze', ['verify', '--man=no', unitFile(unitText)], { encoding: 'utf8' });
  if (r.error) throw new Error(`systemd-analyze cannot run (apt-get install systemd): ${r.error.message}`);
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}

describe('systemd/wattshift.service', () => {
  const unit = readFileSync('systemd/wattshift.service', 'utf8');

  it('passes systemd-analyze verify without a message', () => {
    expect(verify(unit)).toEqual({ status: 0, output: '' });
  });

  it('(the check itself reports a bad directive and a missing program)', () => {
    expect(verify(unit.replace('Restart=on-failure', 'Restart=sometimes')).output).toMatch(/Failed to parse service restart specifier/);
    expect(verify(unit.replace(/^ExecStart=\S+/m, 'ExecStart=/usr/bin/no-such-node')).output).toMatch(/not executable/);
  });

  it("`sudo wattshift` runs the CLI as the service does: the wrapper gives systemd-run the unit's user, directories, credential and umask", () => {
    const wrapper = readFileSync('packaging/wattshift', 'utf8');
    const props = new Map([...wrapper.matchAll(/-p (\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
    props.set('User', /--uid=(\S+)/.exec(wrapper)?.[1] ?? '');
    props.set('Group', /--gid=(\S+)/.exec(wrapper)?.[1] ?? '');
    const unitValue = (key: string): string | undefined => new RegExp(`^${key}=(.*)$`, 'm').exec(unit)?.[1];
    const keys = [
      'User',
      'Group',
      'StateDirectory',
      'StateDirectoryMode',
      'ConfigurationDirectory',
      'ConfigurationDirectoryMode',
      'LoadCredential',
      'UMask',
      'SupplementaryGroups',
    ];
    expect(Object.fromEntries(keys.map((k) => [k, props.get(k)]))).toEqual(Object.fromEntries(keys.map((k) => [k, unitValue(k)])));
    // Every setting the wrapper passes is one the unit has.
    for (const [k, v] of props) expect(unitValue(k), k).toBe(v);
  });

  it('has the exposure docs/install.md states, by systemd-analyze security (offline: no running systemd needed)', () => {
    const r = spawnSync('systemd-analyze', ['security', '--offline=true', '--no-pager', unitFile(unit)], { encoding: 'utf8' });
    const measured = /Overall exposure level for wattshift\.service: ([\d.]+ \w+)/.exec(r.stdout)?.[1];
    const stated = /`systemd-analyze security`\s+exposure ([\d.]+ )"(\w+)"/.exec(readFileSync('docs/install.md', 'utf8'));
    // docs/performance.md's target: below 2.0.
    expect(Number(measured?.split(' ')[0])).toBeLessThan(2);
    expect(stated && `${stated[1]}${stated[2]}`).toBe(measured);
  });
});
