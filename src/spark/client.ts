/**
 * Client of the Energy Coordination API (`…/energy-coordination/v1`): one method per operation
 * of the OpenAPI document, plus {@link SparkClient.iterateEvents}. Every response is parsed with
 * the schemas of `wire.ts`; every failure is a `WattshiftError` with a stable code:
 * `AUTH_REJECTED` (token endpoint 400/401, a 401 that survives one token refresh, 403),
 * `API_UNAVAILABLE` (network error, timeout, 429, 5xx - after the retries),
 * `API_BAD_RESPONSE` (not JSON, not the contract, or over the body size cap), `API_NOT_FOUND` (404), `API_CONFLICT`
 * (409), `API_REJECTED` (other 4xx, with the server's ProblemDetails title/detail or plain-string
 * message in `details.serverMessage`; also a request body that fails its strict schema, with
 * `details.local` true, before anything is sent). `details` carries `operation`, `status`.
 */
import type { z } from 'zod';
import { WattshiftError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import type { SparkConnection } from './connection.js';
import { createHttpTransport, parseResponse, type HttpRequest, type HttpTimeoutsMs, type RetryOptions } from './http.js';
import { createTokenSource, type ClientCredentialsTokenSource } from './oauth.js';
import * as w from './wire.js';

/** Options shared by the Energy Coordination and the forecast clients. */
export interface SparkAuthOptions {
  /** Identity server base; tokens come from `{authUrl}/connect/token`. */
  authUrl: string;
  clientId: string;
  clientSecret: string;
  clock: Clock;
  logger: Logger;
  /** One pool for all clients (see `connection.ts`); each makes its own from the options below otherwise. */
  connection?: SparkConnection;
  timeoutsMs?: HttpTimeoutsMs;
  /** A larger response body fails with API_BAD_RESPONSE. Default 2 MiB. */
  maxResponseBytes?: number;
  /** Forward proxy for an own pool. */
  proxyUrl?: string;
  retry?: RetryOptions;
  /**
   * Share one token source between clients (e.g. the forecast client reuses the Energy
   * Coordination client's `tokens`). Created from the credentials when absent.
   */
  tokens?: ClientCredentialsTokenSource;
}

export interface SparkClientOptions extends SparkAuthOptions {
  /** E.g. `https://api.sandbox.voluespark.com/energy-coordination/v1`. */
  baseUrl: string;
}

/** `page` is 1-based; `pageSize` at most 1000. */
export interface PageQuery {
  page?: number;
  pageSize?: number;
  signal?: AbortSignal;
}

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal;
}

export interface IterateEventsOptions {
  /** True for an event id already processed: paging stops at the first such event. */
  isKnown: (eventId: string) => boolean;
  /** Events per page (default 100, at most 1000). */
  pageSize?: number;
  /** Safety stop (default 50 pages). */
  maxPages?: number;
  signal?: AbortSignal;
}

export interface SparkClient {
  /** The token source (its `fetchCount` counts token requests). */
  readonly tokens: ClientCredentialsTokenSource;

  // Users
  listUsers(query?: PageQuery): Promise<w.UsersPage>;
  createUser(userId: string, opts?: CallOptions): Promise<w.User>;
  createUsers(users: w.UserCreate[], opts?: CallOptions): Promise<w.UsersBatchResponse>;
  getUser(userId: string, opts?: CallOptions): Promise<w.User>;
  /** Deletes the user with its enrollment, locations and resources. */
  deleteUser(userId: string, opts?: CallOptions): Promise<void>;

  // Locations
  listLocations(userId: string, opts?: CallOptions): Promise<w.Location[]>;
  createLocation(userId: string, location: w.LocationCreate, opts?: CallOptions): Promise<w.Location>;
  createLocations(locations: w.LocationWithUserCreate[], opts?: CallOptions): Promise<w.LocationsBatchResponse>;
  getLocation(userId: string, locationId: string, opts?: CallOptions): Promise<w.Location>;
  /** Full replace (`PUT`); `location.locationId` is sent as given. */
  putLocation(userId: string, locationId: string, location: w.LocationPut, opts?: CallOptions): Promise<w.Location>;
  patchLocation(userId: string, locationId: string, patch: w.LocationPatch, opts?: CallOptions): Promise<w.Location>;
  /** Deletes the location and its resources. */
  deleteLocation(userId: string, locationId: string, opts?: CallOptions): Promise<void>;

