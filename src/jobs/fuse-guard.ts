import type { Logger } from '../log.js';
import type { FuseConfig } from '../config/schema.js';
import type { PhaseReading } from '../ports.js';
import type { ChargerFuse, Setpoint } from '../core/control.js';
import { isMetered } from '../core/metered-bounds.js';
import { chargerLines, fuseHeadroom, type FuseInput, holdFuseLimit, unlimitedHold, wattsPerAmp, type FuseHold } from '../core/fuse.js';

export interface FuseCharger {
  id: string;
  /** The phases the limit is for. */
  phases: 1 | 3;
  /**
   * The phases it draws on now, where that differs (a charger that switches phases, asked for the
   * limit of the other phase count): its draw is taken off the lines it flows on now. Default `phases`.
   */
  drawPhases?: 1 | 3;
  /**
   * The charger does not say which phases it draws on (an OCPP charger told `numberPhases`): its
   * draw is taken off each line only as far as it surely flows there (the least of 1 and 3 phases),
   * so the house's load is never underestimated.
   */
  drawUncertain?: boolean;
  voltageV: number;
  safeCurrentA: number;
  /** The charger's measured power now, W. */
  powerW: number | undefined;
}

export interface FuseGuard {
  /** Power per amp of a charger on this supply, W/A. */
  wattsPerAmp(c: Pick<FuseCharger, 'phases' | 'voltageV'>): number;
  /**
   * The most current the fuse leaves the charger this tick, with the reason the control shows.
   * `all`: every charger the fuse governs (this one included), which share the lines they have in common.
   */
  limitFor(c: FuseCharger, phases: PhaseReading | undefined, nowMs: number, all?: readonly FuseCharger[]): ChargerFuse;
  /** Logs when the fuse starts and stops holding a charger back. */
  applied(setpoints: readonly Setpoint[]): void;
}

const fuseReason = 'main fuse';
/** Whether a charger setpoint's reason says the main fuse holds it. */
export const heldByFuse = (reason: string): boolean => reason.startsWith(fuseReason);

/** A charger's measured power at one control tick. */
interface PowerSample {
  atMs: number;
  watts: number;
}

/**
 * The main fuse in the control loop: per charger, the headroom on its lines from the HAN meter's
 * phase currents, held so that it is lowered at once and raised only after a quiet while. A stale
 * reading gives no headroom: the charger is held at its safe current until the meter speaks again.
 *
 * A reading older than the last tick (a slow or stalled HAN reader) predates what the chargers did
 * since: each charger's rise since the first tick after the reading is added to the lines it flows
 * on, so a charger that started after the reading is not taken for room. A fall is not credited
 * until a reading shows it.
 */
