/**
 * A Mosquitto broker for fleet tests: plain MQTT on a free loopback port, no anonymous access,
 * the password and ACL files given (the hub renders them from its registry), and `reload()` to
 * make the broker read changed files (SIGHUP), as an operator does after revoking a gateway.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, mosquittoBinary, waitForPort } from './mosquitto.js';

export interface FleetBroker {
  url: string;
  /** The broker's process id (for the benchmark's samples). */
  pid: number;
  /** Replaces the password and ACL files and makes the broker read them. */
  reload(files: { passwd: string; acl: string }): Promise<void>;
  /** The broker's own log so far. */
  output(): string;
  stop(): Promise<void>;
}

export async function startFleetBroker(files: { passwd: string; acl: string }): Promise<FleetBroker> {
  const dir = mkdtempSync(join(tmpdir(), 'wattshift-fleet-broker-'));
  const write = (f: { passwd: string; acl: string }): void => {
    writeFileSync(join(dir, 'passwd'), f.passwd, { mode: 0o600 });
    writeFileSync(join(dir, 'acl'), f.acl, { mode: 0o600 });
  };
  write(files);
  const port = await freePort();
  writeFileSync(
    join(dir, 'mosquitto.conf'),
    [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous false',
      `password_file ${join(dir, 'passwd')}`,
      `acl_file ${join(dir, 'acl')}`,
      'persistence false',
      'log_type error',
      'log_type warning',
      'log_type notice',
      'log_type information',
      'log_dest stderr',
      ...(process.getuid?.() === 0 ? ['user root'] : []),
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(mosquittoBinary, ['-c', join(dir, 'mosquitto.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  await waitForPort(port, child, () => log);
  return {
    url: `mqtt://127.0.0.1:${port}`,
    pid: child.pid!,
    async reload(next) {
      write(next);
      const before = log.length;
      child.kill('SIGHUP');
      // Mosquitto logs the reload; wait for it so the test does not race the new files.
      const deadline = Date.now() + 5_000;
      while (!/reload/i.test(log.slice(before)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    },
    output: () => log,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
