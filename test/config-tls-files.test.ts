/**
 * The TLS files `run` reads at start (the OCPP central system's certificate and key, the fleet
 * broker's CA, the home broker's) are checked by `check` and `run` before anything connects, with
 * their key path and line; a config naming a missing one exits 78. Before, `check` passed and
 * `run` failed with a bare ENOENT and exit 1, which systemd restarts every 10 s.
 */
import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/dispatch.js';
import { defaultConfig } from '../src/config/load.js';
import { startCentralSystem } from '../src/devices/ocpp/start.js';
import { ManualClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { tempDir } from './helpers/temp-dir.js';

async function wattshift(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { stdout: (l) => out.push(l), stderr: (l) => err.push(l), env: { CS: 's3cret', FP: 'fleet-pass' }, signals: new EventEmitter() as never });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('TLS files in check and run', () => {
  it('a missing OCPP certificate and key: check names both with their lines, run exits 78 before it logs', async () => {
    const dir = tempDir('wattshift-tls-');
    const file = join(dir, 'config.yaml');
    writeFileSync(join(dir, 'cert.pem'), 'not checked for content here');
    writeFileSync(file, [
      'version: 1',
      'site: {timezone: Europe/Oslo, priceArea: NO1, currency: NOK, locationLimitKw: 11}',
      'spark: {clientId: c, clientSecret: {env: CS}}',
      'storage: {path: ":memory:"}',
      'ocpp:',
      '  tls: {cert: cert.pem, key: missing-key.pem}',
      'mqtt: {url: "mqtts://127.0.0.1", ca: missing-ca.pem}',
    ].join('\n'));
    const checked = await wattshift(['check', '--config', file]);
    expect(checked.code).toBe(78);
    expect(checked.stderr).toMatch(new RegExp(`ocpp\\.tls\\.key \\(line 6, column \\d+\\): cannot read ${join(dir, 'missing-key.pem')}: no such file`));
    expect(checked.stderr).toMatch(/mqtt\.ca \(line 7, column \d+\): cannot read .*missing-ca\.pem: no such file/);
    expect(checked.stderr).not.toContain('ocpp.tls.cert');
    const run = await wattshift(['run', '--config', file]);
    expect(run.code).toBe(78);
    expect(run.stdout).toBe('');
  });

  it('a missing fleet broker CA is found by check, exit 78', async () => {
    const file = join(tempDir('wattshift-tls-'), 'config.yaml');
    writeFileSync(file, [
      'version: 1',
      'site: {timezone: Europe/Oslo, priceArea: NO1, currency: NOK, locationLimitKw: 11}',
      'storage: {path: ":memory:"}',
      'upstream: {mode: fleet, brokerUrl: "mqtts://broker.example:8883", gatewayId: gw-1, username: gw-1, password: {env: FP}, locationId: home-1, ca: /nonexistent/fleet-ca.pem}',
    ].join('\n'));
    const checked = await wattshift(['check', '--config', file]);
    expect(checked.code).toBe(78);
    expect(checked.stderr).toMatch(/upstream\.ca \(line 4, column \d+\): cannot read \/nonexistent\/fleet-ca\.pem: no such file/);
  });

  it('a certificate gone between check and start is a config fault (CONFIG_INVALID), not a crash', async () => {
    const config = defaultConfig({ ocpp: { port: 0, tls: { cert: '/nonexistent/cert.pem', key: '/nonexistent/key.pem' } } });
    await expect(startCentralSystem(config, { clock: new ManualClock(0), logger: silentLogger() }))
      .rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining('cannot read ocpp.tls.cert /nonexistent/cert.pem: ENOENT') });
  });
});
