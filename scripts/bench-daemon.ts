/**
 * Daemon benchmark: the built daemon as its own process with a tank and an EV charger, against the
 * sandbox and simulated devices. Startup-to-ready is the median of 3 starts on the real clock;
 * then a simulated week on an accelerated clock (WATTSHIFT_SIM_CLOCK), sampling the process's
 * /proc status, stat and io. Prints figures (nothing is asserted); the last line is one JSON object.
 *
 *   npm run build && npx tsx scripts/bench-daemon.ts [--speed 4000] [--days 7] [--starts 3] [--keep]
 *
 * Steady state is simulated day 2 to the end. Disk writes are given two ways: `write_bytes` (what
 * the kernel accounted as dirtied pages; page rewrites within the writeback delay count once, so on
 * an accelerated clock this is a lower bound) and logical file writes (`wchar` minus the bytes the
 * daemon sent to its peers through counting relays and to stdout/stderr), an upper bound.
 *
 * Event-loop delay (node:perf_hooks' monitorEventLoopDelay, loaded into the daemon with
 * `--import scripts/lib/loop-delay-probe.mjs`) is taken in a run of its own at a low speed
 * (`--delay-speed`, 120×: a real second carries two simulated minutes, a 15-minute slot takes 7.5 s)
 * over `--delay-hours` simulated hours from the ready line, so start-up (loading the bundle, opening
 * the store) is left out. At 4000× a real second carries 66 simulated minutes of the daemon's work,
 * so the loop is busy most of the time and the delay measures the wait for a core, not how long one
 * task holds the loop. The week's own figure at its speed is printed beside it.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { acceleratedClock, systemClock } from '../src/clock.js';
import { localAt } from '../src/demo/environment.js';
import { startBenchWorld } from './lib/bench-world.js';
import { spawnDaemon } from './lib/daemon-process.js';
import { loopDelayProbeFlags, readLoopDelay, type LoopDelay } from './lib/loop-delay.js';
import { unitEnvironment, unitNodeFlags } from './lib/systemd-unit.js';
import { median, round, sampleProc, slope, type ProcSample } from './lib/proc-sample.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const MIB = 1024 * 1024;

const { values } = parseArgs({
  options: {
    speed: { type: 'string', default: '4000' },
    days: { type: 'string', default: '7' },
    starts: { type: 'string', default: '3' },
    'sample-ms': { type: 'string', default: '250' },
    /** Seconds the last real-clock start keeps running for its RSS. */
    'idle-s': { type: 'string', default: '30' },
    keep: { type: 'boolean', default: false },
    /** Speed and length of the run that measures event-loop delay (`--delay-hours 0`: none). */
    'delay-speed': { type: 'string', default: '120' },
    'delay-hours': { type: 'string', default: '4' },
    /** NODE_OPTIONS for the daemon process (e.g. --max-old-space-size=64), to see what RSS is made of. */
    'node-options': { type: 'string' },
    /**
     * Flags for node itself, space-separated (V8 flags are refused in NODE_OPTIONS). Default: the
     * flags of the systemd unit's ExecStart, so the figures are those of the installed service;
     * `--node-flags=` runs without any.
     */
    'node-flags': { type: 'string' },
    /** Runs the daemon with --trace-gc and reports the heap left after each full GC (leak check without GC timing). */
    'trace-gc': { type: 'boolean', default: false },
  },
});
const speed = Number(values.speed);
const days = Number(values.days);
const starts = Number(values.starts);
const sampleMs = Number(values['sample-ms']);
const idleSeconds = Number(values['idle-s']);
const delaySpeed = Number(values['delay-speed']);
const delayHours = Number(values['delay-hours']);
const nodeOptions = values['node-options'] ?? '';
const nodeFlags = values['node-flags'] === undefined ? unitNodeFlags() : values['node-flags'].split(/\s+/).filter(Boolean);
const nodeArgs = [...nodeFlags, ...loopDelayProbeFlags, ...(values['trace-gc'] ? ['--trace-gc'] : [])];
const nodeEnv: NodeJS.ProcessEnv = {
  ...(values['node-flags'] === undefined ? unitEnvironment() : {}),
  ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
};
const dirs: string[] = [];
const tmp = (prefix: string): string => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};

