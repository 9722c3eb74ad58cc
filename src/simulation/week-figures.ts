/**
 * What a simulated run of the week-long home comes to, as figures: the cars' departures against
 * their targets, the lines against the main fuse, the heat pump's locks, the reports the API
 * accepted, the daemon's error lines, the digest of its decisions and the kernel's own counts.
 */
import type { WeekRun } from './week-run.js';

export interface WeekFigures {
  days: number;
  seed: number;
  departures: number;
  /** Departures below their target SoC (the car's logger tells whole percent: 1 point of slack). */
  departuresShort: number;
  /** Highest true line current sampled every 20 s, A, and the fuse. */
  maxLineA: number;
  fuseA: number;
  samplesOverFuse: number;
  heatPumpLocks: number;
  reportsAccepted: number;
  daemonErrors: number;
  stoppedCleanly: boolean;
  digest: string;
  decisions: Record<string, number>;
  kernel: WeekRun['kernel'];
}

const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;

export function weekFigures(run: WeekRun, days: number, seed: number): WeekFigures {
  const due = run.departures.filter((d) => d.atMs < run.endMs);
  const maxOf = (s: { linesA: number[] }): number => Math.max(...s.linesA);
  return {
    days,
    seed,
    departures: due.length,
    departuresShort: due.filter((d) => d.socPct === undefined || d.socPct < d.targetSocPct - 1).length,
    maxLineA: round(Math.max(0, ...run.samples.map(maxOf)), 2),
    fuseA: run.fuseA,
    samplesOverFuse: run.samples.filter((s) => maxOf(s) > run.fuseA).length,
    heatPumpLocks: run.pumpHistory.filter((h) => h.operating === 'block').length,
    reportsAccepted: run.reports.length,
    daemonErrors: run.errors.length,
    stoppedCleanly: run.stopped,
    digest: run.digest,
    decisions: run.decisions,
    kernel: run.kernel,
  };
}

/** The figures as a two-column table for a terminal. */
export function weekFiguresTable(f: WeekFigures, wallS: number): string {
  const rows: [string, string][] = [
    ['simulated days', `${f.days} (seed ${f.seed})`],
    ['departures below target', `${f.departuresShort} of ${f.departures}`],
    ['highest line current', `${f.maxLineA} A (fuse ${f.fuseA} A; ${f.samplesOverFuse} samples over)`],
    ['heat pump locks', String(f.heatPumpLocks)],
    ['reports accepted', String(f.reportsAccepted)],
    ['daemon error lines', String(f.daemonErrors)],
    ['stopped cleanly', f.stoppedCleanly ? 'yes' : 'no'],
    [
      'decisions',
      Object.entries(f.decisions)
        .map(([k, v]) => `${v} ${k}`)
        .join(', '),
    ],
    ['digest', f.digest],
    ['kernel', `${f.kernel.instants} instants, ${f.kernel.settles} settles, ${f.kernel.timerWaits} timer waits`],
    ['wall time', `${wallS.toFixed(1)} s`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}
