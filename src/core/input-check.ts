/**
 * The planner's boundary: every number of its input must be finite, and the horizon bounded, so
 * that no NaN or Infinity can reach the solvers (where a NaN price once made the tank DP run for
 * minutes) and no overflow can reach the objective.
 */
import { WattshiftError } from '../errors.js';
import type { PlanInput } from './types.js';

/** Most slots one plan may cover: a week of quarter-hours. */
export const maxPlanSlots = 7 * 96;
/** Largest magnitude of any number in a plan input (prices, energies, times in ms stay far below). */
const maxMagnitude = 1e15;

/** Throws PLAN_INPUT_INVALID naming the first non-finite or absurd number in the input. */
export function assertPlanInputBounded(input: PlanInput): void {
  if (input.slots.length > maxPlanSlots) {
    throw new WattshiftError('PLAN_INPUT_INVALID', `${input.slots.length} slots, more than ${maxPlanSlots}`);
  }
  const bad = firstUnbounded(input, 'input', 0);
  if (bad !== null) throw new WattshiftError('PLAN_INPUT_INVALID', `${bad} is not a finite number within ±1e15`, { details: { path: bad } });
}

function firstUnbounded(value: unknown, path: string, depth: number): string | null {
  if (typeof value === 'number') return Number.isFinite(value) && Math.abs(value) <= maxMagnitude ? null : path;
  if (typeof value !== 'object' || value === null || depth > 8) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = firstUnbounded(value[i], `${path}[${i}]`, depth + 1);
      if (bad !== null) return bad;
    }
    return null;
  }
  for (const [k, v] of Object.entries(value)) {
    const bad = firstUnbounded(v, `${path}.${k}`, depth + 1);
    if (bad !== null) return bad;
  }
  return null;
}
