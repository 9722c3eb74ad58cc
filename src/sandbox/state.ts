import type { LocationType, NotificationType, ResourceType } from '../spark/wire.js';

/** In-memory records of one partner (OAuth client id). Partners never see each other's data. */

export interface UserRec {
  userId: string;
  simulated: boolean;
  enrollment?: { enrollmentId: string; enrolledAtMs: number };
}

export interface LocationRec {
  locationId: string;
  userId: string;
  locationType: LocationType;
  coordinates?: { latitude: number; longitude: number };
  meterPointIds: string[];
  simulated: boolean;
}

export interface ResourceRec {
  resourceId: string;
  resourceType: ResourceType;
  userId: string;
  locationId: string | null;
  meterPointId: string | null;
  simulated: boolean;
}

export interface EventRec {
  id: string;
  createdAtMs: number;
  notificationType: NotificationType;
  payload: Record<string, unknown>;
  /** The span the event covers, for report validation: [fromMs, toMs). */
  coverFromMs: number;
  coverToMs: number;
  /** Monotonic creation order, to sort newest first with equal timestamps. */
  seq: number;
}

export interface WebhookRec {
  webhookId: string;
  webhookUrl: string;
  name: string | null;
  secret: string | null;
  notificationTypes: NotificationType[];
  enabled: boolean;
  status: 'New' | 'Healthy' | 'Unhealthy' | 'TimeOut';
  createdMs: number;
  modifiedMs: number;
  lastAnalyzedMs: number;
}

export interface NotificationLogRec {
  webhookId: string;
  webhookUrl: string;
  notificationId: string;
  eventId: string;
  notificationType: NotificationType;
  sentMs: number;
  signature: string | null;
  requestTimeout: boolean;
  responseStatusCode: number | null;
  requestDurationMs: number | null;
  /** 1 for the first attempt, 2..4 for retries. */
  attempt: number;
  content: string;
  seq: number;
}

/** One accepted usage/acknowledgement payload, normalised. */
export interface AcceptedPayload {
  payloadType: string;
  resourceId: string | null;
  locationId: string | null;
  meterPointId: string | null;
  points: { timestampMs: number; kiloWattHours: number }[];
  raw: unknown;
}

export interface AcceptedReport {
  id: string;
  eventId: string;
  createdAtMs: number;
  payloads: AcceptedPayload[];
}

export interface AcceptedPlanReport {
  id: string;
  createdAtMs: number;
  payloads: AcceptedPayload[];
}

export class PartnerState {
  readonly users = new Map<string, UserRec>();
  readonly locations = new Map<string, LocationRec>();
  readonly resources = new Map<string, ResourceRec>();
  readonly events: EventRec[] = [];
  readonly webhooks = new Map<string, WebhookRec>();
  readonly logs: NotificationLogRec[] = [];
  readonly reports: AcceptedReport[] = [];
  /** Location energy usage plans: reports that answer no event. */
  readonly planReports: AcceptedPlanReport[] = [];
  /** Eligible users as last published by the eligibility batch. */
  published = new Set<string>();
  /** Set when something that may change eligibility happened and the batch has not run. */
  eligibilityDirty = false;
  /** Local dates (Europe/Oslo) for which the daily price curves were created. */
  readonly curveDays = new Set<string>();

  constructor(readonly clientId: string) {}

  locationsOf(userId: string): LocationRec[] {
    return [...this.locations.values()].filter((l) => l.userId === userId);
  }

  resourcesOfLocation(locationId: string): ResourceRec[] {
    return [...this.resources.values()].filter((r) => r.locationId === locationId);
  }

  resourcesOfUser(userId: string): ResourceRec[] {
    return [...this.resources.values()].filter((r) => r.userId === userId);
  }

  /** Removes a location and its bound resources. */
  deleteLocation(locationId: string): void {
    this.locations.delete(locationId);
    for (const r of this.resourcesOfLocation(locationId)) this.resources.delete(r.resourceId);
  }

  /** Removes a user and everything related: enrollment, locations, resources (also vehicles). */
  deleteUser(userId: string): void {
    for (const l of this.locationsOf(userId)) this.deleteLocation(l.locationId);
    for (const r of this.resourcesOfUser(userId)) this.resources.delete(r.resourceId);
    this.users.delete(userId);
  }
}

export interface Page<T> {
  items: T[];
  pagination: {
    totalRecords: number;
    pageSize: number;
    currentPage: number;
    totalPages: number;
    nextPage: number | null;
    previousPage: number | null;
  };
}

export const defaultPageSize = 100;
export const maxPageSize = 1000;

/** Parses `page`/`pageSize` (1-based page; pageSize 1..1000). Returns an error message when bad. */
export function parsePaging(query: URLSearchParams): { page: number; pageSize: number } | { error: string; field: string } {
  const pageText = query.get('page') ?? query.get('Page');
  const sizeText = query.get('pageSize') ?? query.get('PageSize');
  const page = pageText === null || pageText === '' ? 1 : Number(pageText);
  const pageSize = sizeText === null || sizeText === '' ? defaultPageSize : Number(sizeText);
  if (!Number.isInteger(page) || page < 1) return { error: 'page must be an integer of at least 1', field: 'page' };
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > maxPageSize) {
    return { error: `pageSize must be an integer from 1 to ${maxPageSize}`, field: 'pageSize' };
  }
  return { page, pageSize };
}

export function paginate<T>(all: readonly T[], page: number, pageSize: number): Page<T> {
  const totalRecords = all.length;
  const totalPages = Math.max(1, Math.ceil(totalRecords / pageSize));
  const items = all.slice((page - 1) * pageSize, page * pageSize);
  return {
    items,
    pagination: {
      totalRecords,
      pageSize,
      currentPage: page,
      totalPages,
      nextPage: page < totalPages ? page + 1 : null,
      previousPage: page > 1 ? Math.min(page - 1, totalPages) : null,
    },
  };
}
