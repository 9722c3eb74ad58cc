/**
 * What the daemon learns about the home between plans: the base load, the tank's state when it
 * has no sensor, the EV session, legionella cycles, eligibility; and the small state kept across
 * restarts (last good prices, last plan, announced devices). Store writes here are rare by design.
 */
import { z } from 'zod';
import type { Clock, EvState } from '../ports.js';
import type { Logger } from '../log.js';
import { heatingKwOf, isTankDevice, type Config, type TankDeviceConfig } from '../config/schema.js';
import type { Plan } from '../core/types.js';
import type { RoomLearnerState } from '../core/room-model-learn.js';
import type { Store } from '../store/types.js';
import type { SparkClient } from '../spark/client.js';
import { codeOf } from '../errors.js';
import type { ControlSnapshot } from './control-loop.js';
import type { HomeEvent, Identity } from '../spark/event-normalise.js';
import type { Wishes } from './home-state.js';
import type { PlanningSnapshot, TankNow, EvNow } from './plan-inputs.js';
import type { PriceData } from './price-refresh.js';
import { identifyVehicle, sessionTag, type IdentifiedBy } from './vehicles.js';
import { continuesStoredSession, evSessionMemory, sameCounterKwh, type SessionTag, type StoredEvSession } from './ev-session-memory.js';

const defaultBaseLoadKw = 0.5;
const hourMs = 3_600_000;

const unitsSchema = z.strictObject({ currency: z.string(), energyUnit: z.enum(['kWh', 'MWh']), vatIncluded: z.number().optional() });
const segmentsSchema = z.strictObject({
  units: unitsSchema,
  segments: z.array(z.strictObject({ fromMs: z.number(), toMs: z.number(), averagePrice: z.number() })),
  toIsLastHourStart: z.boolean().optional(),
});
const pointsStateSchema = z.strictObject({
  input: z.strictObject({
    units: unitsSchema,
    resolutionMinutes: z.number(),
    points: z.array(z.strictObject({ startMs: z.number(), price: z.number() })),
  }),
  fetchedMs: z.number(),
});
const pricesSchema = z.strictObject({
  forecast: z.strictObject({ input: segmentsSchema, fetchedMs: z.number() }).nullable(),
  advice: z.strictObject({ input: segmentsSchema, fetchedMs: z.number() }).nullable(),
  actual: pointsStateSchema.nullable(),
  nordPool: pointsStateSchema.nullable().optional(),
});
// Plans are our own output: their outline is checked when read back, and the per-device figures a
// re-plan carries on (frozen slots' energy, the naive twin tank, the tank estimate) fully.
const finite = z.number().finite();
const byDevice = <T extends z.ZodType>(v: T) => z.record(z.string(), v).optional();
const planSchema = z.looseObject({
  createdMs: z.number(),
  slotMinutes: z.number(),
  startMs: z.number(),
  endMs: z.number(),
  slots: z.array(
    z.looseObject({
      startMs: z.number(),
      tanks: byDevice(z.looseObject({ energyKwh: finite, endTempC: finite })),
      evs: byDevice(z.looseObject({ energyKwh: finite })),
      baselineTanks: byDevice(z.strictObject({ energyKwh: finite, endTempC: finite })),
    }),
  ),
  tanks: byDevice(z.looseObject({ startTempC: finite, tempSource: z.enum(['measured', 'estimated', 'assumed']) })),
});

export interface HomeTracker {
  snapshot(nowMs: number, prices: PriceData, events: readonly HomeEvent[]): PlanningSnapshot;
  locationCapKw(nowMs: number, events: readonly HomeEvent[]): number;
  deviceCapKw(deviceId: string, nowMs: number, events: readonly HomeEvent[], me: Identity): number | undefined;
  baseLoadKw(): number;
  estimatedTankC(deviceId: string, nowMs: number, plan: Plan | null): number | undefined;
  /** The vehicle identified at a charger now (null: none, or the charger's own model). */
  vehicleAt(chargerId: string): string | null;
  /** Learns from a control tick; true when the plan should be redone (car plugged in or out...). */
  observe(snap: ControlSnapshot, plan: Plan | null): boolean;
  checkEligibility(spark: Pick<SparkClient, 'getEligibility' | 'getEnrollment'>, me: Identity, logger: Logger): Promise<void>;
  eligibility(): { eligible: boolean | null; enrolled: boolean | null; checkedMs: number | null };
  loadPrices(): PriceData | undefined;
  savePrices(data: PriceData): void;
  loadPlan(): Plan | null;
  announcedDevices(): string[];
  saveAnnouncedDevices(ids: string[]): void;
}

