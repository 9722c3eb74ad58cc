import type { EventPayload, SparkEvent, EventNotification } from './wire.js';
import { lpcRefusal, maxPointsPerTarget, priceCurveRefusal } from './event-bounds.js';
import {
  eventSchema,
  eventNotificationSchema,
  isLocationLpcPayload,
  isLpcReservationPayload,
  isPriceCurvePayload,
  isResourceLpcPayload,
  isUserEligibilityPayload,
} from './wire.js';

/** Who this daemon is, in the API's ids. */
export interface Identity {
  userId: string | null;
  locationId: string | null;
  /** Resource ids of the configured devices and vehicles, with their device (or vehicle) ids. */
  resources: ReadonlyMap<string, string>;
  meterPointIds: readonly string[];
}

export interface PriceDeltaPoint {
  startMs: number;
  durationMs: number;
  /** Incentive per energy unit; negative encourages consumption. */
  price: number;
  currency: string;
  energyUnit: string;
  resourceId: string | null;
}

export interface LpcCapPoint {
  startMs: number;
  durationMs: number;
  maxKw: number;
  /** Null for a location cap. */
  resourceId: string | null;
  locationId: string;
  meterPointId: string | null;
}

/** An event reduced to what this home needs: only its own targets are kept. */
export interface HomeEvent {
  id: string;
  createdAtMs: number;
  notificationType: string | null;
  payloadType: string;
  relevant: boolean;
  startMs: number | null;
  endMs: number | null;
  locationIds: string[];
  resourceIds: string[];
  priceDeltas: PriceDeltaPoint[];
  lpcCaps: LpcCapPoint[];
  /**
   * The caps an `LPCReservation` says the partner may ask for: planned for, never acknowledged nor
   * enforced (absent: none). An LPC event over the same hours replaces them (plan-inputs.ts).
   */
  lpcReservations?: LpcCapPoint[];
  eligibility: { added: boolean; removed: boolean } | null;
  /** Why the event was refused (values out of bounds, see event-bounds.ts); it is then not relevant. */
  refusal: string | null;
}

/** API timestamps sometimes lack an offset; they are UTC. */
export function parseApiTimeMs(text: string): number {
  const hasZone = /([zZ]|[+-]\d{2}:?\d{2})$/.test(text);
  const ms = Date.parse(hasZone ? text : `${text}Z`);
  if (!Number.isFinite(ms)) throw new Error(`not a timestamp: ${text}`);
  return ms;
}

/** .NET TimeSpan text (`01:00:00`, `1.00:00:00`) in ms; an hour when absent or unreadable. */
export function parseTimeSpanMs(text: string | null | undefined): number {
  const m = /^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.\d+)?$/.exec(text ?? '');
  if (!m) return 3_600_000;
  const [, d, h, min, s] = m;
  const ms = (((Number(d ?? 0) * 24 + Number(h)) * 60 + Number(min)) * 60 + Number(s)) * 1000;
  return ms > 0 ? ms : 3_600_000;
}

function span(points: { startMs: number; durationMs: number }[]): { startMs: number | null; endMs: number | null } {
  if (points.length === 0) return { startMs: null, endMs: null };
  // A loop, not Math.min(...points): a huge event would overflow the call stack.
  let startMs = Infinity;
  let endMs = -Infinity;
  for (const p of points) {
    startMs = Math.min(startMs, p.startMs);
    endMs = Math.max(endMs, p.startMs + p.durationMs);
  }
  return { startMs, endMs };
}

