/**
 * The stored plans as the history and the bill read them: per slot, the energy planned for each
 * flexible device and the naive baseline's flexible energy. A small zod schema reads only those
 * fields, so plans from older versions still count as far as they carry them: a plan made before
 * homes had several tanks and cars keeps its one tank under `tank` and its car under `ev`, which
 * belong to the first configured device of each kind (the only one planned then).
 */
import { z } from 'zod';
import type { Config } from '../config/schema.js';
import type { PlannedSlots } from '../core/energy-history.js';
import type { Store } from '../store/types.js';

/** The key under which a slot's baseline energy sits beside the device ids (never a valid id). */
export const BASELINE_KEY = '(baseline)';

const energy = z.looseObject({ energyKwh: z.number() });
const storedSlotsSchema = z.looseObject({
  createdMs: z.number(),
  slots: z.array(
    z.looseObject({
      startMs: z.number(),
      endMs: z.number(),
      tanks: z.record(z.string(), energy).optional(),
      evs: z.record(z.string(), energy).optional(),
      tank: energy.optional(),
      ev: energy.optional(),
      baselineKwh: z.number().optional(),
    }),
  ),
});

/** The ids of the devices a plan drives (tanks and chargers), in config order. */
export function flexibleDevices(devices: Config['devices']): string[] {
  return devices.flatMap((d) => (d.kind === 'hotWaterTank' || d.kind === 'heatPump' || d.kind === 'evCharger' ? [d.id] : []));
}

type StoredSlot = z.infer<typeof storedSlotsSchema>['slots'][number];

/** A slot's planned kWh by device id: every configured device of the kind gets 0 when the plan gave it nothing. */
function energiesOf(s: StoredSlot, tankIds: readonly string[], evIds: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  const read = (ids: readonly string[], byId: Record<string, { energyKwh: number }> | undefined, legacy: { energyKwh: number } | undefined): void => {
    ids.forEach((id, i) => (out[id] = byId?.[id]?.energyKwh ?? (i === 0 ? legacy?.energyKwh : undefined) ?? 0));
  };
  read(tankIds, s.tanks, s.tank);
  read(evIds, s.evs, s.ev);
  return out;
}

/** A stored plan's slots as read, or null when it cannot be read; by plan id. */
export type StoredPlanCache = Map<number, PlannedSlots | null>;

/**
 * The planned kWh per slot of the stored plans overlapping [fromMs, toMs), by device id, plus
 * {@link BASELINE_KEY} where the plan carries its baseline (plans made before it did have none).
 * A stored plan never changes: with a `cache` kept between calls, each is read and parsed once,
 * and the cache keeps only the plans of the last range asked.
 */
export function storedPlans(
  store: Pick<Store, 'planIdsBetween' | 'plansById'>,
  devices: Config['devices'],
  fromMs: number,
  toMs: number,
  cache: StoredPlanCache = new Map(),
): { plans: PlannedSlots[]; unreadable: number } {
  const tankIds = devices.flatMap((d) => (d.kind === 'hotWaterTank' || d.kind === 'heatPump' ? [d.id] : []));
  const evIds = devices.flatMap((d) => (d.kind === 'evCharger' ? [d.id] : []));
  const ids = store.planIdsBetween(fromMs, toMs);
  const inRange = new Set(ids);
  for (const id of cache.keys()) if (!inRange.has(id)) cache.delete(id);
  for (const row of store.plansById(ids.filter((id) => !cache.has(id)))) {
    const parsed = storedSlotsSchema.safeParse(row.json);
    cache.set(
      row.id,
      parsed.success
        ? {
            createdMs: parsed.data.createdMs,
            slots: parsed.data.slots.map((s) => ({
              startMs: s.startMs,
              endMs: s.endMs,
              energyKwh: {
                ...energiesOf(s, tankIds, evIds),
                ...(s.baselineKwh !== undefined ? { [BASELINE_KEY]: s.baselineKwh } : {}),
              },
            })),
          }
        : null,
    );
  }
  // A plan trimmed between the two reads is neither.
  const read = ids.flatMap((id) => (cache.has(id) ? [cache.get(id)!] : []));
  return { plans: read.filter((p): p is PlannedSlots => p !== null), unreadable: read.filter((p) => p === null).length };
}
