/**
 * The main fuse per phase: how much current a charger may draw so that no line of the supply
 * carries more than the fuse, from the HAN meter's per-phase currents. Pure; time is an argument.
 *
 * Supplies:
 *  - TN 3×230/400 V: loads sit between a line and neutral. A 3-phase load of I amps draws 3·U·I
 *    (U = 230 V), a 1-phase load sits on one line.
 *  - IT 3×230 V: no neutral; loads sit between two lines. A 3-phase load draws √3·U·I
 *    (U = 230 V between lines), and a 1-phase load carries its current on two lines.
 */

export type Supply = 'TN' | 'IT';

/** Active power per amp of charging current, W/A. */
export function wattsPerAmp(supply: Supply, chargerPhases: 1 | 3, voltageV: number): number {
  if (chargerPhases === 1) return voltageV;
  return supply === 'IT' ? Math.sqrt(3) * voltageV : 3 * voltageV;
}

/**
 * The most power the plan may give the home under the main fuse, kW. The plan sums powers; the fuse
 * holds each line. What the fuse carries as a balanced load (less the margin) is reduced, for each
 * 1-phase heater, by what its current costs its lines beyond its own power: P kW at U loads its line
 * (TN) or lines (IT) as a balanced 3·P (TN) or √3·P (IT) would. So a plan that runs heaters and
 * chargers together stays one the fuse can carry, whichever slots the heaters take.
 */
export function fusePlanLimitKw(
  fuse: { supply: Supply; phases: 1 | 3; mainFuseA: number; marginA: number },
  heaterKws: readonly number[],
  voltageV = 230,
): number {
  const amps = Math.max(0, fuse.mainFuseA - fuse.marginA);
  if (fuse.phases === 1) return (voltageV * amps) / 1000;
  const perAmp = wattsPerAmp(fuse.supply, 3, voltageV);
  const extraKw = heaterKws.reduce((sum, kw) => sum + kw * (perAmp / voltageV - 1), 0);
  return Math.max(0, (perAmp * amps) / 1000 - extraKw);
}

/**
 * The supply lines (0-based) a charger's current flows on. A 1-phase charger is connected to
 * `line` (TN) or between `line` and the next line (IT).
 */
export function chargerLines(supply: Supply, siteLines: 1 | 3, chargerPhases: 1 | 3, line: 0 | 1 | 2): number[] {
  if (siteLines === 1) return [0];
  if (chargerPhases === 3) return [0, 1, 2];
  return supply === 'IT' ? [line, (line + 1) % 3] : [line];
}

export interface FuseInput {
  fuseA: number;
  /** Kept free below the fuse, A. */
  marginA: number;
  /** Measured current per line, A (the charger's own draw included); NaN or absent: not measured. */
  currentsA: readonly number[];
  /** When the currents were measured, ms; undefined when there is no reading. */
  measuredAtMs: number | undefined;
  nowMs: number;
  staleAfterMs: number;
  /** Lines the charger's current flows on. */
  lines: readonly number[];
  /** The charger's current now, A, as measured (0 when unknown: its draw then counts as house load). */
  chargerNowA: number;
  /**
   * Per line, how many chargers (this one included) may draw on it. The line's free current is split
   * evenly among them, so two chargers never both claim the same amps. Default 1 each.
   */
  sharedBy?: readonly number[];
  /** Kept free on every line for a heater that may start before a reading holds it, A. */
  reservedA?: number;
}

export type FuseHeadroom =
  /** No usable reading: none or too old (`stale`), or a line of the charger not measured (`missing`). */
  | { kind: 'unknown'; why: 'stale' }
  | { kind: 'unknown'; why: 'missing'; line: number }
  | { kind: 'ok'; maxChargerA: number; line: number; lineA: number };

/**
 * Most current the charger may draw: on each of its lines, the fuse less the margin (and any room
 * kept for a heater) less what the rest of the house draws there; when other chargers share the
 * line, no more than what it draws now plus its share of the line's free current (so two never
 * claim the same amps); the tightest line decides. Without a fresh reading there is no
 * headroom to credit.
 */
export function fuseHeadroom(x: FuseInput): FuseHeadroom {
  const fresh = x.measuredAtMs !== undefined && x.nowMs - x.measuredAtMs <= x.staleAfterMs;
  if (!fresh) return { kind: 'unknown', why: 'stale' };
  const missing = x.lines.find((l) => !Number.isFinite(x.currentsA[l]));
  if (missing !== undefined) return { kind: 'unknown', why: 'missing', line: missing };
  let best: { maxChargerA: number; line: number; lineA: number } | undefined;
  for (const l of x.lines) {
    const lineA = x.currentsA[l]!;
    const ownA = Math.max(0, x.chargerNowA);
    const houseA = Math.max(0, lineA - ownA);
    const share = Math.max(1, x.sharedBy?.[l] ?? 1);
    const reservedA = x.reservedA ?? 0;
    const alone = x.fuseA - x.marginA - houseA - reservedA;
    const freeA = x.fuseA - x.marginA - lineA - reservedA;
    const maxChargerA = Math.max(0, share === 1 ? alone : Math.min(alone, ownA + freeA / share));
    if (best === undefined || maxChargerA < best.maxChargerA) best = { maxChargerA, line: l, lineA };
  }
  return { kind: 'ok', ...best! };
}

/** The fuse limit in force, with what is needed to raise it only after a quiet while. */
export interface FuseHold {
  limitA: number;
  /** Since when the headroom has stayed above `limitA`, ms; undefined while it has not. */
  aboveSinceMs: number | undefined;
  /** The least headroom seen since then, A: what the limit may be raised to. */
  aboveMinA: number;
}

export const unlimitedHold: FuseHold = { limitA: Infinity, aboveSinceMs: undefined, aboveMinA: Infinity };

/**
 * Lowers the limit at once when the headroom falls below it; raises it only when the headroom has
 * stayed above it for `raiseAfterMs`, and then only to the least headroom of that while, so the
 * charger does not chatter with a load that comes and goes.
 */
export function holdFuseLimit(hold: FuseHold, headroomA: number, nowMs: number, raiseAfterMs: number): FuseHold {
  if (headroomA <= hold.limitA) return { limitA: headroomA, aboveSinceMs: undefined, aboveMinA: Infinity };
  const since = hold.aboveSinceMs ?? nowMs;
  const min = Math.min(hold.aboveMinA, headroomA);
  if (nowMs - since >= raiseAfterMs) return { limitA: min, aboveSinceMs: undefined, aboveMinA: Infinity };
  return { limitA: hold.limitA, aboveSinceMs: since, aboveMinA: min };
}