/** Whether a session needs no new row: the same start, counter and tag. */
function sameStoredSession(a: StoredEvSession | null, b: StoredEvSession | null): boolean {
  if (a === null || b === null) return a === b;
  const counterSame = a.startKwh === null || b.startKwh === null ? a.startKwh === b.startKwh : Math.abs(a.startKwh - b.startKwh) <= sameCounterKwh;
  return a.startMs === b.startMs && counterSame && a.tag?.idTag === b.tag?.idTag && a.tag?.goeCard === b.tag?.goeCard;
}

function activeAt<T extends { startMs: number; durationMs: number }>(points: readonly T[], nowMs: number): T[] {
  return points.filter((p) => p.startMs <= nowMs && nowMs < p.startMs + p.durationMs);
}

export function createHomeTracker(deps: {
  config: Config;
  store: Pick<Store, 'getState' | 'setState' | 'latestPlan'>;
  clock: Clock;
  wishes: Wishes;
  /** A vehicle's SoC from its own topic (fresh, else undefined); asked only while the car is at a charger. */
  vehicleSocPct?: (vehicleId: string) => number | undefined;
  /** Logs problems found while observing (an unknown tag); without it they are not logged. */
  logger?: Logger;
  /** A heated zone's room learner (absent or null: the zone plans with its default model). */
  zoneLearner?: (zoneId: string) => RoomLearnerState | null;
}): HomeTracker {
  const { config, store } = deps;
  const vlog = deps.logger?.child({ component: 'vehicles' });
  /** Tags already logged as unknown, per charger (once each). */
  const unknownLogged = new Set<string>();
  let baseLoadKw = defaultBaseLoadKw;
  const tank = new Map<
    string,
    { lastKnown: { tempC: number; atMs: number } | null; heatedSinceKwh: number; lastEnergyKwh: number | null; measuredC: number | null }
  >();
  const ev = new Map<
    string,
    {
      plugged: boolean;
      sessionStartKwh: number | null;
      sessionKwh: number;
      sessionStartMs: number | null;
      socPct: number | null;
      vehicleId: string | null;
      identifiedBy: IdentifiedBy;
      tag: SessionTag | null;
    }
  >();
  /** Each zone's room temperature at the last tick, °C; null when the thermometer gave none (missing or stale). */
  const zoneTempC = new Map<string, number | null>();
  const sessions = evSessionMemory(store);
  /** Each charger's session as last stored; an earlier run's is resumed or ended at the charger's first reading. */
  const storedSession = new Map<string, StoredEvSession | null>();
  /** Chargers whose first reading of this run has not come yet. */
  const unread = new Set<string>();
  for (const d of config.devices) {
    if (d.kind !== 'evCharger') continue;
    storedSession.set(d.id, sessions.get(d.id) ?? null);
    unread.add(d.id);
  }
  const legionellaKey = (id: string): string => `legionella:${id}`;
  const legionella = new Map<string, number | null>(
    config.devices.filter(isTankDevice).map((d) => [d.id, store.getState(legionellaKey(d.id), z.number()) ?? null]),
  );
  let elig: { eligible: boolean | null; enrolled: boolean | null; checkedMs: number | null } = { eligible: null, enrolled: null, checkedMs: null };

  function tankNow(d: TankDeviceConfig): TankNow {
    const t = tank.get(d.id);
    return {
      config: d,
      measuredC: t?.measuredC ?? null,
      lastKnown: t?.lastKnown ?? null,
      heatedSinceKwh: t?.heatedSinceKwh ?? 0,
      legionellaLastMs: legionella.get(d.id) ?? null,
      floorOverrideC: deps.wishes.get(d.id).floorC,
    };
  }

  function evNow(d: Extract<Config['devices'][number], { kind: 'evCharger' }>): EvNow {
    const e = ev.get(d.id);
    const w = deps.wishes.get(d.id);
    return {
      config: d,
      plugged: e?.plugged ?? false,
      socPct: e?.socPct ?? null,
      sessionKwh: e?.sessionKwh ?? 0,
      sessionStartMs: e?.sessionStartMs ?? null,
      vehicle: config.vehicles.find((v) => v.id === e?.vehicleId) ?? null,
      identifiedBy: e?.identifiedBy ?? 'none',
      departureOverrideMs: w.departureMs,
      targetKwhOverride: w.targetKwh,
      targetSocOverride: w.targetSocPct,
    };
  }

  /** Names the car at a plugged charger; true when that changed. A tag once seen holds for the session. */
  function identify(
    d: Extract<Config['devices'][number], { kind: 'evCharger' }>,
    e: { vehicleId: string | null; identifiedBy: IdentifiedBy; tag: SessionTag | null },
    state: EvState | undefined,
  ): boolean {
    // A go-e trx turns null when the session ends with the car still plugged: the car stays known.
    if (state && sessionTag(state) !== undefined)
      e.tag = { ...(state.idTag !== undefined ? { idTag: state.idTag } : {}), ...(state.goeCard !== undefined ? { goeCard: state.goeCard } : {}) };
    const found = identifyVehicle(d, config.vehicles, e.tag ?? undefined);
    if (found.unknownTag !== undefined && !unknownLogged.has(`${d.id} ${found.unknownTag}`)) {
      unknownLogged.add(`${d.id} ${found.unknownTag}`);
      vlog?.warn(
        { code: 'VEHICLE_UNKNOWN', device: d.id, tag: found.unknownTag },
        "the charger named a car no vehicle claims: planned with the charger's own model",
      );
    }
    const vehicleId = found.vehicle?.id ?? null;
    const changed = vehicleId !== e.vehicleId;
    e.vehicleId = vehicleId;
    e.identifiedBy = found.by;
    if (changed && vehicleId !== null) vlog?.info({ device: d.id, vehicle: vehicleId, by: found.by }, 'car at the charger');
    return changed;
  }

  /** The zones as the planner sees them (none: the key is left out, so a home without zones plans as before). */
  function zonesNow(): Pick<PlanningSnapshot, 'zones'> {
    const zones = config.devices.flatMap((d) =>
      d.kind === 'zone'
        ? [
            {
              config: d,
              measuredC: zoneTempC.get(d.id) ?? null,
              preset: deps.wishes.get(d.id).preset ?? 'comfort',
              learner: deps.zoneLearner?.(d.id) ?? null,
            },
          ]
        : [],
    );
    return zones.length > 0 ? { zones } : {};
  }

  return {
    snapshot(nowMs, prices, events) {
      return {
        nowMs,
        prices,
        events,
        tanks: config.devices.filter(isTankDevice).map(tankNow),
        evs: config.devices.flatMap((d) => (d.kind === 'evCharger' ? [evNow(d)] : [])),
        baseLoadKw,
        ...zonesNow(),
      };
    },

    locationCapKw(nowMs, events) {
      const caps = events
        .flatMap((e) => activeAt(e.lpcCaps, nowMs))
        .filter((c) => c.resourceId === null)
        .map((c) => c.maxKw);
      return Math.min(config.site.locationLimitKw, ...caps);
    },

    deviceCapKw(deviceId, nowMs, events, me) {
      const caps = events
        .flatMap((e) => activeAt(e.lpcCaps, nowMs))
        .filter((c) => c.resourceId !== null && me.resources.get(c.resourceId) === deviceId)
        .map((c) => c.maxKw);
      return caps.length > 0 ? Math.min(...caps) : undefined;
    },

    baseLoadKw: () => baseLoadKw,
    vehicleAt: (chargerId) => ev.get(chargerId)?.vehicleId ?? null,

    estimatedTankC(deviceId, nowMs, plan) {
      // Without a sensor, the plan's own model is the estimate, unless it merely assumed a start.
      const outcome = plan?.tanks?.[deviceId];
      if (!plan || !outcome || outcome.tempSource === 'assumed') return undefined;
      const idx = plan.slots.findIndex((s) => s.startMs <= nowMs && nowMs < s.endMs);
      if (idx < 0) return undefined;
      const prev = idx > 0 ? plan.slots[idx - 1]?.tanks?.[deviceId]?.endTempC : outcome.startTempC;
      return prev ?? undefined;
    },

    observe(snap, _plan) {
      let replan = false;
      // Writes go last, so a failing store (disk full) never leaves the in-memory state half-updated.
      const writes: (() => void)[] = [];
      // Base load: what the main meter sees beyond the controlled devices, smoothed.
      if (snap.locationPowerW !== undefined) {
        let devicesW = 0;
        // A solar device's power is production, not a load.
        for (const d of config.devices) if (d.kind !== 'meter' && d.kind !== 'solar') devicesW += Math.max(0, snap.readings.get(d.id)?.powerW ?? 0);
        const sample = Math.max(0, (snap.locationPowerW - devicesW) / 1000);
        baseLoadKw = baseLoadKw * 0.98 + sample * 0.02;
      }
      for (const d of config.devices) {
        const r = snap.readings.get(d.id);
        if (!r) continue;
        if (d.kind === 'zone') zoneTempC.set(d.id, r.temperatureC ?? null);
        if (isTankDevice(d)) {
          const t = tank.get(d.id) ?? { lastKnown: null, heatedSinceKwh: 0, lastEnergyKwh: null, measuredC: null };
          t.measuredC = r.temperatureC ?? null;
          if (r.temperatureC !== undefined) {
            t.lastKnown = { tempC: r.temperatureC, atMs: snap.atMs };
            t.heatedSinceKwh = 0;
          } else if (r.energyKwh !== undefined) {
            if (t.lastEnergyKwh !== null && r.energyKwh >= t.lastEnergyKwh) t.heatedSinceKwh += r.energyKwh - t.lastEnergyKwh;
            // An allowed element drawing nothing means the thermostat is satisfied: the tank is at max.
            const allowed = snap.decision.setpoints.some((s) => s.kind === 'heater' && s.id === d.id && s.allow);
            if (allowed && (r.powerW ?? Infinity) < 0.05 * heatingKwOf(d) * 1000) {
              t.lastKnown = { tempC: d.model.maxC, atMs: snap.atMs };
              t.heatedSinceKwh = 0;
            }
          }
          if (r.energyKwh !== undefined) t.lastEnergyKwh = r.energyKwh;
          tank.set(d.id, t);
          const reached = r.temperatureC !== undefined && r.temperatureC >= d.model.legionella.tempC;
          const last = legionella.get(d.id) ?? null;
          if (reached && (last === null || snap.atMs - last > hourMs)) {
            legionella.set(d.id, snap.atMs);
            const at = snap.atMs;
            writes.push(() => store.setState(legionellaKey(d.id), at));
          }
        } else if (d.kind === 'evCharger') {
          const e = ev.get(d.id) ?? {
            plugged: false,
            sessionStartKwh: null,
            sessionKwh: 0,
            sessionStartMs: null,
            socPct: null,
            vehicleId: null,
            identifiedBy: 'none' as IdentifiedBy,
            tag: null,
          };
          // A charger that tells nothing this tick (down, stale) has not seen the car leave.
          const plugged = r.ev ? r.ev.plugged : e.plugged;
          const earlier = r.ev && unread.delete(d.id) ? storedSession.get(d.id) : null;
          if (earlier) {
            if (continuesStoredSession(earlier, { plugged, energyKwh: r.energyKwh, sessionKwh: r.ev?.sessionKwh })) {
              Object.assign(e, {
                plugged: true,
                sessionStartMs: earlier.startMs,
                sessionStartKwh: earlier.startKwh,
                sessionKwh: 0,
                tag: earlier.tag,
              });
            } else {
              // The car left while the daemon was down: what was asked for its session ends with it.
              storedSession.set(d.id, null);
              writes.push(() => {
                sessions.end(d.id);
                deps.wishes.endSession(d.id);
              });
            }
          }
          if (plugged !== e.plugged) {
            replan = true;
            if (!plugged) writes.push(() => deps.wishes.endSession(d.id));
            e.plugged = plugged;
            e.sessionStartKwh = plugged ? (r.energyKwh ?? null) : null;
            e.sessionKwh = 0;
            e.sessionStartMs = plugged ? snap.atMs : null;
          }
          if (plugged && r.energyKwh !== undefined) {
            // A charger that counts its session (OCPP's meterStart, kept across a restart; go-e) says where it began.
            if (r.ev?.sessionKwh !== undefined) e.sessionStartKwh = r.energyKwh - r.ev.sessionKwh;
            e.sessionStartKwh ??= r.energyKwh;
            e.sessionKwh = Math.max(0, r.energyKwh - e.sessionStartKwh);
          }
          if (plugged && config.vehicles.length > 0 && identify(d, e, r.ev)) replan = true;
          if (!plugged) Object.assign(e, { vehicleId: null, identifiedBy: 'none', tag: null });
          const session = plugged && e.sessionStartMs !== null ? { startMs: e.sessionStartMs, startKwh: e.sessionStartKwh, tag: e.tag } : null;
          if (!sameStoredSession(storedSession.get(d.id) ?? null, session)) {
            storedSession.set(d.id, session);
            writes.push(() => (session ? sessions.save(d.id, session) : sessions.end(d.id)));
          }
          if (r.ev) e.socPct = r.ev.socPct ?? null;
          if (e.vehicleId !== null) {
            // The car's own topic, while it is at this charger; a charger's own topic belongs to its model car.
            const own = config.vehicles.find((v) => v.id === e.vehicleId)?.soc ? deps.vehicleSocPct?.(e.vehicleId) : undefined;
            e.socPct = own ?? (d.soc ? null : e.socPct);
          }
          ev.set(d.id, e);
        }
      }
      for (const write of writes) write();
      return replan;
    },

    async checkEligibility(spark, me, logger) {
      if (!me.userId) return;
      const log = logger.child({ component: 'eligibility' });
      try {
        const [eligibility, enrollment] = await Promise.all([spark.getEligibility(me.userId), spark.getEnrollment(me.userId)]);
        elig = { eligible: eligibility.isEligible, enrolled: enrollment.isEnrolled ?? null, checkedMs: deps.clock.nowMs() };
        // Kept for `wattshift status`, which reads the store while the daemon runs.
        store.setState('eligibility', elig);
        const facts = { eligible: eligibility.isEligible, enrolled: enrollment.isEnrolled };
        if (!eligibility.isEligible) {
          log.warn(
            facts,
            'this home is not eligible for the programme (yet): no price or limit events will come until it is; check spark.meterPointIds and spark.coordinates, run `wattshift register`, or wait for the API to approve it',
          );
        } else if (!enrollment.isEnrolled) {
          log.warn(facts, 'this home is eligible but not enrolled in the programme: run `wattshift register` to enrol it');
        } else {
          log.info(facts, 'eligible and enrolled in the programme');
        }
      } catch (err) {
        log.warn({ code: codeOf(err) }, 'could not ask the API whether this home is eligible; retried on the next eligibility event or restart');
      }
    },
    eligibility: () => elig,

    loadPrices: () => store.getState('prices', pricesSchema) as PriceData | undefined,
    savePrices: (data) => store.setState('prices', data),
    loadPlan: () => {
      const row = store.latestPlan();
      const parsed = row ? planSchema.safeParse(row.json) : undefined;
      return parsed?.success ? (parsed.data as unknown as Plan) : null;
    },
    announcedDevices: () => store.getState('ha:devices', z.array(z.string())) ?? [],
    saveAnnouncedDevices: (ids) => store.setState('ha:devices', ids),
  };
}