let idleRssMb: number | null = null;

async function measureStartup(): Promise<number[]> {
  const dataDir = tmp('wattshift-bench-start-');
  const world = await startBenchWorld({ clock: systemClock, startMs: Date.now(), dataDir });
  const times: number[] = [];
  try {
    for (let i = 0; i < starts; i++) {
      const d = spawnDaemon({
        configPath: world.configPath,
        env: { ...world.daemonEnv, ...nodeEnv },
        nodeArgs,
        ...(values.keep ? { logPath: join(dataDir, 'daemon.log') } : {}),
      });
      try {
        times.push(await d.ready);
        // The last start stays up on the real clock: its RSS shows the footprint without the
        // allocation pressure of an accelerated week.
        if (i === starts - 1) {
          const rss: number[] = [];
          for (let k = 0; k < idleSeconds; k++) {
            await new Promise((r) => setTimeout(r, 1000));
            const s = sampleProc(d.pid);
            if (s && k >= idleSeconds / 2) rss.push(s.rssBytes / MIB);
          }
          idleRssMb = rss.length > 0 ? round(median(rss)) : null;
        }
      } finally {
        await d.stop();
      }
    }
  } finally {
    await world.close();
  }
  return times;
}

interface WeekSample extends ProcSample {
  simMs: number;
  socketBytes: number;
  pipeBytes: number;
}

function fileBytes(path: string): number {
  return ['', '-wal', '-shm'].reduce((n, suffix) => n + (existsSync(path + suffix) ? statSync(path + suffix).size : 0), 0);
}

/** Bytes per table and index (dbstat) and row counts, largest first. */
function tableSizes(path: string): { name: string; bytes: number; rows?: number }[] {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC').all() as {
      name: string;
      bytes: number;
    }[];
    const tables = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name));
    return rows.map((r) => (tables.has(r.name) ? { ...r, rows: (db.prepare(`SELECT COUNT(*) AS n FROM "${r.name}"`).get() as { n: number }).n } : r));
  } catch {
    return [];
  } finally {
    db.close();
  }
}

// Midnight in Oslo on a January Monday: winter prices, heating every day.
const weekStartMs = localAt(Date.UTC(2026, 0, 12, 12), 0, 0);

/**
 * The event-loop delay of a fresh daemon over `hours` simulated hours from its ready line, at
 * `atSpeed`, and its RSS median over the second half (allocation at a pace nearer the real clock's).
 */
async function runLoopDelay(atSpeed: number, hours: number): Promise<{ delay: LoopDelay | undefined; rssMb: number | null }> {
  const dataDir = tmp('wattshift-bench-delay-');
  const realOriginMs = Date.now();
  const clock = acceleratedClock(weekStartMs, atSpeed, realOriginMs);
  const world = await startBenchWorld({ clock, startMs: weekStartMs, dataDir });
  const d = spawnDaemon({
    configPath: world.configPath,
    env: { ...world.daemonEnv, ...nodeEnv, WATTSHIFT_SIM_CLOCK: `${weekStartMs},${realOriginMs},${atSpeed}` },
    nodeArgs,
  });
  try {
    await d.ready;
    await readLoopDelay(d);
    const endMs = clock.nowMs() + hours * HOUR_MS;
    process.stdout.write(`event-loop delay: ${hours} simulated hours at ${atSpeed}× from the ready line\n`);
    const halfMs = clock.nowMs() + (hours * HOUR_MS) / 2;
    const rss: number[] = [];
    while (clock.nowMs() < endMs) {
      await new Promise((r) => setTimeout(r, 1000));
      const sample = sampleProc(d.pid);
      if (!sample) throw new Error(`daemon exited during the delay run:\n${d.tail().join('\n')}`);
      if (clock.nowMs() >= halfMs) rss.push(sample.rssBytes / MIB);
    }
    return { delay: await readLoopDelay(d), rssMb: rss.length > 0 ? round(median(rss)) : null };
  } finally {
    await d.stop();
    await world.close();
  }
}

