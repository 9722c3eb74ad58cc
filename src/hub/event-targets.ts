/**
 * Which homes an API event concerns, read from its payload (pure). Locations named directly are
 * taken as they are; resources and users are named too, for the hub to look up their locations
 * in its registry (a resource LPC names its location, but the registry is the authority).
 * `eventPerLocation` cuts an event down to what each location's gateway is sent.
 */
import { parseApiTimeMs, parseTimeSpanMs } from '../spark/event-normalise.js';
import {
  isLocationLpcPayload,
  isLpcReservationPayload,
  isPriceCurvePayload,
  isResourceLpcPayload,
  isUserEligibilityPayload,
  type SparkEvent,
} from '../spark/wire.js';

export interface EventTargets {
  locationIds: string[];
  resourceIds: string[];
  userIds: string[];
  /** End of the last point the event covers, ms; null when it covers no time (eligibility). */
  endsAtMs: number | null;
}

function lastEnd(points: readonly { timestamp?: string | null }[], resolution: string | null | undefined, end: number | null): number | null {
  const stepMs = parseTimeSpanMs(resolution);
  let latest = end;
  for (const p of points) {
    if (p.timestamp == null) continue;
    const t = parseApiTimeMs(p.timestamp) + stepMs;
    latest = latest === null ? t : Math.max(latest, t);
  }
  return latest;
}

export function eventTargets(event: SparkEvent): EventTargets {
  const payload = event.payload;
  const locations = new Set<string>();
  const resources = new Set<string>();
  const users = new Set<string>();
  let endsAtMs: number | null = null;
  if (isPriceCurvePayload(payload)) {
    for (const t of payload.targets) {
      locations.add(t.locationId);
      resources.add(t.resourceId);
    }
    endsAtMs = lastEnd(payload.priceCurveDelta.points ?? [], payload.priceCurveDelta.resolution, null);
  } else if (isLocationLpcPayload(payload) || isLpcReservationPayload(payload) || isResourceLpcPayload(payload)) {
    for (const t of payload.targets) {
      locations.add(t.locationId);
      if ('resourceId' in t && typeof t.resourceId === 'string') resources.add(t.resourceId);
      endsAtMs = lastEnd(t.points, t.resolution, endsAtMs);
    }
  } else if (isUserEligibilityPayload(payload)) {
    for (const u of [...(payload.addedUsers ?? []), ...(payload.removedUsers ?? [])]) users.add(u);
  }
  locations.delete('');
  resources.delete('');
  return { locationIds: [...locations], resourceIds: [...resources], userIds: [...users], endsAtMs };
}

/**
 * The event as each location's gateway gets it: the payload's targets cut to that location's own
 * (named by location, or by a resource the registry places there), in one pass over the targets.
 * A message for one home then carries neither the size of the whole targeted fleet nor other
 * homes' ids; the gateway keeps only its own targets anyway. A payload without targets
 * (eligibility) goes to every location as it is.
 */
export function eventPerLocation(
  event: SparkEvent,
  locationIds: readonly string[],
  resourceLocations: ReadonlyMap<string, string>,
): (locationId: string) => SparkEvent {
  const payload = event.payload as { targets?: unknown } | null | undefined;
  if (!payload || !Array.isArray(payload.targets)) return () => event;
  const wanted = new Set(locationIds);
  const byLocation = new Map<string, unknown[]>();
  for (const t of payload.targets as unknown[]) {
    const target = (t ?? {}) as { locationId?: unknown; resourceId?: unknown };
    const homes = new Set<string>();
    if (typeof target.locationId === 'string' && wanted.has(target.locationId)) homes.add(target.locationId);
    const viaResource = typeof target.resourceId === 'string' ? resourceLocations.get(target.resourceId) : undefined;
    if (viaResource !== undefined && wanted.has(viaResource)) homes.add(viaResource);
    for (const home of homes) {
      const list = byLocation.get(home);
      if (list) list.push(t);
      else byLocation.set(home, [t]);
    }
  }
  return (locationId) => ({ ...event, payload: { ...payload, targets: byLocation.get(locationId) ?? [] } as SparkEvent['payload'] });
}
