/**
 * 1-phase/3-phase switching in the control loop, per charger that has `model.phaseSwitching`:
 * which phase count the current is for this tick and whether a switch is under way. The choice
 * is `core/phase-switch.ts`'s; this part keeps what it needs between ticks (the phases last
 * commanded, when they were switched), pauses the charger (0 A) from the switch until the
 * charger says it charges on the new phase count, and logs each switch with its reason.
 */
import type { Logger } from '../log.js';
import type { EvChargerConfig } from '../config/schema.js';
import type { PhaseReading } from '../ports.js';
import { chargerWantsCurrent, type ChargerNow, type DeviceMode, type SlotTarget } from '../core/control.js';
import { choosePhases, type PhaseOption } from '../core/phase-switch.js';
import type { FuseCharger, FuseGuard } from './fuse-guard.js';

/** A switch the charger has not confirmed (go-e `pnp`) within this time is given up, ms. */
export const PHASE_CONFIRM_TIMEOUT_MS = 120_000;

/**
 * A switch is made only once the wish for it has held this long, ms: one tick's reading (a load
 * that comes and goes, the charger's own draw not yet reported) does not switch. go-e's own
 * switching logic has the same notion (`mpwst`, "min phase wish switch time").
 */
export const PHASE_WISH_HOLD_MS = 30_000;

export interface PhaseTick {
  id: string;
  nowMs: number;
  /** The phases the charger says it charges on (go-e `pnp`); undefined when it does not say. */
  reported: number | undefined;
  /** The phases the charger is wired for (model.phases). */
  wired: 1 | 3;
  available: boolean;
  /** Power wanted now, kW (0: not to charge; Infinity: as much as possible). */
  wantKw: number;
  minCurrentA: number;
  maxCurrentA: number;
  /** Power per amp and fuse limit for 1 and for 3 phases. */
  options: readonly PhaseOption[];
  minIntervalMs: number;
}

export interface PhaseStep {
  /** The phases the charger draws on now (the fuse takes its draw off these lines). */
  actual: 1 | 3;
  /** The phases the current is for. */
  phases: 1 | 3;
  /**
   * The phases to write to the charger: once it has said its phases (so a setting it already has
   * is not written blind) or once wattshift has switched it.
   */
  command?: 1 | 3;
  /** While a switch is under way: why the charger is paused. */
  pausedFor?: string;
}

interface State {
  /** The switch wished for, and since when. */
  wish: { phases: 1 | 3; sinceMs: number } | undefined;
  commanded: 1 | 3 | undefined;
  lastSwitchAtMs: number | undefined;
  pendingSinceMs: number | undefined;
}

export interface PhaseControl {
  /** The phases a charger draws on now: what it reports, else what was last commanded, else its wiring. */
  actual(id: string, reported: number | undefined, wired: 1 | 3): 1 | 3;
  step(t: PhaseTick): PhaseStep;
}

const asPhases = (n: number | undefined): 1 | 3 | undefined => (n === 1 || n === 3 ? n : undefined);

