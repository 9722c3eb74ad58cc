/**
 * `npm run bench`: runs every benchmark one after the other (so they do not share the CPU), prints
 * each one's output, a short table, and as its last line one JSON object:
 * {"rssMb","rssSlowMb","rssGrowthMbDay2to7","cpuMsPerSimHour","startupMs","diskBytesPerDay","dbMbPerYear",
 *  "loopDelayP99Ms","loopDelayMaxMs","webhookRps","webhookP99Ms","systemdExposure", ...}. A benchmark that cannot run gives nulls.
 * The event-loop delay and `rssSlowMb` come from the daemon bench's slow run (4 simulated hours at 120×).
 * Nothing is asserted: the figures are for the README and for tools to compare.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

/** Runs a benchmark, echoing its output indented; resolves with its last JSON line (or null). */
function run(name, command, args, timeoutMs) {
  return new Promise((resolveRun) => {
    process.stdout.write(`\n== ${name}: ${[command, ...args].join(' ')}\n`);
    const started = Date.now();
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let last = null;
    let buffered = '';
    const onOut = (chunk) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) handle(line);
    };
    const handle = (line) => {
      if (line.trim() === '') return;
      process.stdout.write(`   ${line}\n`);
      const t = line.trim();
      if (t.startsWith('{')) {
        try {
          last = JSON.parse(t);
        } catch {
          /* not the figures line */
        }
      }
    };
    child.stdout.on('data', onOut);
    child.stderr.on('data', (chunk) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        // npm's own notices say nothing about the benchmark.
        if (line.trim() !== '' && !line.startsWith('npm warn')) process.stdout.write(`   ! ${line}\n`);
      }
    });
    const timer = setTimeout(() => {
      process.stdout.write(`   ! ${name} took longer than ${Math.round(timeoutMs / 1000)} s: stopped\n`);
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (buffered) handle(buffered);
      const secs = ((Date.now() - started) / 1000).toFixed(0);
      if (code !== 0) process.stdout.write(`   ! ${name} exited with ${code} after ${secs} s\n`);
      else process.stdout.write(`   (${secs} s)\n`);
      resolveRun(code === 0 ? last : null);
    });
  });
}

const has = (script) => existsSync(join(root, 'scripts', script));
const min = 60_000;

const systemd = await run('systemd hardening', 'sh', ['scripts/bench-systemd.sh'], 2 * min);
const store = has('bench-store.ts') ? await run('store', npx, ['tsx', 'scripts/bench-store.ts'], 10 * min) : null;
const webhook = has('bench-webhook.ts') ? await run('webhook receiver', npx, ['tsx', 'scripts/bench-webhook.ts'], 5 * min) : null;
if (!has('bench-webhook.ts')) process.stdout.write('\n== webhook receiver: scripts/bench-webhook.ts is missing; figures are null\n');
const planner = has('bench-planner.ts') ? await run('planner (quick)', npx, ['tsx', 'scripts/bench-planner.ts', '--quick'], 3 * min) : null;
const daemon = await run('daemon (a simulated week, then 4 h at 120×)', npx, ['tsx', 'scripts/bench-daemon.ts'], 15 * min);

const num = (obj, key) => (obj && typeof obj[key] === 'number' && Number.isFinite(obj[key]) ? obj[key] : null);
const figures = {
  rssMb: num(daemon, 'rssMb'),
  rssSlowMb: num(daemon, 'rssSlowMb'),
  rssGrowthMbDay2to7: num(daemon, 'rssGrowthMbDay2to7'),
  cpuMsPerSimHour: num(daemon, 'cpuMsPerSimHour'),
  startupMs: num(daemon, 'startupMs'),
  diskBytesPerDay: num(daemon, 'diskBytesPerDay'),
  dbMbPerYear: num(store, 'dbMbPerYear'),
  loopDelayP99Ms: num(daemon, 'loopDelayP99Ms'),
  loopDelayMaxMs: num(daemon, 'loopDelayMaxMs'),
  webhookRps: num(webhook, 'webhookRps'),
  webhookP99Ms: num(webhook, 'webhookP99Ms'),
  systemdExposure: num(systemd, 'systemdExposure'),
};

const show = (v, unit = '') => (v === null ? 'n/a' : `${v}${unit}`);
const kib = (v) => (v === null ? 'n/a' : `${(v / 1024).toFixed(0)} KiB`);
const rows = [
  ['RSS, steady state (day 2–7)', show(figures.rssMb, ' MiB'), '≤ 80 MiB'],
  ['RSS, 4 h at 120× (second half)', show(figures.rssSlowMb, ' MiB'), '≤ 80 MiB'],
  ['RSS growth day 2 → 7', show(figures.rssGrowthMbDay2to7, ' MiB/day'), '≈ 0'],
  ['CPU per simulated hour', show(figures.cpuMsPerSimHour, ' ms'), ''],
  ['startup to ready (median of 3)', show(figures.startupMs, ' ms'), ''],
  ['disk written per simulated day', kib(figures.diskBytesPerDay), '≤ 3 MB'],
  ['database after a year (store)', show(figures.dbMbPerYear, ' MB'), '≤ 10 MB'],
  ['event-loop delay p99 (4 h at 120×)', show(figures.loopDelayP99Ms, ' ms'), '≤ 10 ms'],
  ['event-loop delay max (4 h at 120×)', show(figures.loopDelayMaxMs, ' ms'), '≤ 50 ms'],
  ['webhook throughput', show(figures.webhookRps, ' req/s'), ''],
  ['webhook p99 ack latency', show(figures.webhookP99Ms, ' ms'), ''],
  ['systemd exposure level', show(figures.systemdExposure), '< 2.0'],
];
process.stdout.write('\n== summary\n');
for (const [label, value, target] of rows) {
  process.stdout.write(`   ${label.padEnd(34)} ${value.padStart(16)}   ${target ? `target ${target}` : ''}\n`);
}
const details = {
  daemon: daemon ? Object.fromEntries(Object.entries(daemon).filter(([k]) => !(k in figures))) : null,
  storeDiskBytesPerDay: num(store, 'diskBytesPerDay'),
  planner: planner ?? null,
};
process.stdout.write(`${JSON.stringify({ ...figures, ...details })}\n`);
