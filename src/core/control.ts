/**
 * The control decision of one tick: what each device should do right now, from the plan's current
 * slot, fresh readings and the hard limits. Pure; the control loop applies the result.
 *
 * Precedence, strongest first:
 *  1. the location cap (LPC caps and the location limit) and the main fuse per phase hold,
 *     whatever else is asked;
 *  2. a device that is unavailable, or a tank whose temperature is unknown or below its floor,
 *     gets its safe state (heater allowed, charger at its safe current);
 *  3. the user's mode (`boost` runs at full power, `off` pauses);
 *  4. the plan: run while the slot's planned energy is not yet metered; in a slot where
 *     consuming is paid for (negative effective price) the heater runs on until the tank is at
 *     its maximum temperature, whatever the planned energy.
 *
 * The hourly energy guard sits between 3 and 4: in an hour the plan holds to the month's capacity
 * step, what the plan runs is throttled so the location's metered energy stays within the hour's
 * allowance (the car first, then the heater; never what the floor, safety or the user's mode asks).
 *
 * A charger that is unavailable gets a safe limit, never more than the plan asks now: a safe
 * state must not start a load the plan left out.
 */

import { fuseHeadroom, type FuseInput } from './fuse.js';
import { sgStateWithin, wantedSgState, type HeatPumpNow, type SgState } from './heat-pump.js';
import type { DeviceMode, HeaterPhaseSeen, SlotTarget } from './control-types.js';

export type { DeviceMode, HeaterPhaseSeen, SlotTarget } from './control-types.js';

export interface HeaterNow extends HeaterPhaseSeen {
  kind: 'hotWaterTank';
  id: string;
  available: boolean;
  mode: DeviceMode;
  /** Measured or trustworthy estimated temperature, °C; undefined when neither exists. */
  temperatureC: number | undefined;
  floorC: number;
  /** Maximum tank temperature, °C: the heater runs up to it in a paid-to-consume slot. */
  maxC?: number;
  /** Element power, kW (what it draws when allowed and the thermostat calls). */
  elementKw: number;
  /** Measured power now, W. */
  powerW: number | undefined;
  /** Energy metered since the current slot started, kWh. */
  slotEnergyKwh: number;
  /** The plan's target for the current slot; null when there is no plan (thermostat fallback). */
  planned: SlotTarget | null;
  /** A resource LPC cap on this device now, kW. */
  capKw?: number;
}

export interface ChargerNow {
  kind: 'evCharger';
  id: string;
  available: boolean;
  mode: DeviceMode;
  plugged: boolean;
  powerW: number | undefined;
  slotEnergyKwh: number;
  planned: SlotTarget | null;
  phases: 1 | 3;
  voltageV: number;
  minCurrentA: number;
  maxCurrentA: number;
  safeCurrentA: number;
  /** A resource LPC cap on this device now, kW. */
  capKw?: number;
  /** Power per amp, W/A, where it is not phases × voltage (a 3-phase charger on an IT supply: √3·U). */
  wattsPerAmp?: number;
  fuse?: ChargerFuse;
  /**
   * A charger that switches phases: the phase count to set, if any (`phases` above is what the
   * current is for) and, while a switch is under way, why it is paused (0 A across the switch).
   */
  phaseCommand?: { phases?: 1 | 3; pausedFor?: string };
}

/** Most current the main fuse leaves on a charger's phases now, A, with the reason. */
export interface ChargerFuse {
  maxA: number;
  reason: string;
  /** The reading and shares `maxA` came from, where there was one: room kept for a heater comes off its lines. */
  input?: FuseInput;
}

export type DeviceNow = HeaterNow | ChargerNow | HeatPumpNow;

