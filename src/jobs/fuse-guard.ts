import type { Logger } from '../log.js';
import type { FuseConfig } from '../config/schema.js';
import type { PhaseReading } from '../ports.js';
import type { ChargerFuse, Setpoint } from '../core/control.js';
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

/**
 * The main fuse in the control loop: per charger, the headroom on its lines from the HAN meter's
 * phase currents, held so that it is lowered at once and raised only after a quiet while. A stale
 * reading gives no headroom: the charger is held at its safe current until the meter speaks again.
 */
export function createFuseGuard(config: FuseConfig, logger: Logger): FuseGuard {
  const log = logger.child({ component: 'fuse' });
  const holds = new Map<string, FuseHold>();
  const limiting = new Map<string, string>();
  /** Chargers held at their safe current for want of a phase reading: why, as last logged. */
  const blind = new Map<string, string>();
  const perAmp = (c: Pick<FuseCharger, 'phases' | 'voltageV'>): number => wattsPerAmp(config.supply, c.phases, c.voltageV);
  const line = (config.singlePhaseChargerLine - 1) as 0 | 1 | 2;

  return {
    wattsPerAmp: perAmp,
    limitFor(c, phases, nowMs, all = [c]) {
      const linesOf = (n: 1 | 3): number[] => chargerLines(config.supply, config.phases, n, line);
      const sharedBy = [0, 1, 2].map((l) => all.filter((x) => linesOf(x.drawPhases ?? x.phases).includes(l)).length);
      const draw = c.drawPhases ?? c.phases;
      const ownA = c.powerW === undefined ? 0 : c.powerW / perAmp({ phases: draw, voltageV: c.voltageV });
      // For the other phase count, its draw now comes off the lines it flows on now.
      const drawLines = linesOf(draw);
      const watts = Math.max(0, c.powerW ?? 0);
      const surely = (l: number): number => Math.min(...([1, 3] as const).map((n) => (linesOf(n).includes(l) ? watts / perAmp({ phases: n, voltageV: c.voltageV }) : 0)));
      const own = (l: number): number => (c.drawUncertain ? surely(l) : drawLines.includes(l) ? Math.max(0, ownA) : 0);
      const exact = draw === c.phases && c.drawUncertain !== true;
      const currentsA = exact ? phases?.currentsA ?? [] : (phases?.currentsA ?? []).map((a, l) => a - own(l));
      const input: FuseInput = {
        fuseA: config.mainFuseA, marginA: config.marginA,
        currentsA, measuredAtMs: phases?.atMs, nowMs, staleAfterMs: config.staleAfterS * 1000,
        lines: linesOf(c.phases),
        chargerNowA: exact ? ownA : 0,
        sharedBy,
      };
      const h = fuseHeadroom(input);
      if (h.kind === 'unknown') {
        // After the outage the limit rises again only through the hold's quiet while.
        holds.set(`${c.id}/${c.phases}`, { ...unlimitedHold, limitA: c.safeCurrentA });
        const why = h.why === 'stale' ? 'phase currents stale' : `L${h.line + 1} current not measured`;
        if (blind.get(c.id) !== why) {
          log.warn({ code: 'FUSE_PHASES_UNKNOWN', device: c.id, why, safeCurrentA: c.safeCurrentA }, 'no usable phase currents for the main fuse: the charger is held at its safe current');
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
          log.warn({ code: 'FUSE_LIMIT', device: s.id, currentA: s.currentA, reason: now }, 'the main fuse limits the charger\'s current');
        } else if (now === undefined && was !== undefined) {
          log.info({ device: s.id, currentA: s.currentA }, 'the main fuse no longer limits the charger');
        }
        if (now === undefined) limiting.delete(s.id);
        else limiting.set(s.id, now);
      }
    },
  };
}
