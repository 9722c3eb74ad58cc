/**
 * What a plan did with the reserved LPC caps it was given: per reservation, its window, its cap
 * and the tank and car energy planned inside and before the window. This is what `plan --explain`
 * shows as the reservation's effect.
 */
import type { LpcCap, Plan, PlanSlot, ReservationOutcome } from './types.js';

/** `flexKwh`: a slot's tank and car energy together (home-plan.ts's `slotFlexKwh`, passed in to keep the imports one way). */
export function reservationOutcomes(plan: Plan, lpc: ReadonlyArray<LpcCap>, flexKwh: (s: PlanSlot) => number, kept: boolean): ReservationOutcome[] {
  const byEvent = new Map<string, { startMs: number; endMs: number; maxKw: number }>();
  for (const c of lpc) {
    if (c.reservationId === undefined || c.endMs <= plan.startMs || c.startMs >= plan.endMs) continue;
    const seen = byEvent.get(c.reservationId);
    byEvent.set(
      c.reservationId,
      seen
        ? { startMs: Math.min(seen.startMs, c.startMs), endMs: Math.max(seen.endMs, c.endMs), maxKw: Math.min(seen.maxKw, c.maxKw) }
        : { startMs: c.startMs, endMs: c.endMs, maxKw: c.maxKw },
    );
  }
  const sum = (from: number, to: number): number =>
    plan.slots.filter((s) => s.startMs >= from && s.startMs < to).reduce((kwh, s) => kwh + flexKwh(s), 0);
  return [...byEvent]
    .map(([eventId, w]) => ({
      eventId,
      ...w,
      kept,
      insideKwh: sum(w.startMs, w.endMs),
      beforeKwh: sum(plan.startMs, w.startMs),
    }))
    .sort((a, b) => a.startMs - b.startMs);
}
