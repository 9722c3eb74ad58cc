/**
 * What must hold in a simulated home whatever failed in it, checked from the simulators' own truth
 * and the API's own records, not from what the daemon says about itself.
 */
import type { OutboxSummary } from '../../store/types.js';

export interface HomeSample {
  atMs: number;
  /** True current on each line, A. */
  linesA: readonly number[];
  tankC: number;
  /** Whether the tank's element is held off by its controller. */
  tankBlocked: boolean;
}

export interface RunRecord {
  startMs: number;
  endMs: number;
  fuseA: number;
  tankFloorC: number;
  samples: readonly HomeSample[];
  /**
   * Spans in which no daemon was in control (a restart: from its stop until the new one has read
   * every device and ticked): the devices hold their own fallback states, which the fuse check
   * does not hold against the daemon.
   */
  handovers: readonly { fromMs: number; toMs: number }[];
  /** The daemon's log lines at `error` or worse. */
  errors: readonly Record<string, unknown>[];
  /** Errors no handler caught (process `uncaughtException` and `unhandledRejection`). */
  uncaught: readonly string[];
  /** Each report the API accepted: its event and the resource or location each payload was for. */
  reports: readonly { eventId: string; createdAtMs: number; subjects: readonly string[] }[];
  /** The daemon's report outbox at the end. */
  outbox: OutboxSummary;
  /** The store's files at the end, bytes. */
  storeBytes: number;
}

export interface Violation {
  invariant: 'fuse' | 'comfort-floor' | 'crash' | 'report-twice' | 'report-lost' | 'store-growth';
  atMs?: number;
  detail: string;
}

/** Longest a tank may sit below its floor with its element held off, ms: a control tick and a lease renewal's worth of slack. */
export const floorGraceMs = 15 * 60_000;
/** Most the store may grow per simulated day, bytes (the SD-card budget is a few MB a day of writes; the file grows far less). */
export const storeBytesPerDay = 4 * 1024 * 1024;

export function checkInvariants(run: RunRecord): Violation[] {
  const out: Violation[] = [];
  const inControl = (atMs: number): boolean => !run.handovers.some((h) => atMs >= h.fromMs && atMs <= h.toMs);
  const over = run.samples.find((s) => inControl(s.atMs) && s.linesA.some((a) => a > run.fuseA));
  if (over) out.push({ invariant: 'fuse', atMs: over.atMs, detail: `line at ${Math.max(...over.linesA).toFixed(2)} A over the ${run.fuseA} A fuse` });

  let coldSince: number | null = null;
  for (const s of run.samples) {
    const cold = s.tankBlocked && s.tankC < run.tankFloorC;
    if (!cold) coldSince = null;
    else if (coldSince === null) coldSince = s.atMs;
    else if (s.atMs - coldSince > floorGraceMs) {
      out.push({
        invariant: 'comfort-floor',
        atMs: coldSince,
        detail: `tank at ${s.tankC.toFixed(1)} °C under its ${run.tankFloorC} °C floor and held off for ${Math.round((s.atMs - coldSince) / 60_000)} min`,
      });
      break;
    }
  }

  const rejected = run.errors.filter((e) => e['code'] === 'REPORT_REJECTED');
  if (rejected.length > 0)
    out.push({
      invariant: 'report-lost',
      atMs: Number(rejected[0]!['time']),
      detail: `the API rejected ${rejected.length} report(s), the first: ${String(rejected[0]!['msg'])}`,
    });
  for (const e of run.errors) {
    if (e['code'] === 'INTERNAL' || e['code'] === undefined)
      out.push({ invariant: 'crash', atMs: Number(e['time']), detail: `error line without a known cause: ${String(e['msg'])}` });
  }
  for (const u of run.uncaught) out.push({ invariant: 'crash', detail: `uncaught: ${u}` });

  const seen = new Map<string, number>();
  for (const r of run.reports) {
    for (const subject of r.subjects) {
      const key = `${r.eventId} ${subject}`;
      if (seen.has(key)) out.push({ invariant: 'report-twice', atMs: r.createdAtMs, detail: `event ${r.eventId} reported twice for ${subject}` });
      seen.set(key, r.createdAtMs);
    }
  }
  const { outbox } = run;
  if (outbox.rejected > 0) out.push({ invariant: 'report-lost', detail: `${outbox.rejected} report(s) rejected by the API` });
  if (outbox.oldestPendingDeadlineMs !== null && outbox.oldestPendingDeadlineMs <= run.endMs) {
    out.push({
      invariant: 'report-lost',
      atMs: outbox.oldestPendingDeadlineMs,
      detail: `${outbox.pending + outbox.sending} report(s) still unsent past their deadline`,
    });
  }

  const days = (run.endMs - run.startMs) / 86_400_000;
  const budget = storeBytesPerDay * Math.max(1, days);
  if (run.storeBytes > budget)
    out.push({
      invariant: 'store-growth',
      detail: `store at ${(run.storeBytes / 1048576).toFixed(1)} MiB after ${days.toFixed(1)} days (budget ${(budget / 1048576).toFixed(1)} MiB)`,
    });
  return out;
}