async function runWeek() {
  const dataDir = tmp('wattshift-bench-week-');
  const startMs = weekStartMs;
  const realOriginMs = Date.now();
  const clock = acceleratedClock(startMs, speed, realOriginMs);
  const world = await startBenchWorld({ clock, startMs, dataDir });
  const d = spawnDaemon({
    configPath: world.configPath,
    env: { ...world.daemonEnv, ...nodeEnv, WATTSHIFT_SIM_CLOCK: `${startMs},${realOriginMs},${speed}` },
    nodeArgs,
    ...(values.keep ? { logPath: join(dataDir, 'daemon.log') } : {}),
  });
  const samples: WeekSample[] = [];
  const endMs = startMs + days * DAY_MS;
  let lastDay = -1;
  let loopDelay: LoopDelay | undefined;
  try {
    await d.ready;
    // Starts the probe over: what came before the ready line is start-up.
    await readLoopDelay(d);
    process.stdout.write(`daemon ready at simulated +${round((clock.nowMs() - startMs) / HOUR_MS)} h; running to day ${days} at ${speed}×\n`);
    while (clock.nowMs() < endMs) {
      await new Promise((r) => setTimeout(r, sampleMs));
      const s = sampleProc(d.pid);
      if (!s) throw new Error(`daemon exited during the week:\n${d.tail().join('\n')}`);
      const simMs = clock.nowMs();
      samples.push({ ...s, simMs, socketBytes: world.socketBytesFromDaemon(), pipeBytes: d.stdoutBytes() + d.stderrBytes() });
      const day = Math.floor((simMs - startMs) / DAY_MS);
      if (day !== lastDay && day < days) {
        lastDay = day;
        process.stdout.write(
          `  day ${day + 1}: RSS ${round(s.rssBytes / MIB)} MiB, CPU ${round(s.cpuMs / 1000)} s, write_bytes ${round(s.writeBytes / 1024)} KiB\n`,
        );
      }
    }
    loopDelay = await readLoopDelay(d);
  } finally {
    const code = await d.stop();
    if (code !== 0) process.stdout.write(`daemon stopped with exit code ${code}\n`);
    await world.close();
  }
  const steady = samples.filter((s) => s.simMs >= startMs + DAY_MS);
  const first = steady[0];
  const last = steady.at(-1);
  if (!first || !last || steady.length < 10) throw new Error(`too few steady-state samples (${steady.length}); is the machine overloaded?`);
  const steadyDays = (last.simMs - first.simMs) / DAY_MS;
  const logical = (s: WeekSample): number => s.wchar - s.socketBytes - s.pipeBytes;
  const wholeDays = (last.simMs - startMs) / DAY_MS;
  const simOf = (atMs: number): number => startMs + (atMs - realOriginMs) * speed;
  const gcs = d
    .heapAfterGc()
    .map((g) => ({ simMs: simOf(g.atMs), mb: g.mb }))
    .filter((g) => g.simMs >= startMs + DAY_MS);
  const gcFigures =
    gcs.length > 1
      ? {
          fullGcs: gcs.length,
          heapAfterGcMb: round(median(gcs.map((g) => g.mb))),
          heapAfterGcGrowthMbDay: round(slope(gcs.map((g) => ({ x: (g.simMs - startMs) / DAY_MS, y: g.mb }))), 2),
        }
      : {};
  return {
    samples: samples.length,
    rssMb: round(median(steady.map((s) => s.rssBytes / MIB))),
    rssMaxMb: round(Math.max(...samples.map((s) => s.rssBytes / MIB))),
    rssGrowthMbDay2to7: round(slope(steady.map((s) => ({ x: (s.simMs - startMs) / DAY_MS, y: s.rssBytes / MIB }))), 2),
    cpuMsPerSimHour: round((last.cpuMs - first.cpuMs) / ((last.simMs - first.simMs) / HOUR_MS)),
    cpuUtilPct: round((100 * (last.cpuMs - first.cpuMs)) / (last.atMs - first.atMs)),
    blockWriteBytesPerDay: Math.round((last.writeBytes - first.writeBytes) / steadyDays),
    fileWriteBytesPerDay: Math.round((logical(last) - logical(first)) / steadyDays),
    blockWriteBytesWholeRun: last.writeBytes,
    logBytesPerDay: Math.round((last.pipeBytes - first.pipeBytes) / steadyDays),
    socketBytesPerDay: Math.round((last.socketBytes - first.socketBytes) / steadyDays),
    simDays: round(wholeDays, 2),
    dbBytesEnd: fileBytes(world.dbPath),
    tables: tableSizes(world.dbPath),
    warnLines: d.levels().get('warn') ?? 0,
    errorLines: (d.levels().get('error') ?? 0) + (d.levels().get('fatal') ?? 0),
    weekLoopDelayP99Ms: loopDelay?.p99Ms ?? null,
    weekLoopDelayMaxMs: loopDelay?.maxMs ?? null,
    ...gcFigures,
  };
}

