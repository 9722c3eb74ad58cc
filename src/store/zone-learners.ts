/**
 * Each heated zone's room learner (`core/room-model-learn.ts`), one row of the state table per
 * zone, so a restart keeps what was learnt. A row that does not read (an older shape) starts over.
 */
import { z } from 'zod';
import type { RoomLearnerState } from '../core/room-model-learn.js';
import type { Store } from './types.js';

const finite = z.number().finite();
const rejectReason = z.enum(['missing', 'hours', 'range', 'heat', 'jump', 'outlier']);

const learnerSchema: z.ZodType<RoomLearnerState> = z.strictObject({
  version: z.literal(1),
  theta: z.array(finite).length(3),
  p: z.array(finite).length(9),
  weight: finite,
  sse: finite,
  sumY: finite,
  sumYY: finite,
  hours: finite,
  heatingHours: finite,
  offHours: finite,
  outliersInRow: finite,
  rejected: z.partialRecord(rejectReason, finite),
  last: z
    .union([z.strictObject({ accepted: z.literal(true) }), z.strictObject({ accepted: z.literal(false), reason: rejectReason, message: z.string() })])
    .nullable(),
});

const key = (zoneId: string): string => `zone-learner:${zoneId}`;

export interface ZoneLearnerStore {
  /** The zone's learner as last saved, or null (none yet, or unreadable). */
  load(zoneId: string): RoomLearnerState | null;
  save(zoneId: string, state: RoomLearnerState): void;
}

export function zoneLearnerStore(store: Pick<Store, 'getState' | 'setState'>): ZoneLearnerStore {
  return {
    load(zoneId) {
      try {
        return store.getState(key(zoneId), learnerSchema) ?? null;
      } catch {
        return null;
      }
    },
    save: (zoneId, state) => store.setState(key(zoneId), state),
  };
}
