/**
 * A Mosquitto broker for fleet tests, run with the config the hub renders (`mosquittoConf`, the
 * one docs/fleet.md documents) and the files the hub renders from its registry: the gateways'
 * listener (`url`) and the hub instances' listener (`hubUrl`), plain MQTT on free loopback ports
 * instead of TLS, plus log lines. `reload()` makes the broker read changed files (SIGHUP), as an
 * operator does after revoking a gateway. With `persistence`, the broker keeps its sessions and
 * queued messages in its directory across `halt()` and `resume()` (a restart on the same ports).
 * With `packetLimit: false` the broker has no `max_packet_size` (a broker set up otherwise than
 * documented), to show what the hub's own client limit holds off.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mosquittoConf } from '../../src/hub/broker-conf.js';
import { freePort, mosquittoBinary, waitForPort } from './mosquitto.js';

export interface FleetBrokerFiles {
  passwd: string;
  acl: string;
}

export interface FleetBroker {
  /** The gateways' listener. */
  url: string;
  /** The hub instances' listener. */
  hubUrl: string;
  /** The broker's process id (for the benchmark's samples; -1 while halted). */
  readonly pid: number;
  /** Replaces the password and ACL files and makes the broker read them. */
  reload(files: FleetBrokerFiles): Promise<void>;
  /** The broker's own log so far. */
  output(): string;
  /** Stops the broker process (SIGTERM: a persistent broker saves its sessions), keeping its files and port. */
  halt(): Promise<void>;
  /** Starts the halted broker again on the same port. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/** The rendered config, less its `max_packet_size` line when `drop` is set. */
function withoutPacketLimit(conf: string, drop: boolean): string {
  return drop
    ? conf
        .split('\n')
        .filter((line) => !line.startsWith('max_packet_size '))
        .join('\n')
    : conf;
}

export async function startFleetBroker(
  files: FleetBrokerFiles,
  options: { persistence?: boolean; packetLimit?: boolean } = {},
): Promise<FleetBroker> {
  const dir = mkdtempSync(join(tmpdir(), 'wattshift-fleet-broker-'));
  const paths = { passwd: join(dir, 'passwd'), acl: join(dir, 'acl') };
  const write = (f: FleetBrokerFiles): void => {
    writeFileSync(paths.passwd, f.passwd, { mode: 0o600 });
    writeFileSync(paths.acl, f.acl, { mode: 0o600 });
  };
  write(files);
  const port = await freePort();
  let hubPort = await freePort();
  while (hubPort === port) hubPort = await freePort();
  writeFileSync(
    join(dir, 'mosquitto.conf'),
    [
      withoutPacketLimit(
        mosquittoConf({
          gateways: { port, host: '127.0.0.1' },
          hub: { port: hubPort, host: '127.0.0.1' },
          files: paths,
          ...(options.persistence ? { persistenceDir: dir } : {}),
        }),
        options.packetLimit === false,
      ),
      "# The test's own: saved every second (a SIGKILL loses at most that), everything logged.",
      ...(options.persistence ? ['autosave_interval 1'] : []),
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
    await waitForPort(hubPort, c, () => log);
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
    hubUrl: `mqtt://127.0.0.1:${hubPort}`,
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
