import type { Clock, PhaseReading } from '../ports.js';
import type { Logger } from '../log.js';
import type { DeviceConfig } from '../config/schema.js';
import type { SupervisedDevice, DeviceReading } from '../devices/supervisor.js';
import type { Plan, PlanSlot } from '../core/types.js';
import { chargerWantsCurrent, decide, type Decision, type DeviceMode, type DeviceNow, type HourBudget, type Setpoint } from '../core/control.js';
import type { Metering } from './metering.js';
import { startLoop, type LoopHandle } from '../timing/loop.js';
import type { FuseCharger, FuseGuard } from './fuse-guard.js';
import { createHeatPumpControl } from './heat-pump-control.js';
import { createZoneControl } from './zone-control.js';
import type { ZonePresetName } from '../config/schema-zone.js';
import { createPhaseControl, switchingChargerNow, wantedChargerKw } from './phase-control.js';
import { switchesPhases } from '../core/phase-switch.js';
import { rateLimitedWarn } from '../log-limit.js';
import {
  asGiven,
  chargerTarget,
  delayToNextTickMs,
  heaterTarget,
  modeAt,
  newlyGuarded,
  raisesLoad,
  roomUnderCapKw,
  slotAt,
  slotStartOf,
  slowestLateRead,
} from './control-steps.js';

export interface ControlledDevice {
  config: DeviceConfig;
  /** Metering subject of the device's energy. */
  subject: string;
  device: SupervisedDevice;
}

/** The user's wishes per device, from MQTT commands. */
export interface DeviceIntent {
  mode: DeviceMode;
  boostUntilMs: number | null;
}

/** What one tick saw and did, for status, home automation and the planner. */
export interface ControlSnapshot {
  atMs: number;
  slotStartMs: number;
  readings: Map<string, DeviceReading>;
  /** Energy metered per device since the slot started, kWh. */
  slotEnergyKwh: Map<string, number>;
  decision: Decision;
  locationPowerW: number | undefined;
  capKw: number;
}

export interface ControlInputs {
  plan(): Plan | null;
  /** min(location limit, active location LPC caps) at this instant, kW. */
  locationCapKw(nowMs: number): number;
  /** Active resource LPC cap of a device, kW, or undefined. */
  deviceCapKw(deviceId: string, nowMs: number): number | undefined;
  /** End of the LPC cap window binding a device now (its own or the location's), or undefined. */
  capEndMs?(deviceId: string, nowMs: number): number | undefined;
  intent(deviceId: string): DeviceIntent;
  baseLoadKw(nowMs: number): number;
  /** The base load the hourly guard expects for the rest of the hour, kW, when a learned forecast gives one. */
  guardBaseLoadKw?(nowMs: number): number | undefined;
  /** Tank temperature to act on when no sensor answers (a trustworthy estimate), or undefined. */
  estimatedTankC(deviceId: string, nowMs: number): number | undefined;
  /** A heated zone's preset chosen by command (absent: `comfort` for every zone). */
  zonePreset?(deviceId: string): ZonePresetName;
}

const hasDevice = (devices: readonly ControlledDevice[], id: string): boolean => devices.some((c) => c.config.id === id);

const HOUR_MS = 3_600_000;

/** The hour's allowance when the plan holds it, with the main meter's energy in the hour so far. */
function hourBudget(slot: PlanSlot | undefined, metering: Metering, subject: string | undefined, nowMs: number): HourBudget | undefined {
  if (slot?.hourAllowanceKwh === undefined || subject === undefined) return undefined;
  const hourStartMs = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
  const open = metering.openHours().get(subject);
  // Without this hour's metering (just started, meter down) there is nothing to guard on.
  if (!open || open.hourStartMs !== hourStartMs) return undefined;
  return { allowanceKwh: slot.hourAllowanceKwh, usedKwh: open.kwh, remainingMs: hourStartMs + HOUR_MS - nowMs };
}

/**
 * The one control loop: read every device (each under its own timeout, a failed one never stops
 * the loop), meter, decide for the current slot under the hard limits, apply, and report the
 * snapshot. Ticks never overlap.
 */