  // Resources
  listLocationResources(userId: string, locationId: string, opts?: CallOptions): Promise<w.LocationResource[]>;
  createLocationResource(userId: string, locationId: string, resource: w.LocationResourceCreate, opts?: CallOptions): Promise<w.LocationResource>;
  /** Registers a free-standing vehicle (`resourceType` `Vehicle`). */
  createVehicle(userId: string, vehicle: w.VehicleCreate, opts?: CallOptions): Promise<w.Resource>;
  /** Location-bound resources and vehicles of a user. */
  listUserResources(userId: string, opts?: CallOptions): Promise<w.UserResources>;
  getResource(resourceId: string, opts?: CallOptions): Promise<w.Resource>;
  deleteResource(resourceId: string, opts?: CallOptions): Promise<void>;

  // Program
  getEnrollment(userId: string, opts?: CallOptions): Promise<w.Enrollment>;
  /** Enrolls the user (after consent); no request body. */
  enroll(userId: string, opts?: CallOptions): Promise<w.Enrollment>;
  unenroll(userId: string, opts?: CallOptions): Promise<void>;
  getEligibility(userId: string, opts?: CallOptions): Promise<w.UserEligibility>;
  listEligibleUsers(query?: PageQuery): Promise<w.EligibleUsersPage>;
  /** All eligible user ids, paging through `GET /users/eligible`. */
  allEligibleUserIds(opts?: CallOptions & { pageSize?: number }): Promise<string[]>;
  getMeterEligibility(meterPointId: string, opts?: CallOptions): Promise<w.MeterEligibility>;
  /** Compensation of the current month. */
  getCompensation(userId: string, opts?: CallOptions): Promise<w.Compensation>;

  // Events and reports
  /** One page of events, newest first. */
  listEvents(query?: PageQuery): Promise<w.EventsPage>;
  getEvent(eventId: string, opts?: CallOptions): Promise<w.SparkEvent>;
  /**
   * Pages through `GET /events` (newest first) and yields the events for which `isKnown` is false.
   * Paging stops after the first page on which every event is known (a known event followed by
   * unknown older ones - e.g. a webhook delivered the newest but not an earlier one - does not
   * stop it), at the last page, or after `maxPages`. The events are collected first and then
   * yielded oldest first, each once (also when one moves to the next page while paging), so a
   * consumer that marks events known as it goes and is interrupted leaves no gap behind.
   */
  iterateEvents(options: IterateEventsOptions): AsyncGenerator<w.SparkEvent, void, undefined>;
  postReport(report: w.ReportRequest, opts?: CallOptions): Promise<w.ReportResponse>;

  // Webhooks
  createWebhook(webhook: w.WebhookCreate, opts?: CallOptions): Promise<w.Webhook>;
  listWebhooks(opts?: CallOptions): Promise<w.Webhook[]>;
  getWebhook(webhookId: string, opts?: CallOptions): Promise<w.Webhook>;
  putWebhook(webhookId: string, webhook: w.WebhookPut, opts?: CallOptions): Promise<w.Webhook>;
  patchWebhook(webhookId: string, patch: w.WebhookPatch, opts?: CallOptions): Promise<w.Webhook>;
  deleteWebhook(webhookId: string, opts?: CallOptions): Promise<void>;
  setWebhookEnabled(webhookId: string, enabled: boolean, opts?: CallOptions): Promise<void>;
  listWebhookLogs(query?: PageQuery & { webhookId?: string }): Promise<w.WebhookLogsPage>;
  getWebhookLog(notificationId: string, opts?: CallOptions): Promise<w.WebhookLogDetail>;

  // Simulation (sandbox only)
  simulatePriceCurve(request?: w.SimulatePriceCurveRequest, opts?: CallOptions): Promise<w.SparkEvent>;
  simulateUserEligibility(opts?: CallOptions): Promise<w.SparkEvent>;
  simulateLocationLpc(request?: w.SimulateLocationLpcRequest, opts?: CallOptions): Promise<w.SparkEvent>;
  simulateResourceLpc(request?: w.SimulateResourceLpcRequest, opts?: CallOptions): Promise<w.SparkEvent>;
  /** Creates random simulated users, locations and resources. */
  createSimulatedPartnerData(opts?: CallOptions): Promise<void>;
  /** Deletes all simulation data. */
  deleteSimulatedPartnerData(opts?: CallOptions): Promise<void>;

