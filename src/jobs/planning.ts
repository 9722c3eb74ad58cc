import { performance } from 'node:perf_hooks';
import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { HomePlanInput, Plan } from '../core/types.js';
import { slotDevices } from '../core/home-plan.js';
import type { Store } from '../store/types.js';
import { codeOf } from '../errors.js';
import { startLoop, type LoopHandle } from '../timing/loop.js';

export type PlanFunction = (input: HomePlanInput, nowMs: number, previous?: Plan) => Plan | Promise<Plan>;

/**
 * Re-plans at every slot boundary and whenever an input changes (`request`), keeping the previous
 * plan's current slot and frozen window (the planner does that given `previous`). Plans are stored
 * at most every `storeEveryMs`, and the plan in force once more on a clean stop.
 */
export function startPlanning(deps: {
  buildInput: (nowMs: number) => HomePlanInput;
  plan: PlanFunction;
  store: Pick<Store, 'savePlan'>;
  clock: Clock;
  logger: Logger;
  slotMinutes: number;
  onPlan: (plan: Plan) => void;
  initial?: Plan | null;
  /** Least time between two stored plans, ms of clock time (default 30 min). */
  storeEveryMs?: number;
}): LoopHandle & {
  current(): Plan | null;
  request(reason: string): void;
  health(): { ok: boolean; lastError: { code: string; message: string; atMs: number } | null };
} {
  const log = deps.logger.child({ component: 'planner' });
  const slotMs = deps.slotMinutes * 60_000;
  let current: Plan | null = deps.initial ?? null;
  let pendingReason = 'start';
  let lastError: { code: string; message: string; atMs: number } | null = null;
  // Stored plans serve `status`, `plan` and a restart, not control: writing every re-plan would
  // dominate the SD card's daily writes, so one is kept at most every `storeEveryMs`.
  const storeEveryMs = deps.storeEveryMs ?? 30 * 60_000;
  let lastStoredMs = -Infinity;
  let stored: Plan | null = deps.initial ?? null;
  const storePlan = (plan: Plan, nowMs: number): void => {
    try {
      deps.store.savePlan({ createdAtMs: nowMs, horizonStartMs: plan.startMs, horizonEndMs: plan.endMs, json: plan });
      lastStoredMs = nowMs;
      stored = plan;
    } catch (err) {
      log.warn({ code: codeOf(err, 'STORE_FAILED') }, 'plan not stored; controlling on it anyway');
    }
  };

  const loop = startLoop({
    name: 'planner',
    clock: deps.clock,
    logger: log,
    errorDelayMs: 60_000,
    tick: async () => {
      const now = deps.clock.nowMs();
      try {
        // Wall time, not clock time: how long planning takes (on its worker thread, if it has one).
        const startedAt = performance.now();
        const input = deps.buildInput(now);
        const next = await deps.plan(input, now, current ?? undefined);
        const tookMs = Math.round(performance.now() - startedAt);
        current = next;
        lastError = null;
        if (now - lastStoredMs >= storeEveryMs || now < lastStoredMs) storePlan(next, now);
        // The current slot's targets (whole-slot energy), so a log shows what control is following.
        const slot = next.slots.find((s) => s.startMs <= now && now < s.endMs);
        const targets = slot
          ? { slotStartMs: slot.startMs, slotKwh: Object.fromEntries(slotDevices(slot).map(([id, d]) => [id, round(d.energyKwh, 3)])) }
          : {};
        log.info(
          {
            reason: pendingReason,
            planStartMs: next.startMs,
            mode: next.mode,
            cost: round(next.cost),
            baseline: round(next.baselineCost),
            shortfalls: next.shortfalls.length,
            tookMs,
            ...targets,
          },
          'plan updated',
        );
        for (const s of next.shortfalls) log.warn({ device: s.deviceId ?? s.device, kind: s.kind, atMs: s.atMs }, s.message);
        deps.onPlan(next);
      } catch (err) {
        lastError = { code: codeOf(err), message: err instanceof Error ? err.message : String(err), atMs: now };
        throw err;
      }
      pendingReason = 'slot boundary';
      // Wake just after the next slot starts.
      return Math.floor(now / slotMs) * slotMs + slotMs - now + 1_000;
    },
  });
  return {
    ...loop,
    // A clean stop stores the plan in force, so `status` and `plan` show it while the daemon is
    // down and a restart resumes from it.
    async stop() {
      await loop.stop();
      if (current && current !== stored) storePlan(current, deps.clock.nowMs());
    },
    current: () => current,
    request(reason) {
      pendingReason = reason;
      loop.wake();
    },
    health: () => ({ ok: lastError === null, lastError }),
  };
}

/**
 * Whether the wall clock stepped under a plan: back before the plan's first slot, or forward so
 * far that the re-plan at the next slot boundary was missed (the loop sleeps on real timers, so
 * after a step it would wake only at the old timeline's boundary, up to a slot late).
 */
export function clockStepOf(plan: Pick<Plan, 'startMs'> | null, nowMs: number, slotMs: number): 'back' | 'forward' | null {
  if (!plan) return null;
  if (nowMs < plan.startMs - 60_000) return 'back';
  if (nowMs >= plan.startMs + 2 * slotMs) return 'forward';
  return null;
}

function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