try {
  const startup = starts > 0 ? await measureStartup() : [];
  const startupMs = startup.length > 0 ? round(median(startup)) : null;
  process.stdout.write(
    `startup to ready (real clock): ${startup.map((t) => `${Math.round(t)} ms`).join(', ')}; median ${startupMs} ms; RSS on the real clock after ${idleSeconds} s: ${idleRssMb} MiB\n`,
  );
  const week = await runWeek();
  const slow = delayHours > 0 ? await runLoopDelay(delaySpeed, delayHours) : undefined;
  const delay = slow?.delay;
  const kib = (n: number): string => `${round(n / 1024)} KiB`;
  process.stdout.write(
    [
      `steady state (day 2–${days}, ${week.samples} samples at ${speed}×):`,
      `  RSS median ${week.rssMb} MiB (max ${week.rssMaxMb}), growth ${week.rssGrowthMbDay2to7} MiB/day`,
      `  CPU ${week.cpuMsPerSimHour} ms per simulated hour (${week.cpuUtilPct}% of one core at this speed)`,
      `  disk writes per simulated day: block ${kib(week.blockWriteBytesPerDay)}, logical file writes ${kib(week.fileWriteBytesPerDay)}`,
      `  event-loop delay after start-up at ${speed}× (mostly the wait for a core): p99 ${week.weekLoopDelayP99Ms} ms, max ${week.weekLoopDelayMaxMs} ms`,
      `  stdout log ${kib(week.logBytesPerDay)}/day, sent to peers ${kib(week.socketBytesPerDay)}/day; ${week.warnLines} warn, ${week.errorLines} error lines`,
      ...(week.heapAfterGcMb !== undefined
        ? [`  V8 heap after full GC: median ${week.heapAfterGcMb} MB over ${week.fullGcs} GCs, growth ${week.heapAfterGcGrowthMbDay} MB/day`]
        : []),
      `  database at the end: ${kib(week.dbBytesEnd)} (${week.tables
        .slice(0, 5)
        .map((t) => `${t.name} ${kib(t.bytes)}${t.rows !== undefined ? ` ${t.rows} rows` : ''}`)
        .join(', ')})`,
      `event-loop delay after start-up, ${delayHours} h at ${delaySpeed}×: p50 ${delay?.p50Ms} ms, p99 ${delay?.p99Ms} ms, max ${delay?.maxMs} ms; RSS median of the second half ${slow?.rssMb} MiB`,
    ].join('\n') + '\n',
  );
  const { tables: _tables, samples: _samples, ...figures } = week;
  void _tables;
  void _samples;
  const diskBytesPerDay = Math.max(week.blockWriteBytesPerDay, week.fileWriteBytesPerDay);
  process.stdout.write(
    `${JSON.stringify({ ...figures, loopDelayP50Ms: delay?.p50Ms ?? null, loopDelayP99Ms: delay?.p99Ms ?? null, loopDelayMaxMs: delay?.maxMs ?? null, delaySpeed, rssSlowMb: slow?.rssMb ?? null, startupMs, startupRunsMs: startup.map(Math.round), rssRealClockMb: idleRssMb, diskBytesPerDay, speed, nodeOptions: [...nodeArgs, nodeOptions].filter(Boolean).join(' ') || null })}\n`,
  );
} finally {
  if (values.keep) process.stderr.write(`kept ${dirs.join(' ')}\n`);
  else for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
