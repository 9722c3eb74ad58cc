/**
 * Runs the built daemon (`node dist/main.js run --config FILE`) as a child process for the
 * benchmarks: counts what it writes to stdout/stderr, notices the `wattshift started` log line,
 * keeps the last log lines for diagnosis, and stops it with SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const daemonEntry = join(repoRoot, 'dist', 'main.js');

export interface DaemonProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** process.hrtime at spawn, ms. */
  readonly spawnedAtMs: number;
  /** Resolves with the ms from spawn to the ready line (`wattshift started`); rejects if the process exits first. */
  readonly ready: Promise<number>;
  /** Resolves with the exit code (or 128 + signal). */
  readonly exited: Promise<number>;
  stdoutBytes(): number;
  stderrBytes(): number;
  /** Count of log lines by level name (warn, error, ...). */
  levels(): Map<string, number>;
  /** Heap after each full GC (printed by node --trace-gc), MB, with the real time it was seen. */
  heapAfterGc(): { atMs: number; mb: number }[];
  /** The last log lines (stdout and stderr), for diagnosis. */
  tail(): string[];
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number>;
}

const levelNames: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** The log line each command writes once it is up. */
const readyMessages = { run: 'wattshift started', hub: 'hub instance started' } as const;

export function spawnDaemon(options: {
  configPath: string;
  /** `run` (default): the daemon; `hub`: one fleet hub instance. */
  command?: keyof typeof readyMessages;
  env?: NodeJS.ProcessEnv;
  /** Copy of the daemon's stdout and stderr. */
  logPath?: string;
  /** Flags for node itself (e.g. --trace-gc). */
  nodeArgs?: string[];
}): DaemonProcess {
  const command = options.command ?? 'run';
  if (!existsSync(daemonEntry)) throw new Error(`${daemonEntry} is missing: run \`npm run build\` first`);
  const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;
  const spawnedAtMs = nowMs();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), daemonEntry, command, '--config', options.configPath], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const copy = options.logPath ? createWriteStream(options.logPath, { flags: 'a', mode: 0o600 }) : undefined;
  if (copy) {
    child.stdout!.pipe(copy, { end: false });
    child.stderr!.pipe(copy, { end: false });
    child.on('close', () => copy.end());
  }
  let outBytes = 0;
  let errBytes = 0;
  const lines: string[] = [];
  const levels = new Map<string, number>();
  const gcs: { atMs: number; mb: number }[] = [];
  const keep = (line: string): void => {
    lines.push(line);
    if (lines.length > 40) lines.shift();
  };
  child.stdout!.on('data', (c: Buffer) => (outBytes += c.length));
  child.stderr!.on('data', (c: Buffer) => (errBytes += c.length));
  let markReady: (ms: number) => void = () => undefined;
  let failReady: (err: Error) => void = () => undefined;
  const ready = new Promise<number>((res, rej) => {
    markReady = res;
    failReady = rej;
  });
  ready.catch(() => undefined);
  createInterface({ input: child.stdout! }).on('line', (line) => {
    keep(line);
    let msg: unknown;
    let level: unknown;
    const gc = /Mark-Compact.*-> ([\d.]+) \([\d.]+\) MB/.exec(line);
    if (gc) gcs.push({ atMs: Date.now(), mb: Number(gc[1]) });
    try {
      ({ msg, level } = JSON.parse(line) as { msg?: unknown; level?: unknown });
    } catch {
      return;
    }
    const name = typeof level === 'number' ? (levelNames[level] ?? String(level)) : String(level);
    levels.set(name, (levels.get(name) ?? 0) + 1);
    if (msg === readyMessages[command]) markReady(nowMs() - spawnedAtMs);
  });
  createInterface({ input: child.stderr! }).on('line', (line) => keep(`stderr: ${line}`));
  const exited = new Promise<number>((res) => {
    child.on('exit', (code, signal) => {
      const c = code ?? (signal === 'SIGKILL' ? 137 : signal === 'SIGTERM' ? 143 : 1);
      failReady(new Error(`daemon exited with ${c} before it was ready:\n${lines.join('\n')}`));
      res(c);
    });
  });
  return {
    child,
    pid: child.pid!,
    spawnedAtMs,
    ready,
    exited,
    stdoutBytes: () => outBytes,
    stderrBytes: () => errBytes,
    levels: () => levels,
    heapAfterGc: () => gcs,
    tail: () => [...lines],
    async stop(graceMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
