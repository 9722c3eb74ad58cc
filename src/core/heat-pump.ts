/**
 * An SG Ready heat pump heating the hot water tank, pure parts: how it is planned (the tank DP in
 * electric energy), which of its four operating states it gets each tick, and the lock budget.
 *
 * States and contacts as the SG Ready label defines them (Bundesverband Wärmepumpe, "SG Ready"
 * Regularien 2.1; contact 1 : contact 2): `block` 1:0, the utility lock (at most 2 hours of hard
 * lock); `normal` 0:0; `boost` 0:1, a switch-on recommendation (raised setpoints); `forced` 1:1, a
 * definitive start command.
 */
import type { Plan, TankParams } from './types.js';
import type { DeviceMode, HeaterPhaseSeen, SlotTarget } from './control-types.js';

export type SgState = 'block' | 'normal' | 'boost' | 'forced';

/** Contact 1 and contact 2 closed, per state. */
export const sgContacts: Readonly<Record<SgState, readonly [boolean, boolean]>> = {
  block: [true, false],
  normal: [false, false],
  boost: [false, true],
  forced: [true, true],
};

/**
 * The tank a heat pump heats, in electric energy: every heat term (capacity, loss, draw) divided by
 * the COP, so that the tank DP's energy per slot is what the pump draws (its cost) while
 * temperatures stay those of the water. The retention factor a = 1 − UA·Δt/C is unchanged.
 */
export function heatPumpAsTank<T extends TankParams>(tank: T, cop: number): T {
  return {
    ...tank,
    volumeL: tank.volumeL / cop,
    heatLossWPerK: tank.heatLossWPerK / cop,
    ...(tank.drawProfileKwh ? { drawProfileKwh: tank.drawProfileKwh.map((kwh) => kwh / cop) } : {}),
  };
}

/** Slots worth a lock: priced above the mean of the plan's slots from now on. */
export function expensiveNow(plan: Plan | null, nowMs: number): boolean {
  if (plan === null || plan.mode !== 'optimal') return false;
  const ahead = plan.slots.filter((s) => s.endMs > nowMs);
  const now = ahead.find((s) => s.startMs <= nowMs);
  if (!now || ahead.length < 2) return false;
  const mean = ahead.reduce((sum, s) => sum + s.price, 0) / ahead.length;
  return now.price > mean;
}

// ---------------------------------------------------------------------------------------------
// The lock budget

export interface LockLimits {
  maxMinutes: number;
  perDay: number;
  maxMinutesPerDay: number;
  /** Time in another state before a new lock, minutes. */
  minGapMinutes: number;
}

export interface LockBudget {
  /** The local day the counts are of ("YYYY-MM-DD"). */
  day: string;
  locks: number;
  /** Lock time of ended locks today, ms. */
  usedMs: number;
  /** When the running lock started; null when not locked. */
  sinceMs: number | null;
  /** When the last lock ended. */
  endedMs: number | null;
}

export const emptyBudget = (day: string): LockBudget => ({ day, locks: 0, usedMs: 0, sinceMs: null, endedMs: null });

/** Whether a lock may start or go on now; `why` says what refuses it. */
export function lockAllowed(b: LockBudget, limits: LockLimits, nowMs: number, day: string): { ok: boolean; why?: string } {
  const budget = b.day === day ? b : { ...emptyBudget(day), sinceMs: b.sinceMs };
  const runningMs = budget.sinceMs === null ? 0 : nowMs - budget.sinceMs;
  if (budget.usedMs + runningMs >= limits.maxMinutesPerDay * 60_000) return { ok: false, why: `${limits.maxMinutesPerDay} lock minutes a day used` };
  if (budget.sinceMs !== null) {
    return runningMs < limits.maxMinutes * 60_000 ? { ok: true } : { ok: false, why: `a lock lasts at most ${limits.maxMinutes} minutes` };
  }
  if (budget.locks >= limits.perDay) return { ok: false, why: `${limits.perDay} locks a day used` };
  if (b.endedMs !== null && nowMs - b.endedMs < limits.minGapMinutes * 60_000)
    return { ok: false, why: `${limits.minGapMinutes} minutes between locks` };
  return { ok: true };
}

