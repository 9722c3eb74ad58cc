/**
 * 1-phase/3-phase switching of an EV charger: the power range it gives the planner, and which phase
 * count real-time control should use. Pure; time is an argument.
 *
 * With switching, the charger covers [minimum current on 1 phase, maximum current on 3 phases].
 * Power per amp follows the supply (see `fuse.ts`): on TN a 1-phase charger draws U·I and a
 * 3-phase one 3·U·I; on IT (3×230 V, no neutral) a 1-phase charger sits between two lines (U·I
 * with U = 230 V between lines) and a 3-phase one draws √3·U·I. Between the 1-phase maximum and
 * the 3-phase minimum there can be a gap (16 A: 3.7 to 4.1 kW on TN) that neither reaches at every
 * instant; a slot's energy in the gap is still reached on average, the control loop picks the
 * nearer phase count and stops when the slot's energy is metered.
 */
import { wattsPerAmp, type Supply } from './fuse.js';

export interface PhaseSwitchingModel {
  minCurrentA: number;
  maxCurrentA: number;
  phases: 1 | 3;
  voltageV: number;
  phaseSwitching?: { enabled: boolean } | undefined;
}

export const switchesPhases = (m: PhaseSwitchingModel): boolean => m.phaseSwitching?.enabled === true;

/**
 * The charger's power range, kW, on the given supply: without switching, its configured phases;
 * with switching, the 1-phase minimum to the 3-phase maximum.
 */
export function evPowerRangeKw(m: PhaseSwitchingModel, supply: Supply = 'TN'): { minKw: number; maxKw: number } {
  if (!switchesPhases(m)) {
    const kwPerA = wattsPerAmp(supply, m.phases, m.voltageV) / 1000;
    return { minKw: m.minCurrentA * kwPerA, maxKw: m.maxCurrentA * kwPerA };
  }
  return {
    minKw: (m.minCurrentA * wattsPerAmp(supply, 1, m.voltageV)) / 1000,
    maxKw: (m.maxCurrentA * wattsPerAmp(supply, 3, m.voltageV)) / 1000,
  };
}

/** One way of charging: a phase count, its power per amp and the most current the fuse leaves it. */
export interface PhaseOption {
  phases: 1 | 3;
  wattsPerAmp: number;
  /** Most current the main fuse leaves on this option's lines, A (Infinity without a fuse). */
  fuseMaxA: number;
}

export interface PhaseChoiceInput {
  nowMs: number;
  /** The phases the charger charges on now. */
  actual: 1 | 3;
  /** Power wanted now, kW: 0 when the car is not to charge, Infinity for as much as possible. */
  wantKw: number;
  minCurrentA: number;
  maxCurrentA: number;
  options: readonly PhaseOption[];
  /** When the phases were last switched, ms; undefined: not since start. */
  lastSwitchAtMs: number | undefined;
  minIntervalMs: number;
}

export interface PhaseChoice {
  phases: 1 | 3;
  /** Switch now (the pause and the write follow). */
  switch: boolean;
  /** Held back by the minimum interval: the phases a switch would go to. */
  wanted?: 1 | 3;
  reason: string;
}

/** Power an option delivers toward `wantKw`, kW: 0 when the fuse leaves it less than the minimum current. */
export function deliverableKw(o: PhaseOption, wantKw: number, minCurrentA: number, maxCurrentA: number): number {
  const topA = Math.min(maxCurrentA, Math.floor(o.fuseMaxA + 1e-9));
  if (topA < minCurrentA) return 0;
  return Math.min((topA * o.wattsPerAmp) / 1000, Math.max((minCurrentA * o.wattsPerAmp) / 1000, wantKw));
}

/** How far an option's power is from the wish (lower is better). */
const miss = (kw: number, wantKw: number): number => (Number.isFinite(wantKw) ? Math.abs(wantKw - kw) : -kw);

/** A switch must gain at least this much power closeness, kW, or this share of the wish. */
const MIN_GAIN_KW = 0.2;
const MIN_GAIN_SHARE = 0.05;

/**
 * Which phase count to charge on: the one whose power comes nearest the wish under the main fuse;
 * never while the car is not to charge, never for a small gain, never sooner than `minIntervalMs`
 * after the last switch.
 */
export function choosePhases(x: PhaseChoiceInput): PhaseChoice {
  const keep = (reason: string): PhaseChoice => ({ phases: x.actual, switch: false, reason });
  if (!(x.wantKw > 0)) return keep('not charging: phases kept');
  const now = x.options.find((o) => o.phases === x.actual);
  const other = x.options.find((o) => o.phases !== x.actual);
  if (!now || !other) return keep('one phase option only');
  const kwNow = deliverableKw(now, x.wantKw, x.minCurrentA, x.maxCurrentA);
  const kwOther = deliverableKw(other, x.wantKw, x.minCurrentA, x.maxCurrentA);
  const gain = miss(kwNow, x.wantKw) - miss(kwOther, x.wantKw);
  const needed = Math.max(MIN_GAIN_KW, Number.isFinite(x.wantKw) ? MIN_GAIN_SHARE * x.wantKw : 0);
  if (gain <= needed) return keep(`${x.actual}-phase: ${kwNow.toFixed(1)} kW`);
  const why =
    kwNow === 0
      ? `the fuse leaves ${x.actual}-phase less than ${x.minCurrentA} A`
      : `${other.phases}-phase gives ${kwOther.toFixed(1)} kW, ${x.actual}-phase ${kwNow.toFixed(1)} kW`;
  const wish = Number.isFinite(x.wantKw) ? `${x.wantKw.toFixed(1)} kW wanted` : 'full power wanted';
  if (x.lastSwitchAtMs !== undefined && x.nowMs - x.lastSwitchAtMs < x.minIntervalMs) {
    const waitS = Math.ceil((x.minIntervalMs - (x.nowMs - x.lastSwitchAtMs)) / 1000);
    return { ...keep(`switch to ${other.phases}-phase held ${waitS} s more (minimum interval): ${why}`), wanted: other.phases };
  }
  return { phases: other.phases, switch: true, reason: `${wish}: ${why}` };
}
