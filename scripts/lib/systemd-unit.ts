/**
 * The node flags and environment of systemd/wattshift.service, so that benchmarks and the daemon
 * tests run the daemon the way the installed service does.
 */
import { readFileSync } from 'node:fs';

function readUnit(): string {
  return readFileSync(new URL('../../systemd/wattshift.service', import.meta.url), 'utf8');
}

/** The flags between the node binary and the script in ExecStart. */
export function unitNodeFlags(): string[] {
  const exec = /^ExecStart=\S*node((?:\s+--\S+)*)\s/m.exec(readUnit());
  if (!exec) throw new Error('systemd/wattshift.service: no ExecStart running node');
  return (exec[1] ?? '').split(/\s+/).filter(Boolean);
}

/** The unit's `Environment=NAME=value` lines (malloc tuning and the like). */
export function unitEnvironment(): Record<string, string> {
  return Object.fromEntries([...readUnit().matchAll(/^Environment=([A-Z_]+)=(\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]));
}