export function createPhaseControl(logger: Logger): PhaseControl {
  const log = logger.child({ component: 'phases' });
  const states = new Map<string, State>();

  return {
    actual: (id, reported, wired) => asPhases(reported) ?? states.get(id)?.commanded ?? wired,
    step(t) {
      const s = states.get(t.id) ?? { wish: undefined, commanded: undefined, lastSwitchAtMs: undefined, pendingSinceMs: undefined };
      states.set(t.id, s);
      const actual = asPhases(t.reported) ?? s.commanded ?? t.wired;
      if (s.pendingSinceMs !== undefined && s.commanded !== undefined) {
        if (actual === s.commanded) {
          log.info({ device: t.id, phases: actual, tookMs: t.nowMs - s.pendingSinceMs }, 'phase switch done');
          s.pendingSinceMs = undefined;
        } else if (t.nowMs - s.pendingSinceMs >= PHASE_CONFIRM_TIMEOUT_MS) {
          log.warn(
            { code: 'PHASE_SWITCH_UNCONFIRMED', device: t.id, commanded: s.commanded, reported: t.reported ?? null },
            'the charger did not confirm the phase switch: charging on the phases it reports',
          );
          s.commanded = actual;
          s.pendingSinceMs = undefined;
        } else {
          return {
            actual,
            phases: s.commanded,
            command: s.commanded,
            pausedFor: `switching to ${s.commanded} phase${s.commanded === 1 ? '' : 's'}: paused`,
          };
        }
      }
      // The phases it has: written once it says them (forcing go-e out of its own auto mode), or after a switch.
      const keep = (): PhaseStep => ({
        actual,
        phases: actual,
        ...(asPhases(t.reported) !== undefined || s.lastSwitchAtMs !== undefined ? { command: actual } : {}),
      });
      if (!t.available) return keep();
      const choice = choosePhases({
        nowMs: t.nowMs,
        actual,
        wantKw: t.wantKw,
        minCurrentA: t.minCurrentA,
        maxCurrentA: t.maxCurrentA,
        options: t.options,
        lastSwitchAtMs: s.lastSwitchAtMs,
        minIntervalMs: t.minIntervalMs,
      });
      // The wish holds while the interval holds the switch back too.
      const wished = choice.switch ? choice.phases : choice.wanted;
      if (wished === undefined) s.wish = undefined;
      else if (s.wish?.phases !== wished) s.wish = { phases: wished, sinceMs: t.nowMs };
      if (!choice.switch || t.nowMs - s.wish!.sinceMs < PHASE_WISH_HOLD_MS) {
        s.commanded = actual;
        return keep();
      }
      s.wish = undefined;
      log.info({ device: t.id, from: actual, to: choice.phases, reason: choice.reason }, 'phase switch');
      s.commanded = choice.phases;
      s.lastSwitchAtMs = t.nowMs;
      s.pendingSinceMs = t.nowMs;
      return {
        actual,
        phases: choice.phases,
        command: choice.phases,
        pausedFor: `switching to ${choice.phases} phase${choice.phases === 1 ? '' : 's'}: ${choice.reason}`,
      };
    },
  };
}

/** Power the charger is asked for now, kW, from the user's mode and the plan's slot (as `decide` reads them). */
export function wantedChargerKw(x: {
  plugged: boolean;
  mode: DeviceMode;
  planned: SlotTarget | null;
  slotEnergyKwh: number;
  roomKw: number;
}): number {
  if (!chargerWantsCurrent(x)) return 0;
  const room = Math.max(0, x.roomKw);
  if (x.mode === 'boost') return room;
  // Without a plan the charger gets its safe current: no power to choose phases for.
  return x.planned === null ? 0 : Math.min(x.planned.powerKw, room);
}

/**
 * A switching charger's part of its `ChargerNow` this tick: the phases the current is for, the
 * power per amp and the fuse limit of those phases, and the phase command.
 */
export function switchingChargerNow(
  pc: PhaseControl,
  x: {
    cfg: EvChargerConfig;
    reported: number | undefined;
    available: boolean;
    wantKw: number;
    nowMs: number;
    fuse: { guard: FuseGuard; charger: FuseCharger; phases: PhaseReading | undefined; all: readonly FuseCharger[] } | undefined;
  },
): Pick<ChargerNow, 'phases' | 'wattsPerAmp' | 'fuse' | 'phaseCommand'> {
  const m = x.cfg.model;
  const actual = pc.actual(x.cfg.id, x.reported, m.phases);
  const f = x.fuse;
  const limits = new Map(
    ([1, 3] as const).map((n) => [n, f?.guard.limitFor({ ...f.charger, phases: n, drawPhases: actual }, f.phases, x.nowMs, f.all)]),
  );
  const perAmp = (n: 1 | 3): number => (f ? f.guard.wattsPerAmp({ phases: n, voltageV: m.voltageV }) : n * m.voltageV);
  const step = pc.step({
    id: x.cfg.id,
    nowMs: x.nowMs,
    reported: x.reported,
    wired: m.phases,
    available: x.available,
    wantKw: x.wantKw,
    minCurrentA: m.minCurrentA,
    maxCurrentA: m.maxCurrentA,
    minIntervalMs: (m.phaseSwitching?.minIntervalS ?? 600) * 1000,
    options: ([1, 3] as const).map((n) => ({ phases: n, wattsPerAmp: perAmp(n), fuseMaxA: limits.get(n)?.maxA ?? Infinity })),
  });
  const fuse = limits.get(step.phases);
  return {
    phases: step.phases,
    wattsPerAmp: perAmp(step.phases),
    ...(fuse ? { fuse } : {}),
    phaseCommand: {
      ...(step.command !== undefined ? { phases: step.command } : {}),
      ...(step.pausedFor !== undefined ? { pausedFor: step.pausedFor } : {}),
    },
  };
}
