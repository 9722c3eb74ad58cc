/**
 * Turns a {@link PlanInput} into per-slot arrays the solvers use: prices per device, headroom,
 * device caps, tank model and state, EV need and availability, frozen decisions.
 */
import { WattshiftError } from '../errors.js';
import { assertPlanInputBounded } from './input-check.js';
import { StorageWorkspace } from './convex-dp.js';
import { DiscreteWorkspace } from './discrete-dp.js';
import { slotLocalInfo } from './local-time.js';
import { tankModel, type TankModel } from './tank.js';
import { comfortTargets, type ComfortTarget } from './comfort.js';
import {
  baseLoadAt, baseLoadOverCap, capBinds, evBatteryNeedKWh, evRankingPrices, evSlotEnergy, frozenPrevious, frozenRest, frozenWindowEndMs,
  legionellaDeadline, legionellaUnreachable, lowestCapKW, remainingSlots, shortfallPenalty, slotFractions, slotHeadroom, tankSlotEnergy,
  tankStartTemp,
} from './plan-setup-steps.js';
import type { Plan, PlanInput, PriceSlot, Shortfall } from './types.js';

export interface TankSetup {
  id: string;
  model: TankModel;
  e0: number;
  startTempC: number;
  tempSource: 'measured' | 'estimated' | 'assumed';
  /** Largest energy per slot (power, device LPC, headroom, slot fraction). */
  cap: number[];
  /** Full-slot element energy for relay "on" (0 where the relay may not switch on). */
  relayLevel: number[];
  price: number[];
  terminal: number;
  legionella: { level: number; bySlot: number; deadlineMs: number } | null;
  /** Energy floor at the end of each slot: the comfort floor, raised at comfort deadlines. */
  floor: number[];
  comfort: ComfortTarget[];
  fixed: (number | undefined)[];
}

export interface EvSetup {
  id: string;
  needGrid: number;
  maxExtraGrid: number;
  cap: number[];
  /** Max power × availability, ignoring caps (for the baseline). */
  rawCap: number[];
  /** Hours of each slot the car is there (from arrival or now to departure). */
  availHours: number[];
  minE: number[];
  price: number[];
  lastSlot: number;
  fixed: (number | undefined)[];
}

/** Memory the solvers reuse across the many solves of one plan, made on first use. */
export class SolverWorkspace {
  #discrete: DiscreteWorkspace | undefined;
  #storage: StorageWorkspace | undefined;

