/**
 * Turns a {@link PlanInput} into per-slot arrays the solvers use: prices per device, headroom,
 * device caps, tank model and state, EV need and availability, frozen decisions.
 */
import { WattshiftError } from '../errors.js';
import { assertPlanInputBounded } from './input-check.js';
import { StorageWorkspace } from './convex-dp.js';
import { DiscreteWorkspace } from './discrete-dp.js';
import { slotLocalInfo } from './local-time.js';
import { estimateTankTempC, tankModel, type TankModel } from './tank.js';
import { comfortTargets, type ComfortTarget } from './comfort.js';
import { localParts } from './local-time.js';
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

function overlap(a0: number, a1: number, b0: number, b1: number): number {
  return Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));
}

/**
 * What a frozen slot still asks for: the previous plan's energy for the whole slot less what was
 * already delivered in it, within the (hard) cap of the time left.
 */
function frozenRest(previous: { energyKWh: number } | undefined, deliveredKWh: number | undefined, capKWh: number): number | undefined {
  if (previous === undefined) return undefined;
  return Math.min(capKWh, Math.max(0, previous.energyKWh - Math.max(0, deliveredKWh ?? 0)));
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
  const offset = input.slots.findIndex((s) => s.endMs > nowMs);
  const slots = offset < 0 ? [] : input.slots.slice(offset);
  const n = slots.length;
  const slotHours = slotMs / 3_600_000;
  const fraction = slots.map((s) => Math.min(1, (s.endMs - Math.max(nowMs, s.startMs)) / slotMs));
  const { hours, dayIndex } = slotLocalInfo(slots.map((s) => s.startMs), input.timezone);
  const known = slots.filter((s) => s.source !== 'fallback');
  const allFallback = known.length === 0;
  const price = slots.map((s) => s.price);
  const meanKnown = known.length > 0 ? known.reduce((x, s) => x + s.price, 0) / known.length : 0;
  const minKnown = known.reduce((x, s) => Math.min(x, s.price), Infinity);
  let maxAbs = 1;
  for (const p of price) maxAbs = Math.max(maxAbs, Math.abs(p));
  const penalty = 1000 * maxAbs;
  const shortfalls: Shortfall[] = [];

  const loc = input.location;
  const lpc = loc.lpc ?? [];
  // A device-scoped cap naming another device of the kind is that device's, not this one's.
  const mine = (c: { scope: string; deviceId?: string }): boolean =>
    c.deviceId === undefined || (c.scope === 'tank' ? c.deviceId === (input.tank && tankIdOf(input.tank)) : c.scope === 'ev' ? c.deviceId === (input.ev && evIdOf(input.ev)) : true);
  const capFor = (scope: 'location' | 'tank' | 'ev', s: PriceSlot): number => {
    let cap = Infinity;
    for (const c of lpc) if (c.scope === scope && mine(c) && overlap(c.startMs, c.endMs, s.startMs, s.endMs) > 0) cap = Math.min(cap, Math.max(0, c.maxKW));
    return cap;
  };
  const reservedCapFor = (s: PriceSlot): number => {
    let cap = Infinity;
    for (const c of lpc) if (c.scope === 'location' && c.reservationId !== undefined && overlap(c.startMs, c.endMs, s.startMs, s.endMs) > 0) cap = Math.min(cap, Math.max(0, c.maxKW));
    return cap;
  };
  const headroomKW: number[] = [];
  const lpcBinding: boolean[] = [];
  const reservedBinding: boolean[] = [];
  slots.forEach((s, t) => {
    const base = typeof loc.baseLoadKW === 'number' ? loc.baseLoadKW : (loc.baseLoadKW[t + Math.max(0, offset)] ?? 0);
    const lpcCap = capFor('location', s);
    const limit = Math.min(loc.limitKW, lpcCap);
    lpcBinding.push(lpcCap < loc.limitKW);
    reservedBinding.push(lpcCap < loc.limitKW && reservedCapFor(s) <= lpcCap);
    const h = limit - Math.max(0, base);
    if (h < 0) {
      shortfalls.push({ device: 'location', kind: 'baseLoadOverCap', atMs: s.startMs, amount: -h,
        message: `base load ${base.toFixed(2)} kW is above the ${lpcCap >= loc.limitKW ? 'location limit' : reservedBinding[t] ? 'reserved LPC cap' : 'LPC cap'} of ${limit.toFixed(2)} kW` });
    }
    headroomKW.push(Math.max(0, h));
  });
  const headroomE = headroomKW.map((h, t) => h * slotHours * (fraction[t] as number));
  const prevSlot = new Map<number, Plan['slots'][number]>();
  const frozenEnd = n > 0 ? (slots[0] as PriceSlot).startMs + (1 + Math.max(0, input.options?.frozenSlots ?? 1)) * slotMs : 0;
  if (previous) for (const s of previous.slots) if (s.startMs < frozenEnd) prevSlot.set(s.startMs, s);

  let tank: TankSetup | null = null;
  if (input.tank) {
    const tp = input.tank;
    const model = tankModel(tp, slotHours, hours);
    let startTempC: number;
    let tempSource: TankSetup['tempSource'];
    if (tp.currentTempC !== undefined && tp.currentTempC !== null && Number.isFinite(tp.currentTempC)) {
      startTempC = tp.currentTempC;
      tempSource = 'measured';
    } else if (tp.lastKnown && tp.lastKnown.atMs <= nowMs) {
      startTempC = estimateTankTempC(tp, tp.lastKnown, nowMs, tp.heatedSinceKWh ?? 0, (ms) => localParts(ms, input.timezone).hour);
      tempSource = 'estimated';
    } else {
      startTempC = tp.minC;
      tempSource = 'assumed';
    }
    const e0 = Math.min(model.eMax, Math.max(0, model.toE(startTempC)));
    const cap: number[] = [];
    const relayLevel: number[] = [];
    slots.forEach((s, t) => {
      const kw = Math.min(tp.powerKW, capFor('tank', s), headroomKW[t] as number);
      const f = fraction[t] as number;
      cap.push(Math.max(0, kw) * slotHours * f);
      relayLevel.push(kw + 1e-9 >= tp.powerKW ? tp.powerKW * slotHours * f : 0);
    });
    let legionella: TankSetup['legionella'] = null;
    const rule = tp.legionella;
    if (rule && rule.tempC > tp.maxC) {
      shortfalls.push({ device: 'tank', kind: 'legionella', atMs: nowMs, amount: rule.tempC - tp.maxC,
        message: `the thermostat (${tp.maxC} °C) is below the legionella temperature (${rule.tempC} °C): the cycle cannot happen` });
    }
    if (rule && n > 0 && rule.tempC <= tp.maxC) {
      // A tank at the legionella temperature now has just reached it.
      const last = startTempC >= rule.tempC ? nowMs : (rule.lastReachedMs ?? -Infinity);
      let deadline = last + rule.everyDays * 86_400_000;
      const overdueBy = nowMs + (rule.overdueWithinHours ?? 24) * 3_600_000;
      if (deadline < overdueBy && deadline < nowMs + slotMs) deadline = overdueBy;
      let bySlot = -1;
      for (let t = 0; t < n; t++) if ((slots[t] as PriceSlot).endMs <= deadline) bySlot = t;
      if (bySlot >= 0 && deadline <= (slots[n - 1] as PriceSlot).endMs) legionella = { level: model.toE(rule.tempC), bySlot, deadlineMs: deadline };
    }
    const comfort = comfortTargets(tp.comfort ?? [], slots, nowMs, model);
    tank = {
      id: tankIdOf(tp), model, e0, startTempC, tempSource, cap, relayLevel, floor: comfort.floor, comfort: comfort.targets,
      price: slots.map((s) => (s.source === 'fallback' ? meanKnown : s.price)),
      terminal: Math.min(model.eMax, Math.max(model.eFloor, e0)),
      legionella,
      fixed: slots.map((s, t) => frozenRest(prevSlot.get(s.startMs)?.tanks?.[tankIdOf(tp)], t === 0 ? tp.slotDeliveredKWh : 0, cap[t] as number)),
    };
  }

  let ev: EvSetup | null = null;
  if (input.ev) {
    const e = input.ev;
    const batteryNeed = e.energyNeededKWh ?? Math.max(0, ((e.targetSocPct ?? 0) - (e.socPct ?? 0)) / 100) * (e.capacityKWh ?? 0);
    if (!(e.efficiency > 0 && e.efficiency <= 1)) throw new WattshiftError('PLAN_INPUT_INVALID', 'EV efficiency must be in (0, 1]');
    const cap: number[] = [];
    const rawCap: number[] = [];
    const availHours: number[] = [];
    const minE: number[] = [];
    let lastSlot = -1;
    const from = Math.max(nowMs, e.arrivalMs ?? nowMs);
    slots.forEach((s, t) => {
      const avail = overlap(from, e.departureMs, s.startMs, s.endMs) / slotMs;
      const kw = Math.min(e.maxPowerKW, capFor('ev', s), headroomKW[t] as number);
      const ok = avail > 0 && kw + 1e-9 >= e.minPowerKW && kw > 0;
      cap.push(ok ? kw * slotHours * avail : 0);
      rawCap.push(e.maxPowerKW * slotHours * avail);
      availHours.push(slotHours * avail);
      minE.push(ok ? e.minPowerKW * slotHours * avail : 0);
      if (avail > 0) lastSlot = t;
    });
    const fallbackWindow = input.options?.evFallbackWindow ?? { startHour: 22, endHour: 6 };
    const inWindow = (h: number): boolean => (fallbackWindow.startHour <= fallbackWindow.endHour
      ? h >= fallbackWindow.startHour && h < fallbackWindow.endHour
      : h >= fallbackWindow.startHour || h < fallbackWindow.endHour);
    ev = {
      id: evIdOf(e),
      needGrid: batteryNeed > NEGLIGIBLE_NEED_KWH ? batteryNeed / e.efficiency : 0,
      maxExtraGrid: Math.max(0, e.maxExtraKWh ?? 0) / e.efficiency,
      cap,
      rawCap,
      availHours,
      minE,
      // Slots without a price rank before the known ones, so only the energy that cannot wait
      // for their prices is planned inside the known prices. With no prices at all: the window.
      price: allFallback
        ? hours.map((h) => (inWindow(h) ? 0 : 1))
        : slots.map((s) => (s.source === 'fallback' ? minKnown - 1 : s.price)),
      lastSlot,
      fixed: slots.map((s, t) => frozenRest(prevSlot.get(s.startMs)?.evs?.[evIdOf(e)], t === 0 ? e.slotDeliveredKWh : 0, cap[t] as number)),
    };
  }
  return { slots, n, slotMs, slotHours, fraction, hours, dayIndex, allFallback, price, headroomKW, headroomE, lpcBinding, reservedBinding, tank, ev, shortfalls, penalty,
    workspace: new SolverWorkspace() };
}
