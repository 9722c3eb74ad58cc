/**
 * The decisions `setupPlan` is made of, each a pure function that can be tested on its own:
 * which slots are left, the headroom under the location's limit and caps, which caps a device
 * obeys, the tank's start temperature and legionella deadline, and the car's per-slot energy,
 * need and price ranking.
 */
import { estimateTankTempC } from './tank.js';
import { localParts } from './local-time.js';
import type { LegionellaRule, LpcCap, Plan, PriceSlot, Shortfall, TankParams, EvParams } from './types.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** A device whose cap falls short of its rating by less than this still runs at its rating. */
const POWER_TOL_KW = 1e-9;

export function overlap(a0: number, a1: number, b0: number, b1: number): number {
  return Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));
}

/** The slots from the one running at `nowMs` on, and the index of the first in the input. */
export function remainingSlots(slots: readonly PriceSlot[], nowMs: number): { offset: number; slots: PriceSlot[] } {
  const offset = slots.findIndex((s) => s.endMs > nowMs);
  return { offset, slots: offset < 0 ? [] : slots.slice(offset) };
}

/** The part of each slot still ahead at `nowMs` (the running slot only partly). */
export function slotFractions(slots: readonly PriceSlot[], nowMs: number, slotMs: number): number[] {
  return slots.map((s) => Math.min(1, (s.endMs - Math.max(nowMs, s.startMs)) / slotMs));
}

/** What a kWh of shortfall costs in the objective: far above any price in the window. */
export function shortfallPenalty(price: readonly number[]): number {
  let maxAbs = 1;
  for (const p of price) maxAbs = Math.max(maxAbs, Math.abs(p));
  return 1000 * maxAbs;
}

/**
 * Whether an LPC cap binds a device of `scope`: a device-scoped cap naming another device of
 * the kind is that device's, not this one's.
 */
export function capBinds(c: LpcCap, scope: LpcCap['scope'], ids: { tankId?: string | undefined; evId?: string | undefined }): boolean {
  if (c.scope !== scope) return false;
  if (c.deviceId === undefined) return true;
  return c.scope === 'tank' ? c.deviceId === ids.tankId : c.scope === 'ev' ? c.deviceId === ids.evId : true;
}

/** The lowest of the caps that `binds` and overlap the slot, kW (never below 0; Infinity for none). */
export function lowestCapKw(lpc: readonly LpcCap[], slot: { startMs: number; endMs: number }, binds: (c: LpcCap) => boolean): number {
  let cap = Infinity;
  for (const c of lpc) if (binds(c) && overlap(c.startMs, c.endMs, slot.startMs, slot.endMs) > 0) cap = Math.min(cap, Math.max(0, c.maxKw));
  return cap;
}

/** The base load forecast for the input's slot `index`, kW (0 past the end of a series). */
export function baseLoadAt(baseLoadKw: number | readonly number[], index: number): number {
  return typeof baseLoadKw === 'number' ? baseLoadKw : (baseLoadKw[index] ?? 0);
}

export interface SlotHeadroom {
  headroomKw: number;
  /** An LPC cap is below the location limit. */
  lpcBinding: boolean;
  /** ...and it is a reserved one (no unreserved cap lower). */
  reservedBinding: boolean;
  /** The base load is above the limit: by how much, kW, and the limit's name and value. */
  over: { byKw: number; limitKw: number; limitName: string } | null;
}

/** Room the devices have under the location limit and its caps, with what binds the slot. */
export function slotHeadroom(limitKw: number, lpcCapKw: number, reservedCapKw: number, baseKw: number): SlotHeadroom {
  const limit = Math.min(limitKw, lpcCapKw);
  const lpcBinding = lpcCapKw < limitKw;
  const reservedBinding = lpcBinding && reservedCapKw <= lpcCapKw;
  const h = limit - Math.max(0, baseKw);
  const limitName = !lpcBinding ? 'location limit' : reservedBinding ? 'reserved LPC cap' : 'LPC cap';
  return { headroomKw: Math.max(0, h), lpcBinding, reservedBinding, over: h < 0 ? { byKw: -h, limitKw: limit, limitName } : null };
}