  get discrete(): DiscreteWorkspace {
    return (this.#discrete ??= new DiscreteWorkspace());
  }

  get storage(): StorageWorkspace {
    return (this.#storage ??= new StorageWorkspace());
  }
}

export interface Setup {
  slots: PriceSlot[];
  n: number;
  slotMs: number;
  slotHours: number;
  fraction: number[];
  hours: number[];
  dayIndex: number[];
  allFallback: boolean;
  price: number[];
  headroomKW: number[];
  /** Headroom energy per slot. */
  headroomE: number[];
  lpcBinding: boolean[];
  /** The binding location cap of the slot is a reserved (probable) one. */
  reservedBinding: boolean[];
  tank: TankSetup | null;
  ev: EvSetup | null;
  shortfalls: Shortfall[];
  penalty: number;
  workspace: SolverWorkspace;
}

/**
 * A car need this small is met (the planner counts a target reached within it): planning it gave
 * a sliver of energy far below any charger's minimum power.
 */
const NEGLIGIBLE_NEED_KWH = 1e-6;

/** The id that keys a tank's (or a car's) slots and outcome in a plan. */
export const tankIdOf = (t: { id?: string }): string => t.id ?? 'tank';
export const evIdOf = (e: { id?: string }): string => e.id ?? 'ev';

export function setupPlan(input: PlanInput, nowMs: number, previous: Plan | undefined): Setup {
  assertPlanInputBounded(input);
  if (!Number.isFinite(nowMs)) throw new WattshiftError('PLAN_INPUT_INVALID', 'nowMs must be finite');
  const first = input.slots[0];
  const slotMs = first ? first.endMs - first.startMs : 3_600_000;
  if (!(slotMs > 0)) throw new WattshiftError('PLAN_INPUT_INVALID', 'slots must have a positive length');
  const { offset, slots } = remainingSlots(input.slots, nowMs);
  const n = slots.length;
  const slotHours = slotMs / 3_600_000;
  const fraction = slotFractions(slots, nowMs, slotMs);
  const { hours, dayIndex } = slotLocalInfo(slots.map((s) => s.startMs), input.timezone);
  const known = slots.filter((s) => s.source !== 'fallback');
  const allFallback = known.length === 0;
  const price = slots.map((s) => s.price);
  const meanKnown = known.length > 0 ? known.reduce((x, s) => x + s.price, 0) / known.length : 0;
  const minKnown = known.reduce((x, s) => Math.min(x, s.price), Infinity);
  const penalty = shortfallPenalty(price);
  const shortfalls: Shortfall[] = [];

  const loc = input.location;
  const lpc = loc.lpc ?? [];
  const ids = { tankId: input.tank ? tankIdOf(input.tank) : undefined, evId: input.ev ? evIdOf(input.ev) : undefined };
  const capFor = (scope: 'location' | 'tank' | 'ev', s: PriceSlot): number => lowestCapKW(lpc, s, (c) => capBinds(c, scope, ids));
  const headroomKW: number[] = [];
  const lpcBinding: boolean[] = [];
  const reservedBinding: boolean[] = [];
  slots.forEach((s, t) => {
    const base = baseLoadAt(loc.baseLoadKW, t + Math.max(0, offset));
    const reservedCap = lowestCapKW(lpc, s, (c) => c.scope === 'location' && c.reservationId !== undefined);
    const room = slotHeadroom(loc.limitKW, capFor('location', s), reservedCap, base);
    lpcBinding.push(room.lpcBinding);
    reservedBinding.push(room.reservedBinding);
    if (room.over) shortfalls.push(baseLoadOverCap(s.startMs, base, room.over));
    headroomKW.push(room.headroomKW);
  });
  const headroomE = headroomKW.map((h, t) => h * slotHours * (fraction[t] as number));
  const prevSlot = frozenPrevious(previous, frozenWindowEndMs(slots, input.options?.frozenSlots, slotMs));
  const deliveredInFirst = (t: number, delivered: number | undefined): number | undefined => (t === 0 ? delivered : 0);

  let tank: TankSetup | null = null;
  if (input.tank) {
    const tp = input.tank;
    const model = tankModel(tp, slotHours, hours);
    const { startTempC, tempSource } = tankStartTemp(tp, nowMs, input.timezone);
    const e0 = Math.min(model.eMax, Math.max(0, model.toE(startTempC)));
    const perSlot = slots.map((s, t) => tankSlotEnergy(tp.powerKW, capFor('tank', s), headroomKW[t] as number, slotHours, fraction[t] as number));
    const cap = perSlot.map((x) => x.cap);
    let legionella: TankSetup['legionella'] = null;
    const rule = tp.legionella;
    if (rule) {
      const unreachable = legionellaUnreachable(rule, tp.maxC, nowMs);
      if (unreachable) shortfalls.push(unreachable);
      const due = rule.tempC <= tp.maxC ? legionellaDeadline(rule, startTempC, nowMs, slots, slotMs) : null;
      if (due) legionella = { level: model.toE(rule.tempC), ...due };
    }
    const comfort = comfortTargets(tp.comfort ?? [], slots, nowMs, model);
    tank = {
      id: tankIdOf(tp), model, e0, startTempC, tempSource, cap, relayLevel: perSlot.map((x) => x.relayLevel), floor: comfort.floor, comfort: comfort.targets,
      price: slots.map((s) => (s.source === 'fallback' ? meanKnown : s.price)),
      terminal: Math.min(model.eMax, Math.max(model.eFloor, e0)),
      legionella,
      fixed: slots.map((s, t) => frozenRest(prevSlot.get(s.startMs)?.tanks?.[tankIdOf(tp)], deliveredInFirst(t, tp.slotDeliveredKWh), cap[t] as number)),
    };
  }

  let ev: EvSetup | null = null;
  if (input.ev) {
    const e = input.ev;
    const batteryNeed = evBatteryNeedKWh(e);
    if (!(e.efficiency > 0 && e.efficiency <= 1)) throw new WattshiftError('PLAN_INPUT_INVALID', 'EV efficiency must be in (0, 1]');
    const from = Math.max(nowMs, e.arrivalMs ?? nowMs);
    const perSlot = slots.map((s, t) => evSlotEnergy(e, from, s, slotMs, capFor('ev', s), headroomKW[t] as number));
    const cap = perSlot.map((x) => x.cap);
    ev = {
      id: evIdOf(e),
      needGrid: batteryNeed > NEGLIGIBLE_NEED_KWH ? batteryNeed / e.efficiency : 0,
      maxExtraGrid: Math.max(0, e.maxExtraKWh ?? 0) / e.efficiency,
      cap,
      rawCap: perSlot.map((x) => x.rawCap),
      availHours: perSlot.map((x) => x.availHours),
      minE: perSlot.map((x) => x.minE),
      price: evRankingPrices(slots, hours, allFallback, minKnown, input.options?.evFallbackWindow ?? { startHour: 22, endHour: 6 }),
      lastSlot: perSlot.map((x) => x.present).lastIndexOf(true),
      fixed: slots.map((s, t) => frozenRest(prevSlot.get(s.startMs)?.evs?.[evIdOf(e)], deliveredInFirst(t, e.slotDeliveredKWh), cap[t] as number)),
    };
  }
  return { slots, n, slotMs, slotHours, fraction, hours, dayIndex, allFallback, price, headroomKW, headroomE, lpcBinding, reservedBinding, tank, ev, shortfalls, penalty,
    workspace: new SolverWorkspace() };
}