export interface SiteNow {
  /** The binding cap now: min(location limit, active LPC caps), kW. */
  capKw: number;
  /** Measured location power (main meter), W, when there is one. */
  locationPowerW: number | undefined;
  /** Forecast base load, kW, used when there is no main meter. */
  baseLoadKw: number;
  /** The plan holds this hour to the month's capacity step: at most `allowanceKwh` at the main meter. */
  hourBudget?: HourBudget;
  /**
   * The base load the hourly guard expects for the rest of the hour, kW (the learned forecast's
   * upper 80 % bound): the guard reckons with it where it is above the base load now.
   */
  guardBaseLoadKw?: number | undefined;
  /** Devices the guard throttled in the last decision: they need {@link GUARD_RESUME_MARGIN} more room to run again. */
  guardedBefore?: readonly string[];
}

/**
 * Hysteresis of the hourly guard, as a share of the device's power (the element, or the charger's
 * minimum): a device the guard switched off runs again only with this much more room than it needs, so that
 * the base load's wobble near the allowance does not switch it every tick.
 */
export const GUARD_RESUME_MARGIN = 0.25;

export interface HourBudget {
  allowanceKwh: number;
  /** Metered at the main meter since the hour began, kWh. */
  usedKwh: number;
  /** Time left in the hour, ms. */
  remainingMs: number;
}

export type Setpoint =
  | {
      kind: 'heater';
      id: string;
      allow: boolean;
      reason: string;
      /** Blocked because a cap leaves no room for the element: the device is asked to hold the block to the cap's end. */
      heldByCap?: boolean;
    }
  | { kind: 'charger'; id: string; currentA: number; reason: string; phases?: 1 | 3 }
  | { kind: 'heatPump'; id: string; state: SgState; reason: string; refused?: string };

export interface Decision {
  setpoints: Setpoint[];
  /** Power the decision expects the controllable devices to draw at most, kW. */
  expectedDeviceKw: number;
  /** Estimated uncontrollable load, kW. */
  baseLoadKw: number;
  /** Devices the hourly energy guard throttled below what the plan asked. */
  guarded: string[];
}

const isRunning = (target: SlotTarget | null, slotEnergyKwh: number): boolean =>
  target !== null && target.energyKwh > 1e-6 && slotEnergyKwh < target.energyKwh - 1e-6;

/** Paid to consume: heat to maxC, and start again only 1 K below it, so the relay does not chatter. */
const paidRoom = (d: HeaterNow, maxC: number): boolean =>
  d.temperatureC !== undefined && (d.temperatureC < maxC - 1 || (d.temperatureC < maxC && (d.powerW ?? 0) > 0));

interface Want {
  /** Asked by the plan (not by safety or the user): the hourly guard may throttle it. */
  byPlan?: boolean;
}

function wantedHeater(d: HeaterNow): { allow: boolean; reason: string } & Want {
  if (!d.available) return { allow: true, reason: 'device unavailable: safe state (allowed)' };
  if (d.temperatureC === undefined) return { allow: true, reason: 'temperature unknown: heating allowed' };
  if (d.temperatureC < d.floorC) return { allow: true, reason: `below comfort floor ${d.floorC} °C` };
  if (d.mode === 'boost') return { allow: true, reason: 'boost' };
  if (d.mode === 'off') return { allow: false, reason: 'mode off (floor still protected)' };
  if (d.planned === null) return { allow: true, reason: 'no plan: thermostat' };
  if (d.planned.paidToConsume && d.maxC !== undefined && paidRoom(d, d.maxC)) {
    return { allow: true, reason: `paid to consume: heating to ${d.maxC} °C`, byPlan: true };
  }
  return isRunning(d.planned, d.slotEnergyKwh)
    ? { allow: true, reason: `planned ${d.planned.energyKwh.toFixed(2)} kWh this slot`, byPlan: true }
    : { allow: false, reason: d.planned.energyKwh > 1e-6 ? 'slot energy reached' : 'not planned' };
}

/** Within this of its maximum a tank is full enough to wait (see {@link heldWhenFull}), K; a common thermostat's hysteresis. */
export const NEAR_FULL_K = 5;

/**
 * A tank near its maximum and idle on its thermostat, which the plan would leave switched on, is
 * switched off while chargers share the main fuse: left on, its thermostat could start it between
 * two ticks, so the chargers would have to keep its whole current free all the while. It is switched
 * on again once it has cooled by {@link NEAR_FULL_K}, in a tick that keeps its room.
 */
