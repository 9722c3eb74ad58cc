/**
 * Comfort deadlines of the tank ("hot water ready by 06:30"): each one becomes a floor on the
 * stored energy at the end of the last slot that ends by its time (raised by what the tank loses
 * from there to the deadline), on top of the constant comfort floor. The solvers take the per-slot floor as it is (soft, with the large penalty), so an
 * unreachable deadline still gives the best possible plan, and the plan states the shortfall.
 */
import type { TankModel } from './tank.js';
import type { ComfortDeadline, ComfortOutcome, PriceSlot, Shortfall } from './types.js';

export interface ComfortTarget extends ComfortDeadline {
  /** Stored energy asked for at the end of slot `bySlot`. */
  level: number;
  bySlot: number;
  /** Part of the next slot from `bySlot`'s end to the deadline, and that slot's draw and loss term. */
  f: number;
  k: number;
}

/**
 * The deadlines within the slots as targets, soonest first, and the per-slot floor they make.
 * A deadline inside the first slot (before its end) is planned at that slot's end: the nearest
 * the plan can do. Past deadlines and those after the last slot are left out.
 */
export function comfortTargets(
  deadlines: ReadonlyArray<ComfortDeadline>,
  slots: ReadonlyArray<PriceSlot>,
  nowMs: number,
  model: TankModel,
): { targets: ComfortTarget[]; floor: number[] } {
  const floor = slots.map(() => model.eFloor);
  const targets: ComfortTarget[] = [];
  const last = slots[slots.length - 1];
  for (const d of [...deadlines].sort((x, y) => x.atMs - y.atMs)) {
    if (!last || d.atMs <= nowMs || d.atMs > last.endMs) continue;
    let bySlot = 0;
    for (let t = 0; t < slots.length && (slots[t] as PriceSlot).endMs <= d.atMs; t++) bySlot = t;
    const slot = slots[bySlot] as PriceSlot;
    // From the slot's end to the deadline the tank loses heat and hot water is drawn (the next
    // slot's share, unheated): ask for enough at the slot's end to still hold tempC at the deadline.
    const f = Math.max(0, Math.min(1, (d.atMs - slot.endMs) / (slot.endMs - slot.startMs)));
    const k = (model.k[bySlot + 1] ?? model.k[bySlot]) as number;
    const atDeadline = (model.toE(d.tempC) + f * k) / (1 - f * (1 - model.a));
    // Above the thermostat is out of reach: ask for the thermostat, and say so (planner shortfall).
    const level = Math.min(atDeadline, model.eMax);
    targets.push({ ...d, level, bySlot, f, k });
    floor[bySlot] = Math.max(floor[bySlot] as number, level);
  }
  return { targets, floor };
}

/** Each target with the temperature the plan gives at its deadline (unheated after its slot's end). */
export function comfortOutcomes(
  targets: ReadonlyArray<ComfortTarget>,
  slots: ReadonlyArray<PriceSlot>,
  model: TankModel,
  tankE: ReadonlyArray<number>,
): ComfortOutcome[] {
  return targets.map((c) => {
    const e = tankE[c.bySlot] as number;
    const plannedTempC = model.toC(e * (1 - c.f * (1 - model.a)) - c.f * c.k);
    return {
      atMs: c.atMs,
      tempC: c.tempC,
      label: c.label,
      slotEndMs: (slots[c.bySlot] as PriceSlot).endMs,
      plannedTempC,
      met: plannedTempC >= c.tempC - 1e-3,
    };
  });
}

/** A shortfall for each deadline the plan cannot meet, with how far below it the tank stays. */
export function comfortShortfalls(outcomes: ReadonlyArray<ComfortOutcome>, maxC: number): Shortfall[] {
  return outcomes
    .filter((c) => !c.met)
    .map((c) => ({
      device: 'tank' as const,
      kind: 'comfort' as const,
      atMs: c.atMs,
      amount: c.tempC - c.plannedTempC,
      message:
        `${c.label}: the tank is expected at ${c.plannedTempC.toFixed(1)} °C, ${(c.tempC - c.plannedTempC).toFixed(1)} K below the ${c.tempC} °C asked for` +
        (c.tempC > maxC ? ` (above the thermostat's ${maxC} °C)` : ' (not enough power, headroom or time)'),
    }));
}

/**
 * The deadline slot t heats for: the first target at or after t that the tank would miss without
 * this slot's energy (whose effect at the deadline decays by `a` per slot).
 */
export function comfortNeeding(
  targets: ReadonlyArray<ComfortTarget>,
  model: TankModel,
  q: ReadonlyArray<number>,
  tankE: ReadonlyArray<number>,
  t: number,
): ComfortTarget | undefined {
  const qt = q[t] as number;
  if (!(qt > 1e-9)) return undefined;
  return targets.find((c) => c.bySlot >= t && (tankE[c.bySlot] as number) - qt * model.a ** (c.bySlot - t) < c.level - 1e-6);
}