export function createFuseGuard(config: FuseConfig, logger: Logger): FuseGuard {
  const log = logger.child({ component: 'fuse' });
  const holds = new Map<string, FuseHold>();
  const limiting = new Map<string, string>();
  /** Chargers held at their safe current for want of a phase reading: why, as last logged. */
  const blind = new Map<string, string>();
  /** Whether the meter has given phase currents since the start: before it has, waiting is normal. */
  let everMeasured = false;
  let firstAskedMs: number | undefined;
  /** Each charger's power at the ticks a reading may still be from (the last stale window). */
  const history = new Map<string, PowerSample[]>();
  const perAmp = (c: Pick<FuseCharger, 'phases' | 'voltageV'>): number => wattsPerAmp(config.supply, c.phases, c.voltageV);
  const line = (config.singlePhaseChargerLine - 1) as 0 | 1 | 2;
  const linesOf = (n: 1 | 3): number[] => chargerLines(config.supply, config.phases, n, line);

  /**
   * A charger's current on line `l` for `watts`. One that does not say its phases: as little as it
   * may flow there when taken off a reading (`least`), as much as it may when added to one.
   */
  const amps = (x: FuseCharger, watts: number, l: number, bound: 'least' | 'most' = 'least'): number => {
    const w = Math.max(0, watts);
    if (x.drawUncertain)
      return Math[bound === 'least' ? 'min' : 'max'](
        ...([1, 3] as const).map((n) => (linesOf(n).includes(l) ? w / perAmp({ phases: n, voltageV: x.voltageV }) : 0)),
      );
    const draw = x.drawPhases ?? x.phases;
    return linesOf(draw).includes(l) ? w / perAmp({ phases: draw, voltageV: x.voltageV }) : 0;
  };

  const record = (x: FuseCharger, nowMs: number): void => {
    const samples = history.get(x.id) ?? [];
    if (samples.at(-1)?.atMs !== nowMs) samples.push({ atMs: nowMs, watts: Math.max(0, x.powerW ?? 0) });
    // Keep the window a usable reading can be from, and the sample before it.
    const from = samples.findIndex((p) => p.atMs >= nowMs - config.staleAfterS * 1000);
    if (from > 1) samples.splice(0, from - 1);
    history.set(x.id, samples);
  };

  /**
   * How much more the charger draws now than at the first tick after the reading, W. That tick's
   * power may already hold a rise the reading missed (the last tick's own command): left to the next
   * reading, as without a correction; only the rises of later ticks are added.
   */
  const riseSince = (x: FuseCharger, readingAtMs: number): number => {
    const samples = history.get(x.id) ?? [];
    const after = samples.find((p) => p.atMs > readingAtMs);
    return after === undefined ? 0 : Math.max(0, samples.at(-1)!.watts - after.watts);
  };

  return {
    wattsPerAmp: perAmp,
    limitFor(c, phases, nowMs, all = [c]) {
      if (phases !== undefined) everMeasured = true;
      firstAskedMs ??= nowMs;
      // A meter still silent after the staleness window is a fault like any other.
      const waiting = !everMeasured && nowMs - firstAskedMs < config.staleAfterS * 1000;
      const sharedBy = [0, 1, 2].map((l) => all.filter((x) => linesOf(x.drawPhases ?? x.phases).includes(l)).length);
      const chargers = all.some((x) => x.id === c.id) ? all : [...all, c];
      for (const x of chargers) record(x, nowMs);
      const draw = c.drawPhases ?? c.phases;
      const ownA = c.powerW === undefined ? 0 : c.powerW / perAmp({ phases: draw, voltageV: c.voltageV });
      const own = (l: number): number => amps(c, c.powerW ?? 0, l);
      const exact = draw === c.phases && c.drawUncertain !== true;
      const rises = phases === undefined ? [] : chargers.map((x) => ({ x, watts: riseSince(x, phases.atMs) }));
      // A current no line of a home can carry (negative, or far over any main fuse) is not a
      // reading: the line counts as not measured, never as empty, whichever meter listed it.
      const measured = (phases?.currentsA ?? []).map((a, l) =>
        isMetered('phaseCurrentA', a) ? a + rises.reduce((sum, r) => sum + amps(r.x, r.watts, l, 'most'), 0) : NaN,
      );
      // For the other phase count, its draw now comes off the lines it flows on now.
      const currentsA = exact ? measured : measured.map((a, l) => a - own(l));
      const input: FuseInput = {
        fuseA: config.mainFuseA,
        marginA: config.marginA,
        currentsA,
        measuredAtMs: phases?.atMs,
        nowMs,
        staleAfterMs: config.staleAfterS * 1000,
        lines: linesOf(c.phases),
        chargerNowA: exact ? ownA : 0,
        sharedBy,
      };
      const h = fuseHeadroom(input);
      if (h.kind === 'unknown') {
        // After the outage the limit rises again only through the hold's quiet while.
        holds.set(`${c.id}/${c.phases}`, { ...unlimitedHold, limitA: c.safeCurrentA });
        const why = h.why === 'stale' ? 'phase currents stale' : `L${h.line + 1} current not measured`;
        if (waiting && blind.get(c.id) !== 'start') {
          // The HAN meter lists its currents every few seconds: at start, waiting for them is no fault.
          log.info(
            { device: c.id, safeCurrentA: c.safeCurrentA },
            "waiting for the meter's first phase currents: the charger is held at its safe current",
          );
          blind.set(c.id, 'start');
        } else if (!waiting && blind.get(c.id) !== why) {
          log.warn(
            { code: 'FUSE_PHASES_UNKNOWN', device: c.id, why, safeCurrentA: c.safeCurrentA },
            'no usable phase currents for the main fuse: the charger is held at its safe current',
          );
          blind.set(c.id, why);
        }
        return { maxA: c.safeCurrentA, reason: `${fuseReason}: ${why}, safe current` };
      }
      if (blind.delete(c.id)) log.info({ device: c.id }, 'phase currents usable again: the fuse headroom governs the charger');
      // One hold per phase count: a charger that switches phases has a limit for each.
      const key = `${c.id}/${c.phases}`;
      const hold = holdFuseLimit(holds.get(key) ?? unlimitedHold, h.maxChargerA, nowMs, config.raiseAfterS * 1000);
      holds.set(key, hold);
      const reason = `${fuseReason} ${config.mainFuseA} A: L${h.line + 1} at ${h.lineA.toFixed(1)} A`;
      return { maxA: hold.limitA, reason, input };
    },
    applied(setpoints) {
      for (const s of setpoints) {
        if (s.kind !== 'charger') continue;
        const was = limiting.get(s.id);
        const now = heldByFuse(s.reason) ? s.reason : undefined;
        if (now !== undefined && was === undefined) {
          log.warn({ code: 'FUSE_LIMIT', device: s.id, currentA: s.currentA, reason: now }, "the main fuse limits the charger's current");
        } else if (now === undefined && was !== undefined) {
          log.info({ device: s.id, currentA: s.currentA }, 'the main fuse no longer limits the charger');
        }
        if (now === undefined) limiting.delete(s.id);
        else limiting.set(s.id, now);
      }
    },
  };
}