function heldWhenFull(d: HeaterNow, want: ReturnType<typeof wantedHeater>): ReturnType<typeof wantedHeater> {
  if (!want.allow || want.byPlan !== true || d.maxC === undefined || d.temperatureC === undefined) return want;
  if (d.temperatureC <= d.maxC - NEAR_FULL_K || drawKw(d) >= d.elementKw / 2) return want;
  return {
    allow: false,
    reason: `idle at ${d.temperatureC.toFixed(1)} °C near its ${d.maxC} °C maximum: off while the chargers share the main fuse`,
  };
}

const wattsPerAmpOf = (d: ChargerNow): number => d.wattsPerAmp ?? d.phases * d.voltageV;

function ampsFor(kw: number, d: ChargerNow): number {
  return (kw * 1000) / wattsPerAmpOf(d);
}

/**
 * The main fuse holds whatever else is asked: below the minimum current the charger pauses. Room
 * kept for a heater comes off the lines the charger shares with others once (see `fuseHeadroom`).
 */
function withinFuse<W extends { currentA: number; reason: string }>(want: W, d: ChargerNow, reservedA: number): W {
  if (d.fuse === undefined) return want;
  const kept = reservedA > 0 && d.fuse.input ? fuseHeadroom({ ...d.fuse.input, reservedA }) : undefined;
  const maxA = reservedA <= 0 ? d.fuse.maxA : kept?.kind === 'ok' ? Math.min(d.fuse.maxA, kept.maxChargerA) : Math.max(0, d.fuse.maxA - reservedA);
  if (want.currentA <= maxA + 1e-9) return want;
  const a = Math.floor(maxA + 1e-9);
  const reason = maxA < d.fuse.maxA ? `main fuse: ${reservedA.toFixed(1)} A kept for a heater switching on` : d.fuse.reason;
  return { ...want, currentA: a >= d.minCurrentA ? a : 0, reason };
}

/**
 * A heater that may draw and whose current the meter's phase reading (where the fuse headroom came
 * from) may not hold: idle (its thermostat, or the pump's own controller, may start it at any
 * moment), or drawing only since that reading. A tank may draw while allowed, a heat pump unless
 * locked. Its current is kept free, as a 1-phase load at 230 V (on one line on TN, on two on IT),
 * the most it can add to any one line; once a reading holds it, it is house load there.
 */
function startingHeaterA(devices: readonly DeviceNow[], setpoints: readonly Setpoint[]): number {
  let amps = 0;
  for (const d of devices) {
    if (d.kind === 'evCharger') continue;
    const kw = d.kind === 'heatPump' ? d.electricKw : d.elementKw;
    const mayDraw = setpoints.some((p) => p.id === d.id && (p.kind === 'heater' ? p.allow : p.kind === 'heatPump' && p.state !== 'block'));
    const unseen = d.sincePhaseReading === true || drawKw(d) < kw / 2;
    if (mayDraw && unseen) amps += (kw * 1000) / 230;
  }
  return amps;
}

/** Charging current for a power budget: below the minimum current a charger cannot charge at all. */
function currentWithin(kw: number, d: ChargerNow): number {
  const a = Math.min(d.maxCurrentA, Math.floor(ampsFor(kw, d) + 1e-9));
  return a >= d.minCurrentA ? a : 0;
}

/**
 * Whether a plugged-in charger is asked for current now: by the user's boost, by the plan's slot
 * (energy still to meter), or, without a plan, at its safe current. The one rule for what a charger
 * wants, whether it is the current to set or a claim on a line it shares under the main fuse.
 */
export function chargerWantsCurrent(x: Pick<ChargerNow, 'plugged' | 'mode' | 'planned' | 'slotEnergyKwh'>): boolean {
  return x.plugged && askedForCurrent(x);
}

/**
 * Whether the mode and the plan ask for current now, a car plugged in or not: the limit is set
 * ahead of the car (a charger that does not tell whether one is plugged in still charges).
 */
