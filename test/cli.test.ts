/** The real CLI, spawned: exit codes and messages for good and bad input, and signals. */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, inProcess, start, tempConfig } from './fixtures/config/cli-helpers.js';

/** Spawning tsx is slow on a loaded machine: generous limits, no timing assertions. */
const slow = 120_000;

/** The same dispatcher main.ts calls, in process (fast): output and exit code. */
describe('wattshift CLI', { timeout: slow }, () => {
  it('--help lists the commands', async () => {
    const r = await inProcess(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}run +run the daemon/m);
    expect(r.stdout).toMatch(/^ {2}check +validate a config file/m);
    expect(r.stdout).toMatch(/^ {2}version /m);
  });

  it('version prints the package and node versions', async () => {
    const r = await cli(['version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(`wattshift 0.1.0 (node ${process.versions.node})`);
  });

  it('rejects an unknown command and an unknown option with exit 2', async () => {
    const a = await inProcess(['frobnicate']);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('unknown command "frobnicate"');
    const b = await inProcess(['check', '--conifg', 'x']);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain("Unknown option '--conifg'");
  });

  it('check accepts config.example.yaml (credentials deferred outside systemd)', async () => {
    const r = await inProcess(['check', '--config', 'config.example.yaml']);
    expect(r.stderr).toContain('warning: spark.clientSecret: credential "spark-client-secret" not checked');
    expect(r.stdout).toContain('config.example.yaml: ok (8 devices');
    expect(r.code).toBe(0);
  });

  it('check: a missing config file names the file, exit 78', async () => {
    const r = await cli(['check', '--config', '/nonexistent/config.yaml']);
    expect(r.code).toBe(78);
    expect(r.stderr.split('\n')[0]).toBe('wattshift: CONFIG_INVALID: cannot read config file /nonexistent/config.yaml: no such file');
  });

  it('check: malformed YAML gives the line, exit 78', async () => {
    const { file } = tempConfig('devices: [ {id: x\n');
    const r = await inProcess(['check', '--config', file]);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(`wattshift: CONFIG_INVALID: ${file}: invalid config`);
    expect(r.stderr).toMatch(/^ {2}line \d+, column \d+: YAML syntax error/m);
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });

  it('check: a wrong type and an unknown key are reported with their key paths, exit 78', async () => {
    const { file } = tempConfig('log: {level: "loud", colour: blue}\n');
    const r = await inProcess(['check', '--config', file]);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('  log.level (line 6, column 14): expected one of "fatal", "error", "warn", "info", "debug", "trace"');
    expect(r.stderr).toContain('  log.colour (line 6, column 22): unknown key');
    expect(r.stderr).toContain('hint: fix each key named above, then run check again');
  });

  it('check: a URL with the wrong scheme names the allowed ones', async () => {
    const { file } = tempConfig('mqtt: {url: "http://127.0.0.1:1883"}\n');
    const r = await inProcess(['check', '--config', file]);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('mqtt.url (line 6, column 13): expected an mqtt://, mqtts://, ws:// or wss:// URL');
  });

  it('check: an unreadable secret file names the key and the file, exit 78', async () => {
    const { file, dir } = tempConfig('mqtt: {url: "mqtt://127.0.0.1:9", password: {file: nope.txt}}\n');
    const r = await inProcess(['check', '--config', file]);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('wattshift: CONFIG_SECRET_UNREADABLE');
    expect(r.stderr).toContain(`mqtt.password (line 6, column 35): cannot read secret file ${join(dir, 'nope.txt')}: no such file`);
  });

  it('check and run: a database path in a missing directory, exit 78', async () => {
    const { file, dir } = tempConfig();
    writeFileSync(file, `${(await import('node:fs')).readFileSync(file, 'utf8').replace(/storage: .*/, `storage: {path: ${dir}/missing/w.db}`)}`);
    const checked = await inProcess(['check', '--config', file]);
    expect(checked.code).toBe(78);
    expect(checked.stderr).toContain(`storage.path (line 5, column 17): the database directory ${dir}/missing does not exist`);
    const ran = await cli(['run', '--config', file]);
    expect(ran.code).toBe(78);
    expect(ran.stderr).toContain(`storage.path (line 5, column 17): the database directory ${dir}/missing does not exist`);
  });

  it.skipIf(process.getuid?.() === 0)('check: a read-only database directory, exit 78', async () => {
    const { file, dir } = tempConfig();
    const ro = join(dir, 'ro');
    mkdirSync(ro);
    chmodSync(ro, 0o555);
    writeFileSync(
      file,
      `version: 1\nsite: {timezone: UTC, priceArea: FI, currency: EUR, locationLimitKw: 17}\nspark: {clientId: c, clientSecret: {file: client-secret}}\nstorage: {path: ro/w.db}\n`,
    );
    const r = await inProcess(['check', '--config', file]);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(`the database directory ${ro} is not writable`);
  });

  it('check reports in one pass what run would meet: unknown profile, missing point, a shared output, cross-field rules beside schema errors', async () => {
    const devices = [
      'modbus: {main: {type: tcp, host: 127.0.0.1}}',
      'reports: {retryMinS: 600, retryMaxS: 60}',
      'log: {level: loud}',
      'devices:',
      '  - {id: tank, kind: hotWaterTank, switch: {type: modbus, bus: main, profile: generic-relai}, model: {volumeL: 200, elementKw: 3}}',
      '  - {id: tank2, kind: hotWaterTank, switch: {type: modbus, bus: main, profile: generic-relay}, thermometer: {type: modbus, bus: main, profile: eastron-sdm120, point: temperatureC}, model: {volumeL: 200, elementKw: 3}}',
      '  - {id: car, kind: evCharger, charger: {type: modbus, bus: nowhere, profile: abb-terra-ac}, model: {capacityKwh: 60, minCurrentA: 20, maxCurrentA: 16}}',
      '  - {id: boiler, kind: boiler}',
    ].join('\n');
    const { file } = tempConfig(`${devices}\n`);
    const r = await inProcess(['check', '--config', file]);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('log.level (line 8, column 14): expected one of');
    expect(r.stderr).toMatch(/reports\.retryMinS \(line 7, column \d+\): retryMinS is above retryMaxS/);
    expect(r.stderr).toMatch(
      /devices\[0\]\.switch\.profile \(line 10, column \d+\): unknown Modbus profile "generic-relai" \(did you mean "generic-relay"\?\) \(built-in profiles: .*generic-relay/,
    );
    expect(r.stderr).toMatch(/devices\[1\]\.thermometer\.profile \(line 11, column \d+\): profile eastron-sdm120 has no point "temperatureC"/);
    expect(r.stderr).toMatch(/devices\[2\]\.charger\.bus \(line 12, column \d+\): unknown Modbus bus "nowhere"/);
    expect(r.stderr).toMatch(/devices\[2\]\.model\.minCurrentA \(line 12, column \d+\): minCurrentA \(20\) is above maxCurrentA \(16\)/);
    expect(r.stderr).toContain('devices[3].kind');
    expect(r.stderr).toMatch(/devices\[1\]\.switch \(line 11, column \d+\): unit 1 on Modbus bus "main" is already driven by device "tank"/);
    // A second tank is planned on its own (no problem), but not on the same relay as the first.
    expect(r.stderr).not.toMatch(/devices\[1\]\.kind/);
    expect(r.stderr).toContain('invalid config (9 problems)');
  });

  it('run exits 78 on a profile that check reports, before it logs or connects', async () => {
    const { file } = tempConfig(
      'modbus: {main: {type: tcp, host: 127.0.0.1}}\ndevices:\n  - {id: tank, kind: hotWaterTank, switch: {type: modbus, bus: main, profile: generic-relai}, model: {volumeL: 200, elementKw: 3}}\n',
    );
    const checked = await inProcess(['check', '--config', file]);
    expect(checked.code).toBe(78);
    const ran = await inProcess(['run', '--config', file]);
    expect(ran.code).toBe(78);
    expect(ran.stdout).toBe('');
    expect(ran.stderr).toContain('devices[0].switch.profile (line 8');
    expect(ran.stderr).toContain('unknown Modbus profile "generic-relai"');
  });

  it('run: an invalid config exits 78 before logging anything', async () => {
    const { file } = tempConfig('bogus: 1\n');
    const r = await cli(['run', '--config', file]);
    expect(r.code).toBe(78);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('  bogus (line 6, column 1): unknown key');
  });

  it('run: SIGTERM stops gracefully with exit 0', async () => {
    const { file } = tempConfig();
    const p = start(['run', '--config', file]);
    await p.waitFor('"msg":"running"');
    p.child.kill('SIGTERM');
    const r = await p.done;
    expect(r.code).toBe(0);
    const msgs = r.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(msgs).toContain('running');
    expect(msgs.indexOf('stopping')).toBeGreaterThan(msgs.indexOf('running'));
    expect(msgs.at(-1)).toBe('stopped');
  });
});

describe('graceful stop under real signals (runDaemon)', { timeout: slow }, () => {
  const script = 'test/fixtures/config/slow-stop.ts';

  it('a second signal exits at once with 128 + signal number', async () => {
    const p = start(['60000', '60000'], {}, script);
    await p.waitFor('READY');
    p.child.kill('SIGTERM');
    await p.waitFor('"msg":"stopping"');
    p.child.kill('SIGTERM');
    const r = await p.done;
    expect(r.code).toBe(143);
    expect(r.stdout).toContain('second signal: exiting at once');
  });

  it('SIGINT twice exits with 130', async () => {
    const p = start(['60000', '60000'], {}, script);
    await p.waitFor('READY');
    p.child.kill('SIGINT');
    await p.waitFor('"msg":"stopping"');
    p.child.kill('SIGINT');
    expect((await p.done).code).toBe(130);
  });

  it('a stop that misses its deadline exits 1', async () => {
    const p = start(['60000', '300'], {}, script);
    await p.waitFor('READY');
    p.child.kill('SIGTERM');
    const r = await p.done;
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('graceful stop missed its deadline');
  });
});