/** The shortfall a base load above the location's limit in the slot from `atMs` reports. */
export function baseLoadOverCap(atMs: number, baseKw: number, over: NonNullable<SlotHeadroom['over']>): Shortfall {
  return {
    device: 'location',
    kind: 'baseLoadOverCap',
    atMs,
    amount: over.byKw,
    message: `base load ${baseKw.toFixed(2)} kW is above the ${over.limitName} of ${over.limitKw.toFixed(2)} kW`,
  };
}

/** The end of the window whose slots keep the previous plan's energy: the running slot and `frozenSlots` more. */
export function frozenWindowEndMs(slots: readonly PriceSlot[], frozenSlots: number | undefined, slotMs: number): number {
  return slots.length > 0 ? (slots[0] as PriceSlot).startMs + (1 + Math.max(0, frozenSlots ?? 1)) * slotMs : 0;
}

/** The previous plan's slots that start before `endMs`, by start. */
export function frozenPrevious(previous: Plan | undefined, endMs: number): Map<number, Plan['slots'][number]> {
  const bySlot = new Map<number, Plan['slots'][number]>();
  if (previous) for (const s of previous.slots) if (s.startMs < endMs) bySlot.set(s.startMs, s);
  return bySlot;
}

/**
 * What a frozen slot still asks for: the previous plan's energy for the whole slot less what was
 * already delivered in it, within the (hard) cap of the time left.
 */
export function frozenRest(previous: { energyKwh: number } | undefined, deliveredKwh: number | undefined, capKwh: number): number | undefined {
  if (previous === undefined) return undefined;
  return Math.min(capKwh, Math.max(0, previous.energyKwh - Math.max(0, deliveredKwh ?? 0)));
}

/**
 * The tank's temperature at `nowMs`: measured when a sensor gives one, estimated from the last
 * known one (not a future one), else assumed at its minimum.
 */
export function tankStartTemp(
  tp: TankParams,
  nowMs: number,
  timezone: string,
): { startTempC: number; tempSource: 'measured' | 'estimated' | 'assumed' } {
  if (tp.currentTempC !== undefined && tp.currentTempC !== null && Number.isFinite(tp.currentTempC)) {
    return { startTempC: tp.currentTempC, tempSource: 'measured' };
  }
  if (tp.lastKnown && tp.lastKnown.atMs <= nowMs) {
    const startTempC = estimateTankTempC(tp, tp.lastKnown, nowMs, tp.heatedSinceKwh ?? 0, (ms) => localParts(ms, timezone).hour);
    return { startTempC, tempSource: 'estimated' };
  }
  return { startTempC: tp.minC, tempSource: 'assumed' };
}

/**
 * The tank's energy per slot: its cap (power within its own caps and the headroom, never below
 * 0) and, for a relay, the full element's energy where the element may switch on at all (else 0).
 */
export function tankSlotEnergy(
  powerKw: number,
  capKw: number,
  headroomKw: number,
  slotHours: number,
  fraction: number,
): { cap: number; relayLevel: number } {
  const kw = Math.min(powerKw, capKw, headroomKw);
  return {
    cap: Math.max(0, kw) * slotHours * fraction,
    relayLevel: kw + POWER_TOL_KW >= powerKw ? powerKw * slotHours * fraction : 0,
  };
}

/** A thermostat set below the legionella temperature: the cycle cannot happen. */
export function legionellaUnreachable(rule: LegionellaRule, maxC: number, nowMs: number): Shortfall | null {
  if (!(rule.tempC > maxC)) return null;
  return {
    device: 'tank',
    kind: 'legionella',
    atMs: nowMs,
    amount: rule.tempC - maxC,
    message: `the thermostat (${maxC} °C) is below the legionella temperature (${rule.tempC} °C): the cycle cannot happen`,
  };
}