/** The budget after the state applied at `nowMs` (a lock over midnight counts on the day it ends). */
export function afterState(b: LockBudget, state: SgState, nowMs: number, day: string): LockBudget {
  const budget = b.day === day ? { ...b } : { ...emptyBudget(day), sinceMs: b.sinceMs, endedMs: b.endedMs };
  if (state === 'block' && budget.sinceMs === null) return { ...budget, sinceMs: nowMs, locks: budget.locks + 1 };
  if (state !== 'block' && budget.sinceMs !== null)
    return { ...budget, sinceMs: null, endedMs: nowMs, usedMs: budget.usedMs + (nowMs - budget.sinceMs) };
  return budget;
}

// ---------------------------------------------------------------------------------------------
// The state each tick

export interface HeatPumpNow extends HeaterPhaseSeen {
  kind: 'heatPump';
  id: string;
  available: boolean;
  mode: DeviceMode;
  temperatureC: number | undefined;
  floorC: number;
  /** The pump's own setpoint in normal operation, °C. */
  normalC: number;
  maxC: number;
  /** Electric power while it heats, kW. */
  electricKw: number;
  powerW: number | undefined;
  slotEnergyKwh: number;
  planned: SlotTarget | null;
  capKw?: number;
  /** The slot is expensive (see {@link expensiveNow}). */
  expensive: boolean;
  /** The lock budget's answer now. */
  lock: { ok: boolean; why?: string };
}

export interface SgWant {
  state: SgState;
  reason: string;
  /** Asked by the plan: the hourly guard may turn it into normal operation. */
  byPlan?: boolean;
  /** A lock was wanted and the budget refused it: why. */
  refused?: string;
}

const running = (t: SlotTarget, slotEnergyKwh: number): boolean => t.energyKwh > 1e-6 && slotEnergyKwh < t.energyKwh - 1e-6;

/** A lock where the budget allows it, else normal operation with the refusal. */
function lockOr(d: HeatPumpNow, reason: string): SgWant {
  if (d.temperatureC === undefined || d.temperatureC < d.floorC) return { state: 'normal', reason: `${reason}; no lock below the comfort floor` };
  return d.lock.ok
    ? { state: 'block', reason }
    : { state: 'normal', reason: `${reason}; lock refused: ${d.lock.why ?? ''}`, refused: d.lock.why ?? '' };
}

/** The state the pump should be in now, before the caps (precedence as in `decide`). */
export function wantedSgState(d: HeatPumpNow): SgWant {
  if (!d.available) return { state: 'normal', reason: 'device unavailable: normal operation' };
  if (d.temperatureC === undefined) return { state: 'normal', reason: "temperature unknown: the pump's own thermostat" };
  if (d.temperatureC < d.floorC) {
    return d.floorC < d.normalC
      ? { state: 'normal', reason: `below comfort floor ${d.floorC} °C: the pump heats to ${d.normalC} °C` }
      : { state: 'boost', reason: `below comfort floor ${d.floorC} °C` };
  }
  if (d.mode === 'boost') return { state: 'boost', reason: 'boost' };
  if (d.mode === 'off') return { state: 'normal', reason: "mode off: the pump's own thermostat, not boosted" };
  if (d.planned === null) return { state: 'normal', reason: "no plan: the pump's own thermostat" };
  if (d.planned.paidToConsume && d.temperatureC < d.maxC - 1)
    return { state: 'forced', reason: `paid to consume: start command up to ${d.maxC} °C`, byPlan: true };
  if (running(d.planned, d.slotEnergyKwh)) return { state: 'boost', reason: `planned ${d.planned.energyKwh.toFixed(2)} kWh this slot`, byPlan: true };
  if (d.capKw !== undefined) return lockOr(d, `device cap ${d.capKw} kW`);
  if (d.expensive) return lockOr(d, 'expensive slot, no heat planned: lock');
  return { state: 'normal', reason: d.planned.energyKwh > 1e-6 ? 'slot energy reached' : "not planned: the pump's own thermostat" };
}

/** The state within the room the caps leave (`roomKw`): a pump that may run there is locked where the budget allows. */
export function sgStateWithin(d: HeatPumpNow, want: SgWant, roomKw: number, capNote: string): SgWant {
  if (d.electricKw <= roomKw + 1e-9) return want;
  if (want.state === 'block') return want;
  return lockOr(d, capNote);
}