function askedForCurrent(x: Pick<ChargerNow, 'mode' | 'planned' | 'slotEnergyKwh'>): boolean {
  if (x.mode === 'off') return false;
  return x.mode === 'boost' || x.planned === null || isRunning(x.planned, x.slotEnergyKwh);
}

function wantedCharger(d: ChargerNow): { currentA: number; reason: string } & Want {
  if (d.phaseCommand?.pausedFor !== undefined) return { currentA: 0, reason: d.phaseCommand.pausedFor };
  if (!d.available) {
    const planned = wantedCharger({ ...d, available: true }).currentA;
    return { currentA: Math.min(d.safeCurrentA, planned), reason: 'device unavailable: safe limit' };
  }
  if (!askedForCurrent(d)) return { currentA: 0, reason: d.mode === 'off' ? 'mode off' : 'not planned' };
  if (d.mode === 'boost') return { currentA: d.maxCurrentA, reason: 'boost' };
  if (d.planned === null) return { currentA: d.safeCurrentA, reason: 'no plan: safe current' };
  // Behind the slot's energy (a heater took the room first, a stall, a late plan): what is left over
  // the time left, up to the charger's maximum; the headroom below still bounds it.
  const left = d.planned.leftH;
  const catchUpKw = left !== undefined && left > 1e-6 ? (d.planned.energyKwh - d.slotEnergyKwh) / left : 0;
  const kw = Math.max(d.planned.powerKw, catchUpKw);
  const a = Math.max(d.minCurrentA, currentWithin(kw, d));
  const reason =
    kw > d.planned.powerKw + 1e-6
      ? `planned ${d.planned.powerKw.toFixed(1)} kW, ${kw.toFixed(1)} kW to catch up`
      : `planned ${d.planned.powerKw.toFixed(1)} kW`;
  return { currentA: Math.min(d.maxCurrentA, a), reason, byPlan: true };
}

const phasesOf = (d: ChargerNow): { phases?: 1 | 3 } => (d.phaseCommand?.phases !== undefined ? { phases: d.phaseCommand.phases } : {});

function drawKw(d: DeviceNow): number {
  return Math.max(0, (d.powerW ?? 0) / 1000);
}

