/**
 * A hub instance as its own process (`wattshift hub --config`, as an operator runs it) on the
 * world's simulated clock, its API calls through a fault proxy in front of the sandbox, so a test
 * can SIGKILL it the moment the API has answered an upload and before the hub hears of it.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { HubConfig } from '../../src/hub/config.js';
import { repoRoot, type World } from '../helpers/daemon-harness.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';

export interface ChildHub {
  readonly proxy: FaultProxy;
  /** Its log lines (JSON), in order. */
  readonly logs: Record<string, unknown>[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): void;
}

export async function spawnChildHub(world: World, config: HubConfig, dir: string): Promise<ChildHub> {
  const origin = world.env.sandbox.authUrl;
  const proxy = await startFaultProxy(origin);
  const swap = (u: string): string => u.replace(origin, proxy.origin);
  const file = join(dir, `hub-${config.instanceId}.yaml`);
  writeFileSync(
    file,
    stringify({
      ...config,
      spark: {
        ...config.spark,
        baseUrl: swap(config.spark.baseUrl),
        authUrl: swap(config.spark.authUrl),
        forecastUrl: swap(config.spark.forecastUrl),
      },
    }),
    { mode: 0o600 },
  );
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'src/main.ts'), 'hub', '--config', file], {
    cwd: repoRoot,
    env: { ...process.env, WATTSHIFT_SIM_CLOCK: `${world.startMs},${world.realOriginMs},${world.speed}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  let buffer = '';
  let errors = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        errors += `${line}\n`;
      }
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const deadline = Date.now() + 60_000;
  while (!logs.some((l) => l['msg'] === 'hub instance started')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      await proxy.close();
      throw new Error(`hub ${config.instanceId} did not start: ${errors}${JSON.stringify(logs.slice(-5))}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    proxy,
    logs,
    exited,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
