import { statSync } from 'node:fs';
import { z } from 'zod';
import type { StoreContext } from './context.js';
import { checkInput, guard } from './errors.js';
import type { PruneOptions, PruneResult, StoreDiskUsage } from './types.js';

const DAY_MS = 86_400_000;

const pruneOptionsSchema = z.strictObject({
  hourlyDays: z.number().positive(),
  eventsDays: z.number().positive(),
  plansDays: z.number().positive(),
  vacuum: z.boolean().optional(),
});

export interface MaintenanceOps {
  prune(nowMs: number, options: PruneOptions): PruneResult;
  /** `PRAGMA integrity_check`, or with `quick` the cheaper `quick_check` (no index contents). */
  integrityCheck(mode?: 'full' | 'quick'): { ok: boolean; messages: string[] };
  diskUsage(): StoreDiskUsage;
}

export function maintenanceOps(ctx: StoreContext, path: string): MaintenanceOps {
  const { db } = ctx;
  const delHourly = db.prepare('DELETE FROM hourly_energy WHERE hour_start_ms < ?');
  const delCosts = db.prepare('DELETE FROM hourly_cost WHERE hour_start_ms < ?');
  // Finished reports go with their event's retention; unsent ones are never deleted.
  const delReports = db.prepare(`DELETE FROM report_outbox
    WHERE state IN ('accepted', 'rejected') AND updated_at_ms < ?`);
  // An event goes once its span has ended before the cutoff and no report refers to it.
  const delEvents = db.prepare(`DELETE FROM events
    WHERE coalesce(end_ms, start_ms, created_at_ms) < @cutoff AND received_at_ms < @cutoff
      AND NOT EXISTS (SELECT 1 FROM report_outbox r WHERE r.event_id = events.event_id)`);
  const delPlans = db.prepare(`DELETE FROM plans
    WHERE created_at_ms < ? AND id <> (SELECT max(id) FROM plans)`);

  return {
    prune(nowMs, options) {
      const o = checkInput(pruneOptionsSchema, options, 'retention');
      const result = guard('prune', () =>
        ctx.tx(() => {
          // An hour's cost goes with its energy.
          delCosts.run(nowMs - o.hourlyDays * DAY_MS);
          return {
            hourly: delHourly.run(nowMs - o.hourlyDays * DAY_MS).changes,
            reports: delReports.run(nowMs - o.eventsDays * DAY_MS).changes,
            events: delEvents.run({ cutoff: nowMs - o.eventsDays * DAY_MS }).changes,
            plans: delPlans.run(nowMs - o.plansDays * DAY_MS).changes,
          };
        }),
      );
      if (o.vacuum !== false && !db.inTransaction) {
        // Returns the free pages to the file system (auto_vacuum = INCREMENTAL), so the file
        // shrinks instead of only being reused.
        guard('incremental_vacuum', () => db.pragma('incremental_vacuum'));
      }
      return result;
    },

    integrityCheck(mode = 'full') {
      const pragma = mode === 'quick' ? 'quick_check' : 'integrity_check';
      const messages = guard('integrityCheck', () =>
        z
          .array(z.record(z.string(), z.string()))
          .parse(db.pragma(pragma))
          .map((r) => Object.values(r)[0] ?? ''),
      );
      return { ok: messages.length === 1 && messages[0] === 'ok', messages };
    },

    diskUsage() {
      return guard('diskUsage', () => {
        const pageSize = z.number().parse(db.pragma('page_size', { simple: true }));
        const pageCount = z.number().parse(db.pragma('page_count', { simple: true }));
        const freePages = z.number().parse(db.pragma('freelist_count', { simple: true }));
        let walBytes = 0;
        try {
          walBytes = statSync(`${path}-wal`).size;
        } catch {
          // no WAL file (closed cleanly, or an in-memory database)
        }
        return { pageSize, pageCount, freePages, dbBytes: pageSize * pageCount, walBytes };
      });
    },
  };
}
