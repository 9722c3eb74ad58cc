/**
 * One seed of the fault explorer: the week-long home for a span of simulated hours with a seeded
 * fault schedule played against it, then the invariants checked from the simulators' truth and the
 * API's records. A failing seed comes with the command that runs it again.
 */
import { tankFloorC } from '../homes/week.js';
import { runWeekHome, weekStartMs } from '../week-run.js';
import { describeSchedule, faultSchedule, type FaultStep } from './fault-schedule.js';
import { checkInvariants, type Violation } from './invariants.js';

export interface SeedResult {
  seed: number;
  hours: number;
  schedule: FaultStep[];
  violations: Violation[];
  digest: string;
  /** Figures of the run worth seeing across seeds. */
  figures: { reportsAccepted: number; errorLines: number; restarts: number; storeKiB: number; maxLineA: number };
  /** The command that runs this seed again. */
  reproduce: string;
}

const H = 3_600_000;

export async function exploreSeed(seed: number, hours: number): Promise<SeedResult> {
  const schedule = faultSchedule({ seed, fromMs: weekStartMs, toMs: weekStartMs + hours * H });
  const run = await runWeekHome({ days: hours / 24, seed, controlTickMs: 60_000, faults: schedule });
  const violations = checkInvariants({
    startMs: run.startMs,
    endMs: run.endMs,
    fuseA: run.fuseA,
    tankFloorC,
    samples: run.samples,
    handovers: run.handovers,
    errors: run.errors,
    uncaught: run.uncaught,
    reports: run.reportSubjects,
    outbox: run.outbox,
    storeBytes: run.storeBytes,
  });
  if (!run.stopped) violations.push({ invariant: 'crash', detail: 'the daemon did not stop cleanly at the end' });
  return {
    seed,
    hours,
    schedule,
    violations,
    digest: run.digest,
    figures: {
      reportsAccepted: run.reports.length,
      errorLines: run.errors.length,
      restarts: schedule.filter((s) => s.kind === 'daemon-restart').length,
      storeKiB: Math.round(run.storeBytes / 1024),
      maxLineA: Math.round(Math.max(0, ...run.samples.flatMap((s) => s.linesA)) * 100) / 100,
    },
    reproduce: `npm run explore -- --seed ${seed} --hours ${hours}`,
  };
}

/** A seed's result as lines for a terminal: the verdict, the schedule, each violation. */
export function seedReport(r: SeedResult): string[] {
  const head = `seed ${r.seed} (${r.hours} h): ${r.violations.length === 0 ? 'ok' : `${r.violations.length} violation(s)`} · ${r.figures.reportsAccepted} reports · ${r.figures.errorLines} error lines · store ${r.figures.storeKiB} KiB · digest ${r.digest.slice(0, 12)}`;
  const lines = [head, ...describeSchedule(r.schedule, weekStartMs).map((l) => `  ${l}`)];
  for (const v of r.violations)
    lines.push(`  VIOLATION ${v.invariant}${v.atMs !== undefined ? ` at +${((v.atMs - weekStartMs) / H).toFixed(2)} h` : ''}: ${v.detail}`);
  if (r.violations.length > 0) lines.push(`  reproduce: ${r.reproduce}`);
  return lines;
}
