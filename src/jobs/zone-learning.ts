/**
 * Learns each heated zone's room model hour by hour (`core/room-model-learn.ts`): for every closed
 * hour, the room temperature at its start and end (the first reading of the hour and of the next,
 * each within a few minutes of the hour's edge), the heat the heater gave (the hour's metered energy
 * × COP) and the mean outdoor temperature of the hour's ticks. The learner's state is saved after
 * each hour.
 */
import type { ZoneConfig } from '../config/schema.js';
import type { Logger } from '../log.js';
import { learnRoomHour, newRoomLearner, type RoomLearnerState } from '../core/room-model-learn.js';
import type { ZoneLearnerStore } from '../store/zone-learners.js';
import { zonePriorModel } from './zone-inputs.js';

const hourMs = 3_600_000;
/** A reading this late after the hour's edge no longer tells the temperature at the edge. */
const edgeToleranceMs = 5 * 60_000;
/** A closed hour whose energy is not metered within this long is given up. */
const waitForEnergyMs = 3 * hourMs;

interface ClosedHour {
  hourStartMs: number;
  startC: number;
  endC: number;
  outdoorC: number;
}

export interface ZoneLearning {
  /** A control tick at `atMs` with each zone's room temperature now and the outdoor temperature now (undefined: none). */
  observe(atMs: number, tempC: (zoneId: string) => number | undefined, outdoorC: number | undefined): void;
  /** The zone's learner now (null before its first hour). */
  learner(zoneId: string): RoomLearnerState | null;
}

export function createZoneLearning(deps: {
  zones: readonly ZoneConfig[];
  store: ZoneLearnerStore;
  /** The heater's metered energy of a closed hour, kWh; undefined while the hour is not stored yet. */
  hourKwh: (zoneId: string, hourStartMs: number) => number | undefined;
  logger: Logger;
}): ZoneLearning {
  const log = deps.logger.child({ component: 'zone-learning' });
  const learners = new Map(deps.zones.map((z) => [z.id, deps.store.load(z.id)]));
  /** Each zone's temperature at the start of the hour under way, when read near enough to its edge. */
  const edge = new Map<string, { hourStartMs: number; tempC: number }>();
  const closed = new Map<string, ClosedHour[]>(deps.zones.map((z) => [z.id, []]));
  /** The outdoor temperatures of the hour under way and of the one before, summed over their ticks. */
  let outdoor = { hourStartMs: -1, sumC: 0, n: 0 };
  let outdoorBefore = outdoor;

  const learn = (zone: ZoneConfig, h: ClosedHour, kwh: number): void => {
    const before = learners.get(zone.id) ?? newRoomLearner(zonePriorModel(zone));
    const after = learnRoomHour(before, { startC: h.startC, endC: h.endC, outdoorC: h.outdoorC, heatKwh: kwh * zone.model.cop, hours: 1 });
    learners.set(zone.id, after);
    deps.store.save(zone.id, after);
    if (after.last?.accepted === false) log.debug({ device: zone.id, hourStartMs: h.hourStartMs, reason: after.last.reason }, after.last.message);
  };

  return {
    observe(atMs, tempC, outdoorC) {
      const hourStartMs = Math.floor(atMs / hourMs) * hourMs;
      if (outdoor.hourStartMs !== hourStartMs) {
        outdoorBefore = outdoor;
        outdoor = { hourStartMs, sumC: 0, n: 0 };
      }
      if (outdoorC !== undefined && Number.isFinite(outdoorC)) outdoor = { ...outdoor, sumC: outdoor.sumC + outdoorC, n: outdoor.n + 1 };
      const lastHourOutdoorC =
        outdoorBefore.hourStartMs === hourStartMs - hourMs && outdoorBefore.n > 0 ? outdoorBefore.sumC / outdoorBefore.n : undefined;
      for (const zone of deps.zones) {
        const t = tempC(zone.id);
        const seen = edge.get(zone.id);
        if (t !== undefined && seen?.hourStartMs !== hourStartMs && atMs - hourStartMs <= edgeToleranceMs) {
          // The hour just closed, if its start was seen too.
          if (seen?.hourStartMs === hourStartMs - hourMs && lastHourOutdoorC !== undefined)
            closed.get(zone.id)!.push({ hourStartMs: seen.hourStartMs, startC: seen.tempC, endC: t, outdoorC: lastHourOutdoorC });
          edge.set(zone.id, { hourStartMs, tempC: t });
        }
        const waiting = closed.get(zone.id)!;
        const kept: ClosedHour[] = [];
        for (const h of waiting) {
          const kwh = deps.hourKwh(zone.id, h.hourStartMs);
          if (kwh !== undefined) learn(zone, h, kwh);
          else if (atMs - (h.hourStartMs + hourMs) < waitForEnergyMs) kept.push(h);
        }
        closed.set(zone.id, kept);
      }
    },
    learner: (zoneId) => learners.get(zoneId) ?? null,
  };
}
