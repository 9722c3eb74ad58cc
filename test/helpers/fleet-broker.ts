/**
 * A Mosquitto broker for fleet tests: plain MQTT on a free loopback port, no anonymous access,
 * the password and ACL files given (the hub renders them from its registry), and `reload()` to
 * make the broker read changed files (SIGHUP), as an operator does after revoking a gateway.
 * With `persistence`, the broker keeps its sessions and queued messages in its directory across
 * `halt()` and `resume()` (a restart on the same port), as the production layout does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, mosquittoBinary, waitForPort } from './mosquitto.js';

export interface FleetBroker {
  url: string;
  /** The broker's process id (for the benchmark's samples; -1 while halted). */
  readonly pid: number;
  /** Replaces the password and ACL files and makes the broker read them. */
  reload(files: { passwd: string; acl: string }): Promise<void>;
  /** The broker's own log so far. */
  output(): string;
  /** Stops the broker process (SIGTERM: a persistent broker saves its sessions), keeping its files and port. */
  halt(): Promise<void>;
  /** Starts the halted broker again on the same port. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

export async function startFleetBroker(files: { passwd: string; acl: string }, options: { persistence?: boolean } = {}): Promise<FleetBroker> {
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
      ...(options.persistence ? ['persistence true', `persistence_location ${dir}/`, 'autosave_interval 1'] : ['persistence false']),
      'log_type error',
      'log_type warning',
      'log_type notice',
      'log_type information',
      'log_dest stderr',
      ...(process.getuid?.() === 0 ? ['user root'] : []),
      '',
    ].join('\n'),
  );
  let log = '';
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    const c = spawn(mosquittoBinary, ['-c', join(dir, 'mosquitto.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
    c.stdout?.on('data', (d: Buffer) => (log += d.toString()));
    c.stderr?.on('data', (d: Buffer) => (log += d.toString()));
    child = c;
    await waitForPort(port, c, () => log);
  };
  const halt = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    c.kill('SIGTERM');
    await exited;
  };
  await launch();
  return {
    url: `mqtt://127.0.0.1:${port}`,
    get pid() {
      return child?.pid ?? -1;
    },
    async reload(next) {
      write(next);
      const before = log.length;
      child?.kill('SIGHUP');
      // Mosquitto logs the reload; wait for it so the test does not race the new files.
      const deadline = Date.now() + 5_000;
      while (!/reload/i.test(log.slice(before)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    },
    output: () => log,
    halt,
    async resume() {
      if (!child) await launch();
    },
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
