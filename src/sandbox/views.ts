import type { EventRec, LocationRec, NotificationLogRec, ResourceRec, WebhookRec } from './state.js';
import { isoUtc } from '../core/zoned-time.js';

/** Response bodies, member order as the real service writes them. */

export function locationView(l: LocationRec): Record<string, unknown> {
  const view: Record<string, unknown> = { locationId: l.locationId, locationType: l.locationType };
  if (l.coordinates) view.coordinates = { latitude: l.coordinates.latitude, longitude: l.coordinates.longitude };
  view.meterPointId = l.meterPointIds[0] ?? null;
  view.meterPointIds = [...l.meterPointIds];
  view.userId = l.userId;
  return view;
}

export function resourceView(r: ResourceRec): Record<string, unknown> {
  return { resourceId: r.resourceId, resourceType: r.resourceType, userId: r.userId, locationId: r.locationId, meterPointId: r.meterPointId };
}

export function locationBoundResourceView(r: ResourceRec): Record<string, unknown> {
  return { resourceId: r.resourceId, resourceType: r.resourceType, locationId: r.locationId ?? '', userId: r.userId, meterPointId: r.meterPointId };
}

export function eventView(e: EventRec): Record<string, unknown> {
  return { id: e.id, createdAt: isoUtc(e.createdAtMs), payload: e.payload };
}

export function webhookView(w: WebhookRec): Record<string, unknown> {
  return {
    webhookId: w.webhookId,
    webhookUrl: w.webhookUrl,
    name: w.name,
    notificationTypes: [...w.notificationTypes],
    enabled: w.enabled,
    status: w.status,
    modifiedDate: isoUtc(w.modifiedMs),
    createdDate: isoUtc(w.createdMs),
    lastAnalyzedTimestamp: isoUtc(w.lastAnalyzedMs),
  };
}

export function logView(l: NotificationLogRec, tenantId: string): Record<string, unknown> {
  return {
    webhookId: l.webhookId,
    tenantId,
    partnerEventId: l.eventId,
    notificationId: l.notificationId,
    notificationType: l.notificationType,
    notificationSent: isoUtc(l.sentMs),
    sparkSignature: l.signature,
    webhookUrl: l.webhookUrl,
    requestTimeout: l.requestTimeout,
    responseStatusCode: l.responseStatusCode,
    requestDurationMs: l.requestDurationMs,
  };
}

/** Newest first; equal timestamps by creation order. */
export function newestFirst<T extends { seq: number }>(items: readonly T[], at: (t: T) => number): T[] {
  return [...items].sort((a, b) => at(b) - at(a) || b.seq - a.seq);
}