/** Decides every device's setpoint for this tick. */
export function decide(devices: readonly DeviceNow[], site: SiteNow): Decision {
  const baseLoadKw =
    site.locationPowerW === undefined ? site.baseLoadKw : Math.max(0, site.locationPowerW / 1000 - devices.reduce((s, d) => s + drawKw(d), 0));
  let headroomKw = site.capKw - baseLoadKw;
  // The hour's allowance left, as the mean power it allows until the hour ends, less the base load
  // now or the one forecast for the rest of the hour, whichever is higher.
  const b = site.hourBudget;
  const guardBaseKw = Math.max(baseLoadKw, site.guardBaseLoadKw ?? 0);
  let guardKw = b ? Math.max(0, b.allowanceKwh - b.usedKwh) / Math.max(b.remainingMs / 3_600_000, 1e-6) - guardBaseKw : Infinity;
  const guardNote = b ? `hourly energy guard: ${b.usedKwh.toFixed(2)} of ${b.allowanceKwh.toFixed(2)} kWh used (capacity step)` : '';
  const guarded: string[] = [];
  const setpoints: Setpoint[] = [];
  let expectedDeviceKw = 0;

  // Heaters first: hot water is the comfort promise; then chargers share what is left.
  const fuseShared = devices.some((c) => c.kind === 'evCharger' && c.fuse !== undefined && chargerWantsCurrent(c));
  for (const d of devices) {
    if (d.kind !== 'hotWaterTank') continue;
    const want = fuseShared ? heldWhenFull(d, wantedHeater(d)) : wantedHeater(d);
    const roomKw = Math.min(headroomKw, d.capKw ?? Infinity);
    // A cap that leaves no room for the element blocks it whatever the plan, the floor or the user
    // wants, and marks the block as the cap's: the device then holds it to the cap's end by itself.
    if (d.elementKw > roomKw + 1e-9) {
      const which = roomKw < headroomKw ? `device cap ${d.capKw} kW` : `cap ${site.capKw} kW leaves no room`;
      setpoints.push({ kind: 'heater', id: d.id, allow: false, reason: want.allow ? which : want.reason, heldByCap: true });
      continue;
    }
    const heaterMargin = site.guardedBefore?.includes(d.id) ? d.elementKw * GUARD_RESUME_MARGIN : 0;
    if (want.allow && want.byPlan && d.elementKw + heaterMargin > guardKw + 1e-9) {
      guarded.push(d.id);
      setpoints.push({ kind: 'heater', id: d.id, allow: false, reason: guardNote });
      continue;
    }
    if (want.allow) {
      headroomKw -= d.elementKw;
      guardKw -= d.elementKw;
      expectedDeviceKw += d.elementKw;
    }
    setpoints.push({ kind: 'heater', id: d.id, allow: want.allow, reason: want.reason });
  }
  // Heat pumps next: a pump that may draw where the caps leave no room is locked while its budget lasts.
  for (const d of devices) {
    if (d.kind !== 'heatPump') continue;
    const roomKw = Math.min(headroomKw, d.capKw ?? Infinity);
    const capNote = roomKw < headroomKw ? `device cap ${d.capKw} kW` : `cap ${site.capKw} kW leaves no room`;
    let want = sgStateWithin(d, wantedSgState(d), roomKw, capNote);
    const pumpMargin = site.guardedBefore?.includes(d.id) ? d.electricKw * GUARD_RESUME_MARGIN : 0;
    if (want.byPlan && d.electricKw + pumpMargin > guardKw + 1e-9) {
      guarded.push(d.id);
      want = { state: 'normal', reason: guardNote };
    }
    if (want.state !== 'block') {
      headroomKw -= d.electricKw;
      guardKw -= d.electricKw;
      expectedDeviceKw += d.electricKw;
    }
    setpoints.push({
      kind: 'heatPump',
      id: d.id,
      state: want.state,
      reason: want.reason,
      ...(want.refused !== undefined ? { refused: want.refused } : {}),
    });
  }
  const reservedA = startingHeaterA(devices, setpoints);
  for (const d of devices) {
    if (d.kind !== 'evCharger') continue;
    const want = withinFuse(wantedCharger(d), d, reservedA);
    const wantKw = d.plugged ? (want.currentA * wattsPerAmpOf(d)) / 1000 : 0;
    const capRoomKw = Math.min(headroomKw, d.capKw ?? Infinity);
    // Only a car the guard stopped needs the margin to start again; one it slowed keeps following the room.
    const stoppedByGuard = site.guardedBefore?.includes(d.id) === true && drawKw(d) === 0;
    const chargerMargin = stoppedByGuard ? ((d.minCurrentA * wattsPerAmpOf(d)) / 1000) * GUARD_RESUME_MARGIN : 0;
    const roomKw = want.byPlan ? Math.min(capRoomKw, guardKw - chargerMargin) : capRoomKw;
    if (wantKw > roomKw + 1e-9) {
      const currentA = currentWithin(Math.max(0, roomKw), d);
      const kw = (currentA * wattsPerAmpOf(d)) / 1000;
      const byGuard = roomKw < capRoomKw;
      if (byGuard) guarded.push(d.id);
      const reason = byGuard ? guardNote : capRoomKw < headroomKw ? `device cap ${d.capKw} kW` : `limited by cap ${site.capKw} kW`;
      headroomKw -= kw;
      guardKw -= kw;
      expectedDeviceKw += kw;
      setpoints.push({ kind: 'charger', id: d.id, currentA, reason, ...phasesOf(d) });
      continue;
    }
    headroomKw -= wantKw;
    guardKw -= wantKw;
    expectedDeviceKw += wantKw;
    setpoints.push({ kind: 'charger', id: d.id, currentA: want.currentA, reason: want.reason, ...phasesOf(d) });
  }
  return { setpoints, expectedDeviceKw, baseLoadKw, guarded };
}
