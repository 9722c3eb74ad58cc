/**
 * The decisions `plan` is made of, each a pure function that can be tested on its own: whether
 * the naive baseline may replace the solved plan, where the legionella cycle lands, each slot's
 * price rank, energy and power figures, and the words of its reason.
 */
import type { EvParams, PriceSlot } from './types.js';

const TOL = 1e-6;

/** No tank or car slot keeps a previous plan's energy. */
export function noneFrozen(tankFixed: readonly (number | undefined)[] | undefined, evFixed: readonly (number | undefined)[] | undefined): boolean {
  return !(tankFixed?.some((v) => v !== undefined) || evFixed?.some((v) => v !== undefined));
}

/** Every slot of the baseline's car energy is either none or at least the car's minimum (the plan's model). */
export function fitsEvMinimum(baseEv: readonly number[], minE: readonly number[] | undefined): boolean {
  return !minE || baseEv.every((v, t) => v <= TOL || v + TOL >= (minE[t] as number));
}

/**
 * Whether the naive baseline may stand in for the solved plan when it is cheaper (the safety net
 * for the approximate on/off DP): only with known prices, a baseline inside the limits that fits
 * the plan's model, and nothing frozen from a previous plan.
 */
export function baselineMayReplace(p: { allFallback: boolean; baseRespectsLimits: boolean; baseFits: boolean; noneFrozen: boolean }): boolean {
  return !p.allFallback && p.baseRespectsLimits && p.baseFits && p.noneFrozen;
}

/** The first slot, by `bySlot`, whose tank energy reaches the legionella level; -1 for none. */
export function legionellaSlotOf(tankE: readonly number[], leg: { level: number; bySlot: number }): number {
  return tankE.findIndex((e, t) => t <= leg.bySlot && e >= leg.level - TOL);
}

/** Each slot's rank by price, 1 for the cheapest (ties keep slot order). */
export function priceRanks(price: readonly number[]): number[] {
  const order = price.map((_, t) => t).sort((x, y) => (price[x] as number) - (price[y] as number));
  const rank = new Array<number>(price.length);
  order.forEach((t, i) => (rank[t] = i + 1));
  return rank;
}

/** The car's charged energy at the end of each slot, kWh in the battery, from the plan's start. */
export function chargedSoFar(evE: readonly number[], efficiency: number): number[] {
  let charged = 0;
  return evE.map((et) => (charged += et * efficiency));
}

/**
 * What a device already took in the slot the plan is made in (its target is for the whole slot),
 * kWh; 0 in every other slot.
 */
export function deliveredBefore(t: number, slotStartMs: number, nowMs: number, d: { slotDeliveredKwh?: number } | null | undefined): number {
  return t === 0 && slotStartMs < nowMs ? Math.max(0, d?.slotDeliveredKwh ?? 0) : 0;
}

/** Energy over hours as a power, kW (0 for no time). */
export function powerOver(energyKwh: number, hours: number): number {
  return hours > 0 ? energyKwh / hours : 0;
}

/** A car that leaves inside the slot: when. */
export function leavesWithin(departureMs: number | undefined, slot: { startMs: number; endMs: number }): { leavesMs?: number } {
  return departureMs !== undefined && departureMs > slot.startMs && departureMs < slot.endMs ? { leavesMs: departureMs } : {};
}

/** The reason's words for the tank's energy in a slot, with the comfort target it heats for. */
export function tankReason(id: string, qt: number, forComfort: { label: string; tempC: number } | undefined): string {
  return `${id} ${qt.toFixed(2)} kWh${forComfort ? ` for ${forComfort.label} (≥ ${forComfort.tempC} °C)` : ''}`;
}

/** The reason's words for control's run-on in a slot (more in a paid-to-consume slot, less once the tank is full). */
export function runOnReason(extra: number, maxC: number): string {
  return extra > 0
    ? `${extra.toFixed(2)} kWh more: heats on to ${maxC} °C (paid to consume)`
    : `${(-extra).toFixed(2)} kWh less: the tank is full from heating on`;
}

/** The slot's price, its rank among the slots, its delta when there is one, and its source. */
export function priceText(ps: Pick<PriceSlot, 'price' | 'delta' | 'source'>, rank: number, n: number, currency: string): string {
  return (
    `${ps.price.toFixed(4)} ${currency}/kWh (rank ${rank}/${n}` +
    `${ps.delta !== 0 ? `, delta ${ps.delta >= 0 ? '+' : ''}${ps.delta.toFixed(4)}` : ''}, ${ps.source})`
  );
}

/** Why a slot is planned as it is: what each device takes (or idle), at what price, bound by what. */
export function slotReason(parts: readonly string[], price: string, binding: readonly string[]): string {
  return `${parts.length > 0 ? parts.join(', ') : 'idle'} at ${price}` + (binding.length > 0 ? `; bound by ${binding.join(', ')}` : '');
}

/** Where the car's need comes from: its state of charge and target, or an energy estimate. */
export function evNeedFrom(e: EvParams): { socPct: number; targetSocPct: number; capacityKwh: number } | { estimateKwh: number } {
  return e.energyNeededKwh === undefined && e.socPct !== undefined
    ? { socPct: e.socPct, targetSocPct: e.targetSocPct ?? 0, capacityKwh: e.capacityKwh ?? 0 }
    : { estimateKwh: e.energyNeededKwh ?? 0 };
}
