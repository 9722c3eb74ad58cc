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
  baseLoadAt,
  baseLoadOverCap,
  capBinds,
  evBatteryNeedKwh,
  evRankingPrices,
  evSlotEnergy,
  frozenPrevious,
  frozenRest,
  frozenWindowEndMs,
  legionellaDeadline,
  legionellaUnreachable,
  lowestCapKw,
  remainingSlots,
  shortfallPenalty,
  slotFractions,
  slotHeadroom,
  tankSlotEnergy,
  tankStartTemp,
} from './plan-setup-steps.js';
import type { EvParams, LpcCap, Plan, PlanInput, PriceSlot, Shortfall, TankParams } from './types.js';

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
  headroomKw: number[];
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

/** What the tank's and the car's set-ups share: the slots left, their headroom and caps, the frozen plan. */
interface SlotFrame {
  input: PlanInput;
  nowMs: number;
  slots: PriceSlot[];
  slotMs: number;
  slotHours: number;
  fraction: number[];
  hours: number[];
  headroomKw: number[];
  /** The lowest LPC cap that binds a device of the scope in the slot, kW. */
  capFor: (scope: LpcCap['scope'], s: PriceSlot) => number;
  /** The previous plan's frozen slots, by start. */
  prevSlot: Map<number, Plan['slots'][number]>;
  shortfalls: Shortfall[];
}

/** What a device already took in the running slot counts only there. */
const deliveredInFirst = (t: number, delivered: number | undefined): number | undefined => (t === 0 ? delivered : 0);

export function setupPlan(input: PlanInput, nowMs: number, previous: Plan | undefined): Setup {
  assertPlanInputBounded(input);
  if (!Number.isFinite(nowMs)) throw new WattshiftError('PLAN_INPUT_INVALID', 'nowMs must be finite');
  const firstSlot = input.slots[0];
  const slotMs = firstSlot ? firstSlot.endMs - firstSlot.startMs : 3_600_000;
  if (!(slotMs > 0)) throw new WattshiftError('PLAN_INPUT_INVALID', 'slots must have a positive length');
  const { offset, slots } = remainingSlots(input.slots, nowMs);
  const slotHours = slotMs / 3_600_000;
  const fraction = slotFractions(slots, nowMs, slotMs);
  const { hours, dayIndex } = slotLocalInfo(
    slots.map((s) => s.startMs),
    input.timezone,
  );
  const allFallback = slots.every((s) => s.source === 'fallback');
  const price = slots.map((s) => s.price);
  const shortfalls: Shortfall[] = [];
  const lpc = input.location.lpc ?? [];
  const ids = { tankId: input.tank ? tankIdOf(input.tank) : undefined, evId: input.ev ? evIdOf(input.ev) : undefined };
  const capFor = (scope: LpcCap['scope'], s: PriceSlot): number => lowestCapKw(lpc, s, (c) => capBinds(c, scope, ids));
  const room = locationHeadroom(input, slots, offset, capFor, shortfalls);
  const frame: SlotFrame = {
    input,
    nowMs,
    slots,
    slotMs,
    slotHours,
    fraction,
    hours,
    headroomKw: room.headroomKw,
    capFor,
    shortfalls,
    prevSlot: frozenPrevious(previous, frozenWindowEndMs(slots, input.options?.frozenSlots, slotMs)),
  };
  return {
    slots,
    n: slots.length,
    slotMs,
    slotHours,
    fraction,
    hours,
    dayIndex,
    allFallback,
    price,
    headroomKw: room.headroomKw,
    headroomE: room.headroomKw.map((h, t) => h * slotHours * (fraction[t] as number)),
    lpcBinding: room.lpcBinding,
    reservedBinding: room.reservedBinding,
    tank: input.tank ? setupTank(frame, input.tank) : null,
    ev: input.ev ? setupEv(frame, input.ev, allFallback) : null,
    shortfalls,
    penalty: shortfallPenalty(price),
    workspace: new SolverWorkspace(),
  };
}

/** Each slot's headroom under the location limit and caps, what binds it, and a shortfall where the base load alone is over. */
function locationHeadroom(
  input: PlanInput,
  slots: readonly PriceSlot[],
  offset: number,
  capFor: SlotFrame['capFor'],
  shortfalls: Shortfall[],
): { headroomKw: number[]; lpcBinding: boolean[]; reservedBinding: boolean[] } {
  const loc = input.location;
  const lpc = loc.lpc ?? [];
  const headroomKw: number[] = [];
  const lpcBinding: boolean[] = [];
  const reservedBinding: boolean[] = [];
  slots.forEach((s, t) => {
    const base = baseLoadAt(loc.baseLoadKw, t + Math.max(0, offset));
    const reservedCap = lowestCapKw(lpc, s, (c) => c.scope === 'location' && c.reservationId !== undefined);
    const room = slotHeadroom(loc.limitKw, capFor('location', s), reservedCap, base);
    lpcBinding.push(room.lpcBinding);
    reservedBinding.push(room.reservedBinding);
    if (room.over) shortfalls.push(baseLoadOverCap(s.startMs, base, room.over));
    headroomKw.push(room.headroomKw);
  });
  return { headroomKw, lpcBinding, reservedBinding };
}

