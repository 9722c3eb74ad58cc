/**
 * The decision log of a simulated run, folded into one digest: every control tick's setpoints,
 * every plan the daemon adopted, every SG Ready state the heat pump went through, and every report
 * the API accepted. Two runs of the same home and seed must give the same digest. Ids the API
 * draws at random (event and report ids) are replaced by what they stand for.
 */
import { createHash, type Hash } from 'node:crypto';
import type { Plan } from '../core/types.js';
import type { ControlSnapshot } from '../jobs/control-loop.js';

/** Rounded for the log: the decisions are exact, but a float printed twice must print the same. */
const r3 = (x: number): number => Math.round(x * 1000) / 1000;

export interface DecisionLog {
  tick(snapshot: ControlSnapshot): void;
  /** Records the plan in force if it is a new one. */
  plan(plan: Plan | null): void;
  /** Any other entry (a device's state change, an accepted report). */
  note(kind: string, atMs: number, entry: unknown): void;
  /** Entries so far, by kind. */
  counts(): Record<string, number>;
  digest(): string;
  /** The entries as lines, when kept (to find where two runs part). */
  lines(): string[];
}

export function createDecisionLog(options: { keepLines?: boolean } = {}): DecisionLog {
  const hash: Hash = createHash('sha256');
  const counts: Record<string, number> = {};
  const kept: string[] = [];
  let lastPlanMs: number | undefined;
  const add = (kind: string, atMs: number, entry: unknown): void => {
    counts[kind] = (counts[kind] ?? 0) + 1;
    const line = `${kind} ${new Date(atMs).toISOString()} ${JSON.stringify(entry)}`;
    if (options.keepLines) kept.push(line);
    hash.update(`${line}\n`);
  };
  return {
    tick(s) {
      add(
        'tick',
        s.atMs,
        s.decision.setpoints.map((p) => {
          if (p.kind === 'charger') return [p.id, p.currentA, p.phases ?? null];
          if (p.kind === 'heater') return [p.id, p.allow];
          return [p.id, p.state];
        }),
      );
    },
    plan(plan) {
      if (!plan || plan.createdMs === lastPlanMs) return;
      lastPlanMs = plan.createdMs;
      add('plan', plan.createdMs, {
        mode: plan.mode,
        startMs: plan.startMs,
        endMs: plan.endMs,
        cost: r3(plan.cost),
        slots: plan.slots.map((slot) =>
          [slot.startMs, r3(slot.headroomKw), slot.tanks, slot.evs].map((v) =>
            JSON.stringify(v, (_k, x: unknown) => (typeof x === 'number' ? r3(x) : x)),
          ),
        ),
      });
    },
    note: add,
    counts: () => ({ ...counts }),
    digest: () => hash.copy().digest('hex'),
    lines: () => [...kept],
  };
}
