/**
 * The stored plans as the history and the bill read them: per slot, the energy planned for each
 * flexible device and the naive baseline's flexible energy. A small zod schema reads only those
 * fields, so plans from older versions still count as far as they carry them.
 */
import { z } from 'zod';
import type { Config } from '../config/schema.js';
import type { PlannedSlots } from '../core/energy-history.js';
import type { Store } from '../store/types.js';

/** The key under which a slot's baseline energy sits beside the device ids (never a valid id). */
export const BASELINE_KEY = '(baseline)';

const energyOf = z.looseObject({ energyKWh: z.number() }).optional();
const storedSlotsSchema = z.looseObject({
  createdMs: z.number(),
  slots: z.array(z.looseObject({ startMs: z.number(), endMs: z.number(), tank: energyOf, ev: energyOf, baselineKWh: z.number().optional() })),
});

/** The flexible devices a plan drives, by role. */
export function flexibleDevices(devices: Config['devices']): { tankId: string | undefined; evId: string | undefined } {
  return { tankId: devices.find((d) => d.kind === 'hotWaterTank')?.id, evId: devices.find((d) => d.kind === 'evCharger')?.id };
}

/**
 * The planned kWh per slot of the stored plans overlapping [fromMs, toMs), by device id, plus
 * {@link BASELINE_KEY} where the plan carries its baseline (plans made before it did have none).
 */
export function storedPlans(store: Pick<Store, 'plansBetween'>, devices: Config['devices'], fromMs: number, toMs: number): { plans: PlannedSlots[]; unreadable: number } {
  const { tankId, evId } = flexibleDevices(devices);
  const plans: PlannedSlots[] = [];
  let unreadable = 0;
  for (const row of store.plansBetween(fromMs, toMs)) {
    const parsed = storedSlotsSchema.safeParse(row.json);
    if (!parsed.success) {
      unreadable++;
      continue;
    }
    plans.push({
      createdMs: parsed.data.createdMs,
      slots: parsed.data.slots.map((s) => ({
        startMs: s.startMs,
        endMs: s.endMs,
        energyKwh: {
          ...(tankId ? { [tankId]: s.tank?.energyKWh ?? 0 } : {}),
          ...(evId ? { [evId]: s.ev?.energyKWh ?? 0 } : {}),
          ...(s.baselineKWh !== undefined ? { [BASELINE_KEY]: s.baselineKWh } : {}),
        },
      })),
    });
  }
  return { plans, unreadable };
}