/** The tank's model, start, per-slot caps, legionella and comfort targets, prices and frozen slots. */
function setupTank(f: SlotFrame, tp: TankParams): TankSetup {
  const { slots, nowMs, slotHours } = f;
  const model = tankModel(tp, slotHours, f.hours);
  const { startTempC, tempSource } = tankStartTemp(tp, nowMs, f.input.timezone);
  const e0 = Math.min(model.eMax, Math.max(0, model.toE(startTempC)));
  const perSlot = slots.map((s, t) => tankSlotEnergy(tp.powerKw, f.capFor('tank', s), f.headroomKw[t] as number, slotHours, f.fraction[t] as number));
  const cap = perSlot.map((x) => x.cap);
  let legionella: TankSetup['legionella'] = null;
  const rule = tp.legionella;
  if (rule) {
    const unreachable = legionellaUnreachable(rule, tp.maxC, nowMs);
    if (unreachable) f.shortfalls.push(unreachable);
    const due = rule.tempC <= tp.maxC ? legionellaDeadline(rule, startTempC, nowMs, slots, f.slotMs) : null;
    if (due) legionella = { level: model.toE(rule.tempC), ...due };
  }
  const comfort = comfortTargets(tp.comfort ?? [], slots, nowMs, model);
  // Slots without a price cost the tank the mean of the known ones.
  const known = slots.filter((s) => s.source !== 'fallback');
  const meanKnown = known.length > 0 ? known.reduce((x, s) => x + s.price, 0) / known.length : 0;
  return {
    id: tankIdOf(tp),
    model,
    e0,
    startTempC,
    tempSource,
    cap,
    relayLevel: perSlot.map((x) => x.relayLevel),
    floor: comfort.floor,
    comfort: comfort.targets,
    price: slots.map((s) => (s.source === 'fallback' ? meanKnown : s.price)),
    terminal: Math.min(model.eMax, Math.max(model.eFloor, e0)),
    legionella,
    fixed: slots.map((s, t) =>
      frozenRest(f.prevSlot.get(s.startMs)?.tanks?.[tankIdOf(tp)], deliveredInFirst(t, tp.slotDeliveredKwh), cap[t] as number),
    ),
  };
}

/** The car's grid need, per-slot caps and minimums while it is there, ranking prices and frozen slots. */
function setupEv(f: SlotFrame, e: EvParams, allFallback: boolean): EvSetup {
  const { slots, nowMs } = f;
  const batteryNeed = evBatteryNeedKwh(e);
  if (!(e.efficiency > 0 && e.efficiency <= 1)) throw new WattshiftError('PLAN_INPUT_INVALID', 'EV efficiency must be in (0, 1]');
  const from = Math.max(nowMs, e.arrivalMs ?? nowMs);
  const perSlot = slots.map((s, t) => evSlotEnergy(e, from, s, f.slotMs, f.capFor('ev', s), f.headroomKw[t] as number));
  const cap = perSlot.map((x) => x.cap);
  const minKnown = slots.reduce((x, s) => (s.source !== 'fallback' ? Math.min(x, s.price) : x), Infinity);
  return {
    id: evIdOf(e),
    needGrid: batteryNeed > NEGLIGIBLE_NEED_KWH ? batteryNeed / e.efficiency : 0,
    maxExtraGrid: Math.max(0, e.maxExtraKwh ?? 0) / e.efficiency,
    cap,
    rawCap: perSlot.map((x) => x.rawCap),
    availHours: perSlot.map((x) => x.availHours),
    minE: perSlot.map((x) => x.minE),
    price: evRankingPrices(slots, f.hours, allFallback, minKnown, f.input.options?.evFallbackWindow ?? { startHour: 22, endHour: 6 }),
    lastSlot: perSlot.map((x) => x.present).lastIndexOf(true),
    fixed: slots.map((s, t) => frozenRest(f.prevSlot.get(s.startMs)?.evs?.[evIdOf(e)], deliveredInFirst(t, e.slotDeliveredKwh), cap[t] as number)),
  };
}
