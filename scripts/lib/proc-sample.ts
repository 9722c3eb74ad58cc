/**
 * Samples a process from /proc (Linux only): resident memory, CPU time and I/O counters. For the
 * benchmarks; nothing here is used by the daemon.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface ProcSample {
  /** Real time of the sample (Date.now()). */
  atMs: number;
  rssBytes: number;
  /** utime + stime, ms. */
  cpuMs: number;
  /** Bytes the kernel accounted as written to the block layer (page dirtied). */
  writeBytes: number;
  /** Bytes passed to write(2)-family calls: files, pipes and sockets. */
  wchar: number;
}

let ticksPerSecond: number | undefined;

/** The kernel's clock ticks per second (`getconf CLK_TCK`, 100 on almost every Linux). */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

function field(text: string, name: string): number {
  const m = new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** One sample of `pid`, or undefined when the process is gone. */
export function sampleProc(pid: number | 'self'): ProcSample | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3 (state).
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(rest[11]);
    const stime = Number(rest[12]);
    return {
      atMs: Date.now(),
      rssBytes: field(status, 'VmRSS') * 1024,
      cpuMs: ((utime + stime) * 1000) / clockTicksPerSecond(),
      writeBytes: field(io, 'write_bytes'),
      wchar: field(io, 'wchar'),
    };
  } catch {
    return undefined;
  }
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Least-squares slope of y over x. */
export function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

/** Rounds to `digits` decimals. */
export function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