function normalisePayload(payload: EventPayload | null | undefined, me: Identity): Omit<HomeEvent, 'id' | 'createdAtMs' | 'notificationType'> {
  const empty = { priceDeltas: [], lpcCaps: [], eligibility: null, locationIds: [], resourceIds: [], refusal: null };
  const payloadType = payload?.payloadType ?? 'Unknown';
  const mine = (locationId: string, resourceId: string | null): boolean =>
    (resourceId !== null && me.resources.has(resourceId)) || (resourceId === null && locationId === me.locationId);

  if (isPriceCurvePayload(payload)) {
    const curve = payload.priceCurveDelta;
    const durationMs = parseTimeSpanMs(curve.resolution);
    // A price curve targets a resource, or a behind-the-meter location (then any resource id).
    const targets = payload.targets.filter((t) => me.resources.has(t.resourceId) || t.locationId === me.locationId);
    const rawPoints = curve.points ?? [];
    const units = { currency: curve.currency ?? 'EUR', energyUnit: curve.energyUnit ?? 'kWh' };
    const points =
      rawPoints.length > maxPointsPerTarget ? [] : rawPoints.map((p) => ({ startMs: parseApiTimeMs(p.timestamp), durationMs, price: p.price }));
    const refusal =
      targets.length > 0
        ? priceCurveRefusal(
            rawPoints.length,
            points.map((p) => ({ ...p, ...units })),
          )
        : null;
    if (refusal !== null) return { ...empty, payloadType, relevant: false, startMs: null, endMs: null, refusal };
    const priceDeltas = targets.flatMap((t) => points.map((p) => ({ ...p, ...units, resourceId: t.resourceId })));
    return {
      ...empty,
      payloadType,
      relevant: targets.length > 0,
      ...span(points),
      priceDeltas,
      locationIds: [...new Set(targets.map((t) => t.locationId))],
      resourceIds: [...new Set(targets.map((t) => t.resourceId))],
    };
  }
  if (isResourceLpcPayload(payload) || isLocationLpcPayload(payload) || isLpcReservationPayload(payload)) {
    const caps: LpcCapPoint[] = [];
    const pointCounts: number[] = [];
    for (const t of payload.targets) {
      const resourceId = 'resourceId' in t && typeof t.resourceId === 'string' ? t.resourceId : null;
      if (!mine(t.locationId, resourceId)) continue;
      pointCounts.push(t.points.length);
      if (t.points.length > maxPointsPerTarget) continue;
      const durationMs = parseTimeSpanMs(t.resolution);
      for (const p of t.points) {
        if (p.timestamp == null || p.maxPowerInKiloWatts == null) continue;
        caps.push({
          startMs: parseApiTimeMs(p.timestamp),
          durationMs,
          maxKw: p.maxPowerInKiloWatts,
          resourceId,
          locationId: t.locationId,
          meterPointId: t.meterPointId ?? null,
        });
      }
    }
    const refusal = lpcRefusal(pointCounts, caps);
    if (refusal !== null) return { ...empty, payloadType, relevant: false, startMs: null, endMs: null, refusal };
    return {
      ...empty,
      payloadType,
      relevant: caps.length > 0,
      ...span(caps),
      ...(isLpcReservationPayload(payload) ? { lpcReservations: caps } : { lpcCaps: caps }),
      locationIds: [...new Set(caps.map((c) => c.locationId))],
      resourceIds: [...new Set(caps.flatMap((c) => (c.resourceId ? [c.resourceId] : [])))],
    };
  }
  if (isUserEligibilityPayload(payload)) {
    const added = me.userId !== null && (payload.addedUsers ?? []).includes(me.userId);
    const removed = me.userId !== null && (payload.removedUsers ?? []).includes(me.userId);
    return { ...empty, payloadType, relevant: added || removed, startMs: null, endMs: null, eligibility: { added, removed } };
  }
  // Unknown: kept for the record.
  return { ...empty, payloadType, relevant: false, startMs: null, endMs: null };
}

export function normaliseEvent(event: SparkEvent, me: Identity, notificationType: string | null = null): HomeEvent {
  return {
    id: event.id,
    createdAtMs: event.createdAt ? parseApiTimeMs(event.createdAt) : 0,
    notificationType,
    ...normalisePayload(event.payload, me),
  };
}

export function normaliseNotification(n: EventNotification, me: Identity): HomeEvent {
  return normaliseEvent({ id: n.eventId, createdAt: n.eventCreatedAtUtc, payload: n.payload }, me, n.notificationType);
}

/** Parses a raw polled event or webhook body; throws a zod error on a malformed one. */
export function parseIncoming(raw: unknown, kind: 'event' | 'notification', me: Identity): HomeEvent {
  return kind === 'event' ? normaliseEvent(eventSchema.parse(raw), me) : normaliseNotification(eventNotificationSchema.parse(raw), me);
}
