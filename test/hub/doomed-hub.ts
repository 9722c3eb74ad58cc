/**
 * A hub instance in its own process (`wattshift hub --config FILE`, as an operator runs it) whose
 * API calls never get an answer (a listener that accepts and stays silent): it claims outbox rows
 * and hangs on the upload until the test kills it with SIGKILL, leaving its claims behind.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { FleetWorld } from './fleet-world.js';

const repoRoot = join(import.meta.dirname, '..', '..');

export async function spawnDoomedHub(world: FleetWorld, instanceId: string): Promise<{ kill(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const silent = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  const port = (silent.address() as { port: number }).port;
  const dir = mkdtempSync(join(tmpdir(), 'wattshift-doomed-hub-'));
  const config = world.hubConfig();
  const silentUrl = `http://127.0.0.1:${port}`;
  const { instanceId: _ignored, ...rest } = config;
  void _ignored;
  writeFileSync(
    join(dir, 'hub.yaml'),
    stringify({
      ...rest,
      instanceId,
      spark: { ...config.spark, baseUrl: `${silentUrl}/energy-coordination/v1`, authUrl: silentUrl, forecastUrl: `${silentUrl}/smart/v1` },
    }),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'src/main.ts'), 'hub', '--config', join(dir, 'hub.yaml')], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + 30_000;
  while (!output.includes('hub instance started')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`hub ${instanceId} did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  let killed: Promise<void> | undefined;
  return {
    kill: () =>
      (killed ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise<void>((r) => child.once('exit', () => r()));
          child.kill('SIGKILL');
          await exited;
        }
        for (const s of sockets) s.destroy();
        await new Promise<void>((r) => silent.close(() => r()));
        rmSync(dir, { recursive: true, force: true });
      })()),
  };
}