/**
 * When the next legionella cycle is due and the last slot that ends by then; null when the
 * deadline lies past the planned slots (or before the first ends). A tank at the temperature now
 * has just reached it; one overdue (or due within a slot) gets the overdue grace.
 */
export function legionellaDeadline(
  rule: LegionellaRule,
  startTempC: number,
  nowMs: number,
  slots: readonly PriceSlot[],
  slotMs: number,
): { bySlot: number; deadlineMs: number } | null {
  const n = slots.length;
  if (n === 0) return null;
  const last = startTempC >= rule.tempC ? nowMs : (rule.lastReachedMs ?? -Infinity);
  let deadline = last + rule.everyDays * DAY_MS;
  const overdueBy = nowMs + (rule.overdueWithinHours ?? 24) * HOUR_MS;
  if (deadline < overdueBy && deadline < nowMs + slotMs) deadline = overdueBy;
  let bySlot = -1;
  for (let t = 0; t < n; t++) if ((slots[t] as PriceSlot).endMs <= deadline) bySlot = t;
  if (bySlot >= 0 && deadline <= (slots[n - 1] as PriceSlot).endMs) return { bySlot, deadlineMs: deadline };
  return null;
}

/** The battery energy a car needs, kWh: its estimate, else from its state of charge and target. */
export function evBatteryNeedKwh(e: EvParams): number {
  return e.energyNeededKwh ?? Math.max(0, ((e.targetSocPct ?? 0) - (e.socPct ?? 0)) / 100) * (e.capacityKwh ?? 0);
}

export interface EvSlotEnergy {
  cap: number;
  rawCap: number;
  availHours: number;
  minE: number;
  /** The car is there for some of the slot. */
  present: boolean;
}

/**
 * The car's energy in one slot: while it is there (from `fromMs` to its departure), at its
 * power within its caps and the headroom; none where that is below its minimum power.
 */
export function evSlotEnergy(
  ev: { maxPowerKw: number; minPowerKw: number; departureMs: number },
  fromMs: number,
  slot: { startMs: number; endMs: number },
  slotMs: number,
  capKw: number,
  headroomKw: number,
): EvSlotEnergy {
  const slotHours = slotMs / HOUR_MS;
  const avail = overlap(fromMs, ev.departureMs, slot.startMs, slot.endMs) / slotMs;
  const kw = Math.min(ev.maxPowerKw, capKw, headroomKw);
  const ok = avail > 0 && kw + POWER_TOL_KW >= ev.minPowerKw && kw > 0;
  return {
    cap: ok ? kw * slotHours * avail : 0,
    rawCap: ev.maxPowerKw * slotHours * avail,
    availHours: slotHours * avail,
    minE: ok ? ev.minPowerKw * slotHours * avail : 0,
    present: avail > 0,
  };
}

/** Whether local hour `h` is in the window (start inclusive, end exclusive; it may wrap midnight). */
export function inHourWindow(h: number, window: { startHour: number; endHour: number }): boolean {
  return window.startHour <= window.endHour ? h >= window.startHour && h < window.endHour : h >= window.startHour || h < window.endHour;
}

/**
 * The prices the car's plan ranks slots by. Slots without a price rank before the known ones, so
 * only the energy that cannot wait for their prices is planned inside the known prices. With no
 * prices at all: the fallback window first.
 */
export function evRankingPrices(
  slots: readonly PriceSlot[],
  hours: readonly number[],
  allFallback: boolean,
  minKnownPrice: number,
  window: { startHour: number; endHour: number },
): number[] {
  return allFallback
    ? hours.map((h) => (inHourWindow(h, window) ? 0 : 1))
    : slots.map((s) => (s.source === 'fallback' ? minKnownPrice - 1 : s.price));
}
