/**
 * The TLS files `run` reads at start (the OCPP central system's certificate and key, the fleet
 * broker's CA, the home broker's) are checked by `check` and `run` before anything connects, with
 * their key path and line; a config naming a missing one exits 78. Before, `check` passed and
 * `run` failed with a bare ENOENT and exit 1, which systemd restarts every 10 s.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../src/config/load.js';
import { startCentralSystem } from '../src/devices/ocpp/start.js';
import { ManualClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { inProcess, tempConfig } from './fixtures/config/cli-helpers.js';

describe('TLS files in check and run', () => {
  it('a missing OCPP certificate and key: check names both with their lines, run exits 78 before it logs', async () => {
    const { dir, file } = tempConfig('ocpp:\n  tls: {cert: cert.pem, key: missing-key.pem}\nmqtt: {url: "mqtts://127.0.0.1", ca: missing-ca.pem}');
    writeFileSync(join(dir, 'cert.pem'), 'not checked for content here');
    const checked = await inProcess(['check', '--config', file]);
    expect(checked.code).toBe(78);
    expect(checked.stderr).toMatch(
      new RegExp(`ocpp\\.tls\\.key \\(line 7, column \\d+\\): cannot read ${join(dir, 'missing-key.pem')}: no such file`),
    );
    expect(checked.stderr).toMatch(/mqtt\.ca \(line 8, column \d+\): cannot read .*missing-ca\.pem: no such file/);
    expect(checked.stderr).not.toContain('ocpp.tls.cert');
    const run = await inProcess(['run', '--config', file]);
    expect(run.code).toBe(78);
    expect(run.stdout).toBe('');
  });

  it('a missing fleet broker CA is found by check, exit 78', async () => {
    const { file } = tempConfig(
      'upstream: {mode: fleet, brokerUrl: "mqtts://broker.example:8883", gatewayId: gw-1, username: gw-1, password: {env: FP}, locationId: home-1, ca: /nonexistent/fleet-ca.pem}',
    );
    const checked = await inProcess(['check', '--config', file], { FP: 'fleet-pass' });
    expect(checked.code).toBe(78);
    expect(checked.stderr).toMatch(/upstream\.ca \(line 6, column \d+\): cannot read \/nonexistent\/fleet-ca\.pem: no such file/);
  });

  it('a certificate gone between check and start is a config fault (CONFIG_INVALID), not a crash', async () => {
    const config = defaultConfig({ ocpp: { port: 0, tls: { cert: '/nonexistent/cert.pem', key: '/nonexistent/key.pem' } } });
    await expect(startCentralSystem(config, { clock: new ManualClock(0), logger: silentLogger() })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('cannot read ocpp.tls.cert /nonexistent/cert.pem: ENOENT'),
    });
  });
});
