/**
 * The plan the daemon stored, read back by `plan` and `status` when the daemon does not answer,
 * and the part of it from now on as the view they render.
 */
import { z } from 'zod';
import { planView } from '../app-view.js';
import type { Config } from '../config/schema.js';
import type { Plan } from '../core/types.js';
import { WattshiftError } from '../errors.js';
import type { PlanView } from '../view/model.js';
import type { Store } from '../store/index.js';

const deviceSlot = z.looseObject({ energyKwh: z.number(), powerKw: z.number(), on: z.boolean() });

/** The fields of a stored core `Plan` the CLI reads; the rest is kept as stored. */
const storedPlanSchema = z.looseObject({
  createdMs: z.number(),
  currency: z.string(),
  slotMinutes: z.number().positive(),
  startMs: z.number(),
  endMs: z.number(),
  mode: z.string(),
  cost: z.number(),
  baselineCost: z.number(),
  incentiveEarned: z.number(),
  shortfalls: z.array(z.looseObject({ message: z.string() })),
  slots: z.array(
    z.looseObject({
      startMs: z.number(),
      endMs: z.number(),
      price: z.number(),
      delta: z.number(),
      source: z.string(),
      reason: z.string(),
      tank: deviceSlot.extend({ endTempC: z.number() }).optional(),
      ev: deviceSlot.extend({ chargedKwh: z.number() }).optional(),
    }),
  ),
});

export interface StoredPlan {
  /** When the daemon stored it. */
  storedAtMs: number;
  plan: Plan;
}

/** The latest plan of the store, checked; undefined when none is stored. Throws STORE_FAILED when it is corrupt. */
export function readLatestPlan(store: Pick<Store, 'latestPlan'>): StoredPlan | undefined {
  const row = store.latestPlan();
  if (!row) return undefined;
  const parsed = storedPlanSchema.safeParse(row.json);
  if (!parsed.success) {
    throw new WattshiftError(
      'STORE_FAILED',
      `the stored plan ${row.id} is not a plan: ${parsed.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join('.')}: ${i.message}`)
        .join('; ')}`,
    );
  }
  return { storedAtMs: row.createdAtMs, plan: parsed.data as unknown as Plan };
}

/** The plan from `nowMs` on; a plan that has wholly passed is shown from its start (`stale`). */
export function currentPlanView(plan: Plan, config: Config, nowMs: number): { view: PlanView; stale: boolean } {
  const stale = !plan.slots.some((s) => s.endMs > nowMs);
  return { view: planView(plan, config, stale ? plan.startMs : nowMs), stale };
}