  /** Closes the client's own connections (and its token source when it created it). */
  close(): Promise<void>;
}

/** Path segment, encoded. */
const seg = (id: string): string => encodeURIComponent(id);

/** Validates an outgoing body with its strict schema; a mismatch never reaches the network. */
export function checkRequest<S extends z.ZodType>(schema: S, body: unknown, operation: string): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  throw new WattshiftError('API_REJECTED', `${operation}: request is invalid, not sent: ${issues.join('; ')}`, {
    details: { operation, local: true, issues },
  });
}

/** Creates a token source from `options` unless one is given. */
export function resolveTokens(options: SparkAuthOptions): { tokens: ClientCredentialsTokenSource; owned: boolean } {
  if (options.tokens) return { tokens: options.tokens, owned: false };
  return { tokens: createTokenSource(options), owned: true };
}

/** Creates an Energy Coordination API client. */
export function createSparkClient(options: SparkClientOptions): SparkClient {
  const { tokens, owned } = resolveTokens(options);
  const http = createHttpTransport({ ...options, tokens, userAgent: 'wattshift' });

  const get = <S extends z.ZodType>(operation: string, path: string, schema: S, opts?: CallOptions & { query?: HttpRequest['query'] }) =>
    http.sendJson({ method: 'GET', path, operation, query: opts?.query, signal: opts?.signal }, schema);
  /** Checks `body` with its strict request schema, sends it, parses the answer with `schema`. */
  const sendBody = async <R extends z.ZodType, S extends z.ZodType>(
    method: 'POST' | 'PUT' | 'PATCH',
    operation: string,
    path: string,
    requestSchema: R,
    body: unknown,
    schema: S,
    opts?: CallOptions & { idempotent?: boolean },
  ): Promise<z.infer<S>> => {
    const json = checkRequest(requestSchema, body, operation);
    return http.sendJson({ method, path, operation, json, signal: opts?.signal, idempotent: opts?.idempotent }, schema);
  };
  const noContent = async (
    method: 'POST' | 'PUT' | 'DELETE',
    operation: string,
    path: string,
    opts?: CallOptions & { query?: HttpRequest['query'] },
  ) => {
    await http.send({ method, path, operation, query: opts?.query, signal: opts?.signal });
  };
  const pageQuery = (q?: PageQuery) => ({ page: q?.page, pageSize: q?.pageSize });

  const client: SparkClient = {
    tokens,

    listUsers: (q) => get('listUsers', '/users', w.usersPageSchema, { query: pageQuery(q), signal: q?.signal }),
    async createUser(userId, opts) {
      const body = checkRequest(w.userCreateSchema, { userId }, 'createUser');
      const res = await http.send({ method: 'POST', path: '/users', operation: 'createUser', json: body, signal: opts?.signal });
      // The document also lists 200 with no body.
      return res.text.trim() === '' ? { userId } : parseResponse(w.userSchema, res, 'createUser');
    },
    async createUsers(users, opts) {
      const body = checkRequest(w.usersBatchCreateSchema, { users }, 'createUsers');
      const res = await http.send({ method: 'POST', path: '/users/batch', operation: 'createUsers', json: body, signal: opts?.signal });
      return res.text.trim() === '' ? { users } : parseResponse(w.usersBatchResponseSchema, res, 'createUsers');
    },
    getUser: (userId, opts) => get('getUser', `/users/${seg(userId)}`, w.userSchema, opts),
    deleteUser: (userId, opts) => noContent('DELETE', 'deleteUser', `/users/${seg(userId)}`, opts),

    listLocations: (userId, opts) => get('listLocations', `/users/${seg(userId)}/locations`, w.locationListSchema, opts),
    createLocation: (userId, location, opts) =>
      sendBody('POST', 'createLocation', `/users/${seg(userId)}/locations`, w.locationCreateSchema, location, w.locationSchema, opts),
    createLocations: (locations, opts) =>
      sendBody(
        'POST',
        'createLocations',
        '/users/locations/batch',
        w.locationsBatchCreateSchema,
        { locations },
        w.locationsBatchResponseSchema,
        opts,
      ),
    getLocation: (userId, locationId, opts) => get('getLocation', `/users/${seg(userId)}/locations/${seg(locationId)}`, w.locationSchema, opts),
    putLocation: (userId, locationId, location, opts) =>
      sendBody('PUT', 'putLocation', `/users/${seg(userId)}/locations/${seg(locationId)}`, w.locationPutSchema, location, w.locationSchema, opts),
    patchLocation: (userId, locationId, patch, opts) =>
      sendBody('PATCH', 'patchLocation', `/users/${seg(userId)}/locations/${seg(locationId)}`, w.locationPatchSchema, patch, w.locationSchema, {
        ...opts,
        idempotent: true,
      }),
    deleteLocation: (userId, locationId, opts) => noContent('DELETE', 'deleteLocation', `/users/${seg(userId)}/locations/${seg(locationId)}`, opts),

    listLocationResources: (userId, locationId, opts) =>
      get('listLocationResources', `/users/${seg(userId)}/locations/${seg(locationId)}/resources`, w.locationResourceListSchema, opts),
    createLocationResource: (userId, locationId, resource, opts) =>
      sendBody(
        'POST',
        'createLocationResource',
        `/users/${seg(userId)}/locations/${seg(locationId)}/resources`,
        w.locationResourceCreateSchema,
        resource,
        w.locationResourceSchema,
        opts,
      ),
    createVehicle: (userId, vehicle, opts) =>
      sendBody('POST', 'createVehicle', `/users/${seg(userId)}/vehicles`, w.vehicleCreateSchema, vehicle, w.resourceSchema, opts),
    listUserResources: (userId, opts) => get('listUserResources', `/users/${seg(userId)}/resources`, w.userResourcesSchema, opts),
    getResource: (resourceId, opts) => get('getResource', `/resources/${seg(resourceId)}`, w.resourceSchema, opts),
    deleteResource: (resourceId, opts) => noContent('DELETE', 'deleteResource', `/resources/${seg(resourceId)}`, opts),

    getEnrollment: (userId, opts) => get('getEnrollment', `/users/${seg(userId)}/enrollment`, w.enrollmentSchema, opts),
    enroll: (userId, opts) =>
      http.sendJson(
        { method: 'POST', path: `/users/${seg(userId)}/enrollment`, operation: 'enroll', idempotent: true, signal: opts?.signal },
        w.enrollmentSchema,
      ),
    unenroll: (userId, opts) => noContent('DELETE', 'unenroll', `/users/${seg(userId)}/enrollment`, opts),
    getEligibility: (userId, opts) => get('getEligibility', `/users/${seg(userId)}/eligibility`, w.userEligibilitySchema, opts),
    listEligibleUsers: (q) => get('listEligibleUsers', '/users/eligible', w.eligibleUsersPageSchema, { query: pageQuery(q), signal: q?.signal }),
    async allEligibleUserIds(opts) {
      const ids: string[] = [];
      const pageSize = opts?.pageSize ?? 1000;
      for (let page = 1; page <= 10_000; page++) {
        const res = await client.listEligibleUsers({ page, pageSize, signal: opts?.signal });
        const users = res.users ?? [];
        for (const u of users) ids.push(u.userId);
        if (!hasMorePages(res.pagination, users.length, pageSize)) break;
      }
      return [...new Set(ids)];
    },
    getMeterEligibility: (mpid, opts) => get('getMeterEligibility', `/meters/${seg(mpid)}/eligible`, w.meterEligibilitySchema, opts),
    getCompensation: (userId, opts) => get('getCompensation', `/users/${seg(userId)}/compensation`, w.compensationSchema, opts),

    listEvents: (q) => get('listEvents', '/events', w.eventsPageSchema, { query: pageQuery(q), signal: q?.signal }),
    getEvent: (eventId, opts) => get('getEvent', `/events/${seg(eventId)}`, w.eventSchema, opts),
    async *iterateEvents(o) {
      const pageSize = o.pageSize ?? 100;
      const maxPages = o.maxPages ?? 50;
      const seen = new Set<string>();
      const fresh: w.SparkEvent[] = [];
      for (let page = 1; page <= maxPages; page++) {
        const res = await client.listEvents({ page, pageSize, signal: o.signal });
        const events = res.events ?? [];
        let known = 0;
        for (const ev of events) {
          if (o.isKnown(ev.id)) known++;
          else if (!seen.has(ev.id)) {
            seen.add(ev.id);
            fresh.push(ev);
          }
        }
        if (known > 0 && known === events.length) break;
        if (!hasMorePages(res.pagination, events.length, pageSize)) break;
      }
      // Oldest first: a consumer that stops half-way leaves only newer events unprocessed.
      for (let i = fresh.length - 1; i >= 0; i--) yield fresh[i]!;
    },
    postReport: (report, opts) => sendBody('POST', 'postReport', '/reports', w.reportRequestSchema, report, w.reportResponseSchema, opts),

    createWebhook: (webhook, opts) => sendBody('POST', 'createWebhook', '/webhooks', w.webhookCreateSchema, webhook, w.webhookSchema, opts),
    listWebhooks: async (opts) => (await get('listWebhooks', '/webhooks', w.webhooksListSchema, opts)).webhooks,
    getWebhook: (id, opts) => get('getWebhook', `/webhooks/${seg(id)}`, w.webhookSchema, opts),
    putWebhook: (id, webhook, opts) => sendBody('PUT', 'putWebhook', `/webhooks/${seg(id)}`, w.webhookPutSchema, webhook, w.webhookSchema, opts),
    patchWebhook: (id, patch, opts) =>
      sendBody('PATCH', 'patchWebhook', `/webhooks/${seg(id)}`, w.webhookPatchSchema, patch, w.webhookSchema, { ...opts, idempotent: true }),
    deleteWebhook: (id, opts) => noContent('DELETE', 'deleteWebhook', `/webhooks/${seg(id)}`, opts),
    setWebhookEnabled: (id, enabled, opts) => noContent('PUT', 'setWebhookEnabled', `/webhooks/${seg(id)}/enabled`, { ...opts, query: { enabled } }),
    listWebhookLogs: (q) =>
      get('listWebhookLogs', '/webhooks/logs', w.webhookLogsPageSchema, { query: { webhookId: q?.webhookId, ...pageQuery(q) }, signal: q?.signal }),
    getWebhookLog: (notificationId, opts) => get('getWebhookLog', `/webhooks/logs/${seg(notificationId)}`, w.webhookLogDetailSchema, opts),

    simulatePriceCurve: async (request = {}, opts) =>
      (
        await sendBody(
          'POST',
          'simulatePriceCurve',
          '/simulation/events/pricecurve',
          w.simulatePriceCurveRequestSchema,
          request,
          w.simulateEventResponseSchema,
          opts,
        )
      ).simulatedEvent,
    simulateUserEligibility: async (opts) =>
      (
        await http.sendJson(
          { method: 'POST', path: '/simulation/events/usereligibility', operation: 'simulateUserEligibility', signal: opts?.signal },
          w.simulateEventResponseSchema,
        )
      ).simulatedEvent,
    simulateLocationLpc: async (request = {}, opts) =>
      (
        await sendBody(
          'POST',
          'simulateLocationLpc',
          '/simulation/events/lpc/locations',
          w.simulateLocationLpcRequestSchema,
          request,
          w.simulateEventResponseSchema,
          opts,
        )
      ).simulatedEvent,
    simulateResourceLpc: async (request = {}, opts) =>
      (
        await sendBody(
          'POST',
          'simulateResourceLpc',
          '/simulation/events/lpc/resources',
          w.simulateResourceLpcRequestSchema,
          request,
          w.simulateEventResponseSchema,
          opts,
        )
      ).simulatedEvent,
    createSimulatedPartnerData: (opts) => noContent('POST', 'createSimulatedPartnerData', '/simulation/partner', opts),
    deleteSimulatedPartnerData: (opts) => noContent('DELETE', 'deleteSimulatedPartnerData', '/simulation/partner', opts),

    async close() {
      await http.close();
      if (owned) await tokens.close();
    },
  };
  return client;
}

/** Whether another page follows, from `nextPage`/`totalPages`, else from a full page. */
export function hasMorePages(p: w.Pagination, itemsOnPage: number, pageSize: number): boolean {
  if (itemsOnPage === 0) return false;
  if (p.nextPage !== undefined) return p.nextPage !== null && p.nextPage > p.currentPage;
  if (typeof p.totalPages === 'number') return p.currentPage < p.totalPages;
  return itemsOnPage >= pageSize;
}