export function startControlLoop(deps: {
  devices: readonly ControlledDevice[];
  mainMeter: ControlledDevice | null;
  /** The main fuse per phase and the meter that gives the phase currents (read, not metered, unless it is the main meter). */
  fuse?: { guard: FuseGuard; meter: SupervisedDevice; meterId: string };
  metering: Metering;
  inputs: ControlInputs;
  clock: Clock;
  logger: Logger;
  tickMs: number;
  slotMinutes: number;
  /** The site's time zone: a heat pump's lock budget is per local day. Default UTC. */
  timezone?: string;
  onTick: (snapshot: ControlSnapshot) => void;
}): LoopHandle & { last(): ControlSnapshot | null } {
  const log = deps.logger.child({ component: 'control' });
  const slotMs = deps.slotMinutes * 60_000;
  let slotStartMs = -1;
  const slotStartEnergy = new Map<string, number>();
  const slotIntegrated = new Map<string, { kwh: number; lastMs: number }>();
  let last: ControlSnapshot | null = null;
  const all = deps.mainMeter ? [...deps.devices, deps.mainMeter] : [...deps.devices];
  /** Devices the guard throttles now, so HOUR_GUARD is logged when it starts, not on every tick. */
  let guarding = new Set<string>();
  const heatPumps = createHeatPumpControl({ timezone: deps.timezone ?? 'UTC', logger: deps.logger });
  const phaseControl = createPhaseControl(deps.logger);
  const zones = createZoneControl({
    zones: deps.devices.flatMap((c) => (c.config.kind === 'zone' ? [c.config] : [])),
    timezone: deps.timezone ?? 'UTC',
    logger: deps.logger,
    presetOf: (id) => deps.inputs.zonePreset?.(id) ?? 'comfort',
  });

  function slotEnergy(id: string, r: DeviceReading, now: number): number {
    if (r.energyKwh !== undefined) {
      if (!slotStartEnergy.has(id)) slotStartEnergy.set(id, r.energyKwh);
      return Math.max(0, r.energyKwh - slotStartEnergy.get(id)!);
    }
    // No counter: integrate power over the slot.
    const acc = slotIntegrated.get(id) ?? { kwh: 0, lastMs: now };
    if (r.powerW !== undefined) acc.kwh += (Math.max(0, r.powerW) / 1000) * ((now - acc.lastMs) / 3_600_000);
    acc.lastMs = now;
    slotIntegrated.set(id, acc);
    return acc.kwh;
  }

  /** The charging current last sent to each charger, A. */
  const appliedA = new Map<string, number>();
  /** Since when each heater (tank or heat pump) has been seen drawing, clock ms; none while idle. */
  const drawingSinceMs = new Map<string, number>();
  /** A phase reading holds a heater's current only if taken a little after it was first seen drawing. */
  const PHASE_SETTLE_MS = 5_000;
  /** Whether the fuse's phase reading may not hold a heater's current yet (tracked from its power now). */
  function heaterSeen(
    id: string,
    heaterKw: number,
    powerW: number | undefined,
    phases: PhaseReading | undefined,
    now: number,
  ): { sincePhaseReading?: boolean } {
    if ((powerW ?? 0) / 1000 < heaterKw / 2) drawingSinceMs.delete(id);
    else if (!drawingSinceMs.has(id)) drawingSinceMs.set(id, now);
    if (!deps.fuse) return {};
    return { sincePhaseReading: (phases?.atMs ?? -Infinity) < (drawingSinceMs.get(id) ?? now) + PHASE_SETTLE_MS };
  }

  /** Reading the devices took longer than a tick: logged a few times per wall-clock window, not every tick. */
  const slowWarn = rateLimitedWarn(log, { perWindow: 3, windowMs: 3_600_000 });

  /**
   * Reads every device side by side, each under its own timeout (and the fuse's meter when it is
   * not one of them), noting when each read ended, ms after `startedMs`.
   */
  async function readAll(
    signal: AbortSignal,
    startedMs: number,
  ): Promise<{ readings: Map<string, DeviceReading>; phases: PhaseReading | undefined; doneAfterMs: Map<string, number> }> {
    const readings = new Map<string, DeviceReading>();
    const fuseMeter = deps.fuse && !hasDevice(all, deps.fuse.meterId) ? deps.fuse.meter : undefined;
    const doneAfterMs = new Map<string, number>();
    const timedRead = async (id: string, device: SupervisedDevice): Promise<DeviceReading> => {
      const r = await device.read(signal);
      doneAfterMs.set(id, deps.clock.nowMs() - startedMs);
      return r;
    };
    const [, fuseMeterReading] = await Promise.all([
      Promise.all(all.map(async (c) => readings.set(c.config.id, await timedRead(c.config.id, c.device)))),
      fuseMeter ? timedRead(deps.fuse!.meterId, fuseMeter) : undefined,
    ]);
    const phases = (fuseMeterReading ?? (deps.fuse ? readings.get(deps.fuse.meterId) : undefined))?.phases;
    return { readings, phases, doneAfterMs };
  }

  /** A new slot starts every device's slot energy afresh. */
  function rollSlot(now: number): void {
    const currentSlot = slotStartOf(now, slotMs);
    if (currentSlot === slotStartMs) return;
    slotStartMs = currentSlot;
    slotStartEnergy.clear();
    slotIntegrated.clear();
  }

  /** What the loop knows of this tick before it asks each device what it wants. */
  interface TickView {
    now: number;
    readings: Map<string, DeviceReading>;
    phases: PhaseReading | undefined;
    energies: Map<string, number>;
    plan: Plan | null;
    slot: PlanSlot | undefined;
    modeOf: (id: string) => DeviceMode;
  }

  /**
   * Every charger under the fuse that draws or wants to, so chargers on a common line split its
   * free current; one that neither draws nor wants any claims no share of it. (A charger that
   * switches phases draws on the phases it charges on now.)
   */
  function chargersUnderFuse(v: TickView): (FuseCharger & { sharing: boolean })[] {
    return deps.devices.flatMap((c) => {
      if (c.config.kind !== 'evCharger') return [];
      const r = v.readings.get(c.config.id);
      const planned = chargerTarget(v.plan, v.slot, c.config.id, v.now);
      const wants = chargerWantsCurrent({
        plugged: r?.ev?.plugged === true,
        mode: v.modeOf(c.config.id),
        planned,
        slotEnergyKwh: v.energies.get(c.config.id) ?? 0,
      });
      return [
        {
          id: c.config.id,
          voltageV: c.config.model.voltageV,
          safeCurrentA: c.config.safeCurrentA,
          powerW: r?.powerW,
          phases: switchesPhases(c.config.model) ? phaseControl.actual(c.config.id, r?.ev?.phases, c.config.model.phases) : c.config.model.phases,
          ...(switchesPhases(c.config.model) && r?.ev?.phases === undefined ? { drawUncertain: true } : {}),
          sharing: wants || (r?.powerW ?? 0) > 0,
        },
      ];
    });
  }

  /** What each device is and wants now, for decide(): its reading, mode, plan, caps and fuse. */
  function devicesNow(v: TickView, capKw: number, locationPowerW: number | undefined): DeviceNow[] {
    const { now, readings, phases } = v;
    const fuseChargers = chargersUnderFuse(v);
    const roomKw = roomUnderCapKw(
      capKw,
      locationPowerW,
      // A solar device's power is production, not a load under the cap.
      deps.devices.map((c) => (c.config.kind === 'solar' ? undefined : readings.get(c.config.id)?.powerW)),
      () => deps.inputs.baseLoadKw(now),
    );
    const nows: DeviceNow[] = [];
    for (const c of deps.devices) {
      const cfg = c.config;
      const r = readings.get(cfg.id)!;
      const e = v.energies.get(cfg.id)!;
      const mode = v.modeOf(cfg.id);
      const available = c.device.health().state === 'up';
      const capKw = deps.inputs.deviceCapKw(cfg.id, now);
      if (cfg.kind === 'hotWaterTank') {
        nows.push({
          kind: 'hotWaterTank',
          id: cfg.id,
          available,
          mode,
          temperatureC: r.temperatureC ?? deps.inputs.estimatedTankC(cfg.id, now),
          floorC: cfg.model.floorC,
          maxC: cfg.model.maxC,
          elementKw: cfg.model.elementKw,
          powerW: r.powerW,
          slotEnergyKwh: e,
          planned: heaterTarget(v.plan, v.slot, cfg.id),
          ...(capKw !== undefined ? { capKw } : {}),
          ...heaterSeen(cfg.id, cfg.model.elementKw, r.powerW, phases, now),
        });
      } else if (cfg.kind === 'heatPump') {
        nows.push(
          heatPumps.now(
            cfg,
            {
              available,
              mode,
              temperatureC: r.temperatureC ?? deps.inputs.estimatedTankC(cfg.id, now),
              powerW: r.powerW,
              slotEnergyKwh: e,
              planned: heaterTarget(v.plan, v.slot, cfg.id),
              ...(capKw !== undefined ? { capKw } : {}),
              ...heaterSeen(cfg.id, cfg.model.electricKw, r.powerW, phases, now),
            },
            v.plan,
            now,
          ),
        );
      } else if (cfg.kind === 'evCharger') {
        nows.push(chargerNow(v, cfg, { r, e, mode, available, capKw }, fuseChargers, roomKw));
      } else if (cfg.kind === 'zone' && cfg.switch) {
        const seen = {
          available,
          temperatureC: r.temperatureC,
          powerW: r.powerW,
          slotEnergyKwh: e,
          ...(capKw !== undefined ? { capKw } : {}),
          ...heaterSeen(cfg.id, cfg.model.powerKw, r.powerW, phases, now),
        };
        nows.push(zones.heaterNow(cfg, seen, v.plan, v.slot, now));
      }
    }
    return nows;
  }

  /**
   * What a charger is and wants now: its plan, plug and caps; its phases, power per amp and fuse
   * limit this tick (a charger that switches phases chooses them within `roomKw`).
   */
  function chargerNow(
    v: TickView,
    cfg: Extract<DeviceConfig, { kind: 'evCharger' }>,
    seen: { r: DeviceReading; e: number; mode: DeviceMode; available: boolean; capKw: number | undefined },
    fuseChargers: readonly (FuseCharger & { sharing: boolean })[],
    roomKw: number,
  ): DeviceNow {
    const { r, e, mode, available, capKw } = seen;
    const { now, phases } = v;
    const fuse = deps.fuse?.guard;
    const charger = fuseChargers.find((x) => x.id === cfg.id)!;
    const sharers = fuseChargers.filter((x) => x.sharing || x.id === cfg.id);
    const planned = chargerTarget(v.plan, v.slot, cfg.id, now);
    const plugged = r.ev?.plugged ?? false;
    const switching = switchesPhases(cfg.model)
      ? switchingChargerNow(phaseControl, {
          cfg,
          reported: r.ev?.phases,
          available,
          nowMs: now,
          wantKw: wantedChargerKw({ plugged, mode, planned, slotEnergyKwh: e, roomKw: Math.min(roomKw, capKw ?? Infinity) }),
          fuse: fuse ? { guard: fuse, charger, phases, all: sharers } : undefined,
        })
      : undefined;
    return {
      kind: 'evCharger',
      id: cfg.id,
      available,
      mode,
      plugged,
      powerW: r.powerW,
      slotEnergyKwh: e,
      planned,
      voltageV: cfg.model.voltageV,
      minCurrentA: cfg.model.minCurrentA,
      maxCurrentA: cfg.model.maxCurrentA,
      safeCurrentA: cfg.safeCurrentA,
      ...(capKw !== undefined ? { capKw } : {}),
      ...(switching ?? {
        phases: cfg.model.phases,
        ...(fuse ? { wattsPerAmp: fuse.wattsPerAmp(charger), fuse: fuse.limitFor(charger, phases, now, sharers) } : {}),
      }),
    };
  }

  /** Sends the decision to the devices: loads go down before others go up, so that the fuse never carries both at once. */
  async function applyDecision(decision: Decision, now: number): Promise<void> {
    const byId = new Map(deps.devices.map((c) => [c.config.id, c]));
    // A device that refuses a command is the supervisor's to report; the others still get theirs.
    const apply = (setpoints: readonly Setpoint[]) =>
      Promise.allSettled(
        setpoints.map(async (s) => {
          const c = byId.get(s.id);
          if (!c) return;
          // A cap's block goes into the device's own timer to the cap's end (docs/caps.md).
          if (s.kind === 'heater') await c.device.applyHeater(!s.allow, s.heldByCap ? deps.inputs.capEndMs?.(s.id, now) : undefined);
          else if (s.kind === 'heatPump') await c.device.applySgReady(s.state);
          else {
            // Across a phase switch the current is 0 first, then the phases change.
            await c.device.applyCurrent(s.currentA, deps.inputs.capEndMs?.(s.id, now));
            if (s.phases !== undefined) await c.device.applyPhases?.(s.phases);
          }
          if (s.kind === 'charger') appliedA.set(s.id, s.currentA);
        }),
      );
    const sgStateOf = (id: string) => byId.get(id)?.device.health().sgState;
    const raises = (s: Setpoint): boolean =>
      raisesLoad(s, { sgState: s.kind === 'heatPump' ? sgStateOf(s.id) : undefined, appliedA: appliedA.get(s.id) });
    await apply(decision.setpoints.filter((s) => !raises(s)));
    await apply(decision.setpoints.filter(raises));
    heatPumps.applied(asGiven(decision.setpoints, sgStateOf), now);
  }

  /** Each thermostat zone's setpoint, written by its supervisor on change; a refusal is the supervisor's to report. */
  async function applyThermostats(plan: Plan | null, slot: PlanSlot | undefined, now: number): Promise<void> {
    await Promise.allSettled(
      deps.devices.map(async (c) => {
        if (c.config.kind !== 'zone' || !c.device.applySetpoint) return;
        const setpointC = zones.setpointNow(c.config, plan, slot, now);
        if (setpointC !== undefined) await c.device.applySetpoint(setpointC);
      }),
    );
  }

  async function tick(signal: AbortSignal): Promise<number> {
    const startedMs = deps.clock.nowMs();
    const { readings, phases, doneAfterMs } = await readAll(signal, startedMs);
    const now = deps.clock.nowMs();
    // Decisions then rest on readings older than a tick (the phase currents among them), and the tick runs late.
    const slowest = slowestLateRead(doneAfterMs, now - startedMs, deps.tickMs);
    if (slowest) {
      slowWarn(
        'CONTROL_TICK_SLOW',
        { tookMs: now - startedMs, tickMs: deps.tickMs, slowest: slowest[0], slowestDoneAfterMs: slowest[1] },
        'reading the devices took longer than a control tick',
      );
    }
    rollSlot(now);
    for (const c of all) deps.metering.feed(c.subject, readings.get(c.config.id)!);

    const plan = deps.inputs.plan();
    const slot = slotAt(plan, now);
    const energies = new Map(deps.devices.map((c) => [c.config.id, slotEnergy(c.config.id, readings.get(c.config.id)!, now)]));
    const view: TickView = { now, readings, phases, energies, plan, slot, modeOf: (id) => modeAt(deps.inputs.intent(id), now) };
    const capKw = deps.inputs.locationCapKw(now);
    const locationPowerW = deps.mainMeter ? readings.get(deps.mainMeter.config.id)?.powerW : undefined;
    const nows = devicesNow(view, capKw, locationPowerW);
    const budget = hourBudget(slot, deps.metering, deps.mainMeter?.subject, now);
    const decided = decide(nows, {
      capKw,
      locationPowerW,
      baseLoadKw: deps.inputs.baseLoadKw(now),
      guardedBefore: [...guarding],
      ...(budget ? { hourBudget: budget, guardBaseLoadKw: deps.inputs.guardBaseLoadKw?.(now) } : {}),
    });
    // The frost floor of a zone outranks the plan, the price and a cap.
    const decision = zones.frostFloor(
      decided,
      nows.flatMap((n) => (n.kind === 'hotWaterTank' ? [{ id: n.id, temperatureC: n.temperatureC }] : [])),
    );
    for (const id of newlyGuarded(decision.guarded, guarding)) {
      log.info({ code: 'HOUR_GUARD', device: id, ...budget }, 'throttled to keep the hour within its capacity-step allowance');
    }
    guarding = new Set(decision.guarded);
    deps.fuse?.guard.applied(decision.setpoints);
    await applyDecision(decision, now);
    await applyThermostats(plan, slot, now);
    deps.metering.tick(now);
    last = { atMs: now, slotStartMs, readings, slotEnergyKwh: energies, decision, locationPowerW, capKw };
    deps.onTick(last);
    return delayToNextTickMs(deps.clock.nowMs(), deps.tickMs);
  }

  const loop = startLoop({ name: 'control', clock: deps.clock, logger: log, errorDelayMs: deps.tickMs, tick });
  return { ...loop, last: () => last };
}
