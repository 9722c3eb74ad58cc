/**
 * The decisions the control loop's tick is made of that need no device: the mode a user's wish
 * means now, what the plan asks of a device in its slot, how much room a charger has under the
 * location cap, which setpoints raise a load (they go last), and when the next tick lands. Each
 * is a pure function of its inputs, tested on its own.
 */
import type { Plan, PlanSlot } from '../core/types.js';
import type { DeviceMode, Setpoint, SlotTarget } from '../core/control.js';
import type { SgState } from '../core/heat-pump.js';

const HOUR_MS = 3_600_000;

/** SG Ready states by how much they let a pump draw. */
const sgRank: Readonly<Record<SgState, number>> = { block: 0, normal: 1, boost: 2, forced: 3 };

/** The plan's slot that holds `nowMs`, if any. */
export function slotAt(plan: Plan | null, nowMs: number): PlanSlot | undefined {
  return plan?.slots.find((s) => s.startMs <= nowMs && nowMs < s.endMs);
}

/** The start of the control slot that holds `nowMs`: slots are whole multiples of their length. */
export function slotStartOf(nowMs: number, slotMs: number): number {
  return Math.floor(nowMs / slotMs) * slotMs;
}

/** The mode a user's wish means at `nowMs`: a boost that has run out is back to auto. */
export function modeAt(intent: { mode: DeviceMode; boostUntilMs: number | null }, nowMs: number): DeviceMode {
  return intent.mode === 'boost' && (intent.boostUntilMs ?? Infinity) <= nowMs ? 'auto' : intent.mode;
}

/**
 * What the plan asks of a charger in the slot: its energy and power (none where the slot does
 * not name it), and the hours left to catch up: until the slot's end, or until the car leaves
 * when that is within the slot. Null without a plan.
 */
export function chargerTarget(plan: Plan | null, slot: PlanSlot | undefined, id: string, nowMs: number): SlotTarget | null {
  const v = slot?.evs?.[id];
  const untilMs = Math.min(slot?.endMs ?? nowMs, v?.leavesMs ?? Infinity);
  return plan === null
    ? null
    : { energyKwh: v?.energyKwh ?? 0, powerKw: v?.powerKw ?? 0, ...(slot ? { leftH: Math.max(0, untilMs - nowMs) / HOUR_MS } : {}) };
}

/** What the plan asks of a heater in the slot, and whether consuming is paid for there. Null without a plan. */
export function heaterTarget(plan: Plan | null, slot: PlanSlot | undefined, id: string): SlotTarget | null {
  const t = slot?.tanks?.[id];
  return plan === null ? null : { energyKwh: t?.energyKwh ?? 0, powerKw: t?.powerKw ?? 0, paidToConsume: (slot?.price ?? 0) < 0 };
}

/**
 * Room under the location cap for a charger choosing its phases, kW, reckoning the base load as
 * `decide()` does: the main meter less what the devices draw, or the forecast without a meter.
 */
export function roomUnderCapKw(
  capKw: number,
  locationPowerW: number | undefined,
  devicesPowerW: readonly (number | undefined)[],
  baseLoadKw: () => number,
): number {
  const devicesKw = devicesPowerW.reduce<number>((sum, w) => sum + Math.max(0, (w ?? 0) / 1000), 0);
  return capKw - (locationPowerW === undefined ? baseLoadKw() : Math.max(0, locationPowerW / 1000 - devicesKw));
}

/**
 * The slowest device read of a tick that ran longer than a tick, as [id, ms after the tick's
 * start]; undefined when the tick kept time or read nothing.
 */
export function slowestLateRead(doneAfterMs: ReadonlyMap<string, number>, tookMs: number, tickMs: number): [string, number] | undefined {
  if (!(tookMs > tickMs) || doneAfterMs.size === 0) return undefined;
  return [...doneAfterMs].reduce((a, b) => (b[1] > a[1] ? b : a));
}

/**
 * Whether a setpoint lets its device draw more than it was last given: a heater allowed; a pump
 * in any state above the one it has (leaving a lock lets it start at all); a charger above the
 * current last sent (or with none sent yet: not a raise).
 */
export function raisesLoad(s: Setpoint, was: { sgState: SgState | undefined; appliedA: number | undefined }): boolean {
  if (s.kind === 'heater') return s.allow;
  if (s.kind === 'heatPump') return s.state !== 'block' && (was.sgState === undefined || sgRank[s.state] > sgRank[was.sgState]);
  return s.currentA > (was.appliedA ?? Infinity);
}

/** The devices the hour guard throttles now that it did not before (each logged when it starts). */
export function newlyGuarded(guarded: readonly string[], before: ReadonlySet<string>): string[] {
  return guarded.filter((id) => !before.has(id));
}

/**
 * The setpoints as the devices took them, for the pump's lock budget: a pump's state is the one
 * its device reports after the write (a down one is held in normal operation; unknown after a
 * failed write: as decided).
 */
export function asGiven(setpoints: readonly Setpoint[], sgStateOf: (id: string) => SgState | undefined): Setpoint[] {
  return setpoints.map((s) => (s.kind === 'heatPump' ? { ...s, state: sgStateOf(s.id) ?? s.state } : s));
}

/** The delay to the next tick, so that ticks land on whole multiples of the period. */
export function delayToNextTickMs(nowMs: number, tickMs: number): number {
  return tickMs - (nowMs % tickMs);
}
