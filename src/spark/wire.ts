/**
 * Wire schemas (zod 4) of the Energy Coordination API (`/energy-coordination/v1`, contract:
 * spec/ec-sandbox-swagger.json), its webhook body and the forecast price service
 * (`/smart/v1`). The client parses every response with these; the sandbox validates requests
 * with them and builds its responses from the inferred types.
 *
 * Policy: request schemas are strict (`z.strictObject`, closed enums) - except where the brief
 * and the OpenAPI document disagree, where both variants are accepted (acknowledgement spellings,
 * `points`/`curvePoints`). Response schemas are loose (`z.looseObject`): unknown fields are kept,
 * unknown enum values are kept as plain strings, unknown event payload types are kept as
 * {@link UnknownEventPayload}, and optional fields may be `null`.
 *
 * Exported schemas (OpenAPI component name in brackets):
 * - enums (value lists): `priceAreas`, `currencies`, `energyUnits`, `resourceTypes`,
 *   `locationTypes`, `notificationTypes`, `eventPayloadTypes`, `reportPayloadTypes`,
 *   `reportPayloadTypeAliases`, `webhookStatuses`, `problemTypes`
 * - common: `paginationSchema` [ApiPagination], `problemDetailsSchema`
 *   [HttpValidationProblemDetails], `coordinateSchema` / `coordinateRequestSchema` [Coordinate],
 *   `energyCurvePointSchema` [EnergyCurvePoint], `lpcDataPointSchema` [LPCDataPoint],
 *   `priceCurvePointSchema` [PriceCurvePoint], `priceCurveSchema` / `priceCurveRequestSchema`
 *   [PriceCurve], `tokenResponseSchema` (OAuth token endpoint)
 * - users: `userCreateSchema` [PostUserRequest], `usersBatchCreateSchema` [PostUsersBatchRequest],
 *   `userSchema` [GetUserResponse], `usersPageSchema` [GetUsersResponse],
 *   `usersBatchResponseSchema` [PostUsersBatchResponse]
 * - locations: `locationCreateSchema` [PostLocationRequest], `locationPutSchema`
 *   [PutLocationRequest], `locationPatchSchema` [PatchLocationRequest],
 *   `locationWithUserCreateSchema` [PostLocationWithUserRequest], `locationsBatchCreateSchema`
 *   [PostLocationsBatchRequest], `locationSchema` [GetLocationResponse], `locationListSchema`,
 *   `locationsBatchResponseSchema` [PostLocationsBatchResponse]
 * - resources: `vehicleCreateSchema` [PostVehicleResourceRequest], `locationResourceCreateSchema`
 *   [PostLocationBoundResourceRequest], `resourceSchema` [GetResourceResponse],
 *   `locationResourceSchema` [GetLocationBoundResourceResponse], `locationResourceListSchema`,
 *   `userResourcesSchema` [GetUserResourcesResponse]
 * - program: `enrollmentSchema` [GetUserEnrollmentResponse], `userEligibilitySchema`
 *   [GetUserEligibilityResponse], `eligibleUsersPageSchema` [GetEligibleUsersResponse],
 *   `meterEligibilitySchema` [GetMpidEligibilityResponse], `compensationSchema`
 *   [GetUserCompensationForCurrentMonthResponse]
 * - events: `priceCurvePayloadSchema`, `userEligibilityPayloadSchema`, `locationLpcPayloadSchema`,
 *   `resourceLpcPayloadSchema`, `lpcReservationPayloadSchema`, `unknownEventPayloadSchema`,
 *   `eventPayloadSchema` [SparkEventPayload], `eventSchema` [GetEventResponse], `eventsPageSchema`
 *   [GetEventsResponse], `eventNotificationSchema` [EventNotification]
 * - reports: `energyUsageReportPayloadSchema`, `locationEnergyUsageReportPayloadSchema`,
 *   `resourceLpcAckReportPayloadSchema`, `locationLpcAckReportPayloadSchema`,
 *   `locationEnergyUsagePlanReportPayloadSchema`, `reportPayloadSchema`, `reportRequestSchema`
 *   [PostReportRequest], `reportResponseSchema` [GetReportResponse]
 * - webhooks: `webhookCreateSchema` [PostWebhookRequest], `webhookPutSchema` [PutWebhookRequest],
 *   `webhookPatchSchema` [PatchWebhookRequest], `webhookSchema` [GetWebhookResponse],
 *   `webhooksListSchema` [GetWebhooksResponse], `webhookLogSchema` [WebhookNotificationLog],
 *   `webhookLogsPageSchema` [GetWebhookNotificationLogsResponse], `webhookLogDetailSchema`
 *   [GetWebhookNotificationLogByIdResponse]
 * - simulation: `simulatePriceCurveRequestSchema` [SimulatePriceCurveEventRequest],
 *   `simulateLocationLpcRequestSchema` [SimulateLocationLPCEventRequest],
 *   `simulateResourceLpcRequestSchema` [SimulateResourceLPCEventRequest],
 *   `simulateEventResponseSchema` [SimulateEventResponse]
 * - forecast service: `priceUnitsSchema`, `forecastSegmentSchema`, `adviceSegmentSchema`,
 *   `forecastResponseSchema`, `forecastAdviceRequestSchema`, `forecastAdviceResponseSchema`,
 *   `actualPricesResponseSchema`
 */
import { z } from 'zod';

// ---------------------------------------------------------------------------------------------
// Enums

export const priceAreas = ['Unknown', 'NO1', 'NO2', 'NO3', 'NO4', 'NO5', 'FI', 'DK1', 'DK2', 'SE1', 'SE2', 'SE3', 'SE4'] as const;
export const currencies = ['NOK', 'EUR', 'SEK', 'DKK'] as const;
/** The document writes `kWh`; the brief also names `KWh`, accepted in requests. */
export const energyUnits = ['kWh', 'MWh'] as const;
export const resourceTypes = ['Generic', 'Vehicle', 'Charger', 'HotWaterTank', 'HVAC', 'SolarInverter'] as const;
export const locationTypes = ['Unknown', 'Residential', 'Commercial', 'Other'] as const;
export const notificationTypes = [
  'Unknown',
  'PriceCurveCreated',
  'UserEligibilityUpdated',
  'LocationLPCRequested',
  'ResourceLPCRequested',
  'LPCReservationCreated',
] as const;
export const eventPayloadTypes = ['Unknown', 'UserEligibility', 'PriceCurve', 'LocationLPC', 'ResourceLPC', 'LPCReservation'] as const;
export const reportPayloadTypes = [
  'EnergyUsage',
  'LocationEnergyUsage',
  'LocationEnergyUsagePlan',
  'ResourceLPCAcknowledgement',
  'LocationLPCAcknowledgement',
] as const;
/** Acknowledgement spellings used by the guides; accepted as synonyms of the document's values. */
export const reportPayloadTypeAliases = {
  ResourceLPCAcknowledged: 'ResourceLPCAcknowledgement',
  LocationLPCAcknowledged: 'LocationLPCAcknowledgement',
} as const;
export const webhookStatuses = ['New', 'Healthy', 'Unhealthy', 'TimeOut'] as const;
export const problemTypes = ['MissingMpidOnLocation', 'CompensationMpidDoesNotMatchLocation'] as const;

export type PriceArea = (typeof priceAreas)[number];
export type Currency = (typeof currencies)[number];
export type EnergyUnit = (typeof energyUnits)[number];
export type ResourceType = (typeof resourceTypes)[number];
export type LocationType = (typeof locationTypes)[number];
export type NotificationType = (typeof notificationTypes)[number];
export type EventPayloadType = (typeof eventPayloadTypes)[number];
export type ReportPayloadType = (typeof reportPayloadTypes)[number];

/**
 * A response enum: the known values, or any other string (kept, never rejected). The type is
 * `Known | (string & {})` so editors still suggest the known values.
 */
function openEnum<const T extends readonly [string, ...string[]]>(values: T) {
  return z.union([z.enum(values), z.string()]) as unknown as z.ZodType<T[number] | (string & {})>;
}

// ---------------------------------------------------------------------------------------------
// Scalars

/** ISO 8601 date-time; with an offset (`Z`, `+00:00`) or, in responses, without one. */
const dateTimeRequest = z.iso.datetime({ offset: true });
const dateTime = z.iso.datetime({ offset: true, local: true });
/** .NET TimeSpan text, e.g. `01:00:00` or `1.00:00:00`. */
const timeSpanRequest = z.string().regex(/^(\d+\.)?\d{1,2}:\d{2}:\d{2}(\.\d{1,7})?$/, 'expected a time span like 01:00:00');
const nonEmpty = z.string().min(1);
const int = z.number().int();

// ---------------------------------------------------------------------------------------------
// Common

export const paginationSchema = z.looseObject({
  totalRecords: int,
  pageSize: int,
  currentPage: int,
  totalPages: int.nullish(),
  nextPage: int.nullish(),
  previousPage: int.nullish(),
});
export type Pagination = z.infer<typeof paginationSchema>;

/** RFC 7807 problem body (ASP.NET `HttpValidationProblemDetails`); extra members allowed. */
export const problemDetailsSchema = z.looseObject({
  type: z.string().nullish(),
  title: z.string().nullish(),
  status: int.nullish(),
  detail: z.string().nullish(),
  instance: z.string().nullish(),
  errors: z.record(z.string(), z.array(z.string())).nullish(),
});
export type ProblemDetails = z.infer<typeof problemDetailsSchema>;

export const coordinateRequestSchema = z.strictObject({
  latitude: z.number().min(-90).max(90),
  longitude: z.number().min(-180).max(180),
});
export const coordinateSchema = z.looseObject({ latitude: z.number(), longitude: z.number() });
export type Coordinate = z.infer<typeof coordinateRequestSchema>;

export const energyCurvePointRequestSchema = z.strictObject({ timestamp: dateTimeRequest, kiloWattHours: z.number() });
export const energyCurvePointSchema = z.looseObject({ timestamp: dateTime, kiloWattHours: z.number() });
export type EnergyCurvePoint = z.infer<typeof energyCurvePointRequestSchema>;

export const lpcDataPointRequestSchema = z.strictObject({ maxPowerInKiloWatts: z.number().min(0), timestamp: dateTimeRequest });
export const lpcDataPointSchema = z.looseObject({ maxPowerInKiloWatts: z.number().nullish(), timestamp: dateTime.nullish() });
export type LpcDataPoint = z.infer<typeof lpcDataPointSchema>;

export const priceCurvePointRequestSchema = z.strictObject({ price: z.number(), timestamp: dateTimeRequest });
export const priceCurvePointSchema = z.looseObject({ price: z.number(), timestamp: dateTime });
export type PriceCurvePoint = z.infer<typeof priceCurvePointSchema>;

export const priceCurveRequestSchema = z.strictObject({
  points: z.array(priceCurvePointRequestSchema).optional(),
  energyUnit: z.enum([...energyUnits, 'KWh']).optional(),
  currency: z.enum(currencies).optional(),
  resolution: timeSpanRequest.optional(),
});
export const priceCurveSchema = z.looseObject({
  points: z.array(priceCurvePointSchema).nullish(),
  energyUnit: openEnum(energyUnits).nullish(),
  currency: openEnum(currencies).nullish(),
  resolution: z.string().nullish(),
});
export type PriceCurve = z.infer<typeof priceCurveSchema>;

/** Body of `POST {authUrl}/connect/token`. */
export const tokenResponseSchema = z.looseObject({
  access_token: nonEmpty,
  expires_in: z.number().positive().nullish(),
  token_type: z.string().nullish(),
  scope: z.string().nullish(),
});
export type TokenResponse = z.infer<typeof tokenResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Users

export const userCreateSchema = z.strictObject({ userId: nonEmpty });
export type UserCreate = z.infer<typeof userCreateSchema>;
export const usersBatchCreateSchema = z.strictObject({ users: z.array(userCreateSchema) });
export type UsersBatchCreate = z.infer<typeof usersBatchCreateSchema>;
export const userSchema = z.looseObject({ userId: z.string() });
export type User = z.infer<typeof userSchema>;
export const usersPageSchema = z.looseObject({ pagination: paginationSchema, users: z.array(userSchema).nullish() });
export type UsersPage = z.infer<typeof usersPageSchema>;
export const usersBatchResponseSchema = z.looseObject({ users: z.array(userSchema) });
export type UsersBatchResponse = z.infer<typeof usersBatchResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Locations (the document's own request examples send `null` for unset optional fields)

const locationFields = {
  locationId: nonEmpty,
  locationType: z.enum(locationTypes).nullish(),
  coordinates: coordinateRequestSchema.nullish(),
  /** Deprecated single meter point id; still accepted. */
  meterPointId: z.string().nullish(),
  meterPointIds: z.array(nonEmpty).nullish(),
};
export const locationCreateSchema = z.strictObject(locationFields);
export type LocationCreate = z.infer<typeof locationCreateSchema>;
export const locationPutSchema = z.strictObject(locationFields);
export type LocationPut = z.infer<typeof locationPutSchema>;
export const locationPatchSchema = z.strictObject({
  locationType: locationFields.locationType,
  coordinates: locationFields.coordinates,
  meterPointIds: locationFields.meterPointIds,
});
export type LocationPatch = z.infer<typeof locationPatchSchema>;
export const locationWithUserCreateSchema = z.strictObject({ ...locationFields, userId: nonEmpty });
export type LocationWithUserCreate = z.infer<typeof locationWithUserCreateSchema>;
export const locationsBatchCreateSchema = z.strictObject({ locations: z.array(locationWithUserCreateSchema) });
export type LocationsBatchCreate = z.infer<typeof locationsBatchCreateSchema>;

export const locationSchema = z.looseObject({
  locationId: z.string(),
  locationType: openEnum(locationTypes).nullish(),
  coordinates: coordinateSchema.nullish(),
  meterPointId: z.string().nullish(),
  meterPointIds: z.array(z.string()).nullish(),
  userId: z.string().nullish(),
});
export type Location = z.infer<typeof locationSchema>;
export const locationListSchema = z.array(locationSchema);
export const locationsBatchResponseSchema = z.looseObject({ locations: z.array(locationSchema) });
export type LocationsBatchResponse = z.infer<typeof locationsBatchResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Resources

export const vehicleCreateSchema = z.strictObject({ resourceId: nonEmpty, resourceType: z.enum(resourceTypes) });
export type VehicleCreate = z.infer<typeof vehicleCreateSchema>;
export const locationResourceCreateSchema = z.strictObject({
  resourceId: nonEmpty,
  resourceType: z.enum(resourceTypes),
  meterPointId: z.string().nullish(),
});
export type LocationResourceCreate = z.infer<typeof locationResourceCreateSchema>;

export const resourceSchema = z.looseObject({
  resourceId: z.string(),
  resourceType: openEnum(resourceTypes),
  userId: z.string(),
  locationId: z.string().nullish(),
  meterPointId: z.string().nullish(),
});
export type Resource = z.infer<typeof resourceSchema>;
export const locationResourceSchema = z.looseObject({
  resourceId: z.string(),
  resourceType: openEnum(resourceTypes),
  locationId: z.string(),
  userId: z.string(),
  meterPointId: z.string().nullish(),
});
export type LocationResource = z.infer<typeof locationResourceSchema>;
export const locationResourceListSchema = z.array(locationResourceSchema);
export const userResourcesSchema = z.looseObject({ resources: z.array(resourceSchema) });
export type UserResources = z.infer<typeof userResourcesSchema>;

// ---------------------------------------------------------------------------------------------
// Program: enrollment, eligibility, compensation

export const enrollmentSchema = z.looseObject({
  userId: z.string(),
  isEnrolled: z.boolean().nullish(),
  enrollmentId: z.string().nullish(),
  enrollmentDate: dateTime.nullish(),
});
export type Enrollment = z.infer<typeof enrollmentSchema>;
export const userEligibilitySchema = z.looseObject({ userId: z.string(), isEligible: z.boolean() });
export type UserEligibility = z.infer<typeof userEligibilitySchema>;
export const eligibleUsersPageSchema = z.looseObject({ pagination: paginationSchema, users: z.array(userSchema).nullish() });
export type EligibleUsersPage = z.infer<typeof eligibleUsersPageSchema>;
export const meterEligibilitySchema = z.looseObject({ meterPointId: z.string(), isEligible: z.boolean() });
export type MeterEligibility = z.infer<typeof meterEligibilitySchema>;

export const compensationProblemSchema = z.looseObject({ problemType: openEnum(problemTypes).nullish(), message: z.string() });
export const locationCompensationSchema = z.looseObject({
  locationId: z.string().nullish(),
  meterPointIds: z.array(z.string()).nullish(),
  activeAmount: z.number().nullish(),
  blockedAmount: z.number().nullish(),
  currency: openEnum(currencies).nullish(),
  problems: z.array(compensationProblemSchema).nullish(),
});
export type LocationCompensation = z.infer<typeof locationCompensationSchema>;
export const compensationSchema = z.looseObject({
  userId: z.string().nullish(),
  /** Calendar dates `YYYY-MM-DD`. */
  period: z.looseObject({ from: z.string().nullish(), to: z.string().nullish() }),
  locationCompensations: z.array(locationCompensationSchema).nullish(),
});
export type Compensation = z.infer<typeof compensationSchema>;

// ---------------------------------------------------------------------------------------------
// Events

export const priceCurveTargetRequestSchema = z.strictObject({ resourceId: nonEmpty, locationId: nonEmpty });
export const priceCurveTargetSchema = z.looseObject({ resourceId: z.string(), locationId: z.string() });
export type PriceCurveTarget = z.infer<typeof priceCurveTargetSchema>;
export const resourceLpcTargetSchema = z.looseObject({
  meterPointId: z.string().nullish(),
  locationId: z.string(),
  resourceId: z.string(),
  resolution: z.string(),
  points: z.array(lpcDataPointSchema),
});
export type ResourceLpcTarget = z.infer<typeof resourceLpcTargetSchema>;
export const locationLpcTargetSchema = z.looseObject({
  locationId: z.string(),
  meterPointId: z.string().nullish(),
  resolution: z.string(),
  points: z.array(lpcDataPointSchema),
});
export type LocationLpcTarget = z.infer<typeof locationLpcTargetSchema>;

export const priceCurvePayloadSchema = z.looseObject({
  payloadType: z.literal('PriceCurve'),
  targets: z.array(priceCurveTargetSchema),
  priceCurveDelta: priceCurveSchema,
  priceArea: openEnum(priceAreas),
});
export type PriceCurvePayload = z.infer<typeof priceCurvePayloadSchema>;
export const userEligibilityPayloadSchema = z.looseObject({
  payloadType: z.literal('UserEligibility'),
  lastUpdated: dateTime,
  /** Absent in older versions of the service. */
  addedUsers: z.array(z.string()).nullish(),
  removedUsers: z.array(z.string()).nullish(),
});
export type UserEligibilityPayload = z.infer<typeof userEligibilityPayloadSchema>;
export const locationLpcPayloadSchema = z.looseObject({ payloadType: z.literal('LocationLPC'), targets: z.array(locationLpcTargetSchema) });
export type LocationLpcPayload = z.infer<typeof locationLpcPayloadSchema>;
export const resourceLpcPayloadSchema = z.looseObject({ payloadType: z.literal('ResourceLPC'), targets: z.array(resourceLpcTargetSchema) });
export type ResourceLpcPayload = z.infer<typeof resourceLpcPayloadSchema>;
export const lpcReservationPayloadSchema = z.looseObject({ payloadType: z.literal('LPCReservation'), targets: z.array(locationLpcTargetSchema) });
export type LpcReservationPayload = z.infer<typeof lpcReservationPayloadSchema>;

const knownEventPayloadTypes: readonly string[] = ['PriceCurve', 'UserEligibility', 'LocationLPC', 'ResourceLPC', 'LPCReservation'];
/** A payload of a type this version does not know (kept as it came). */
export const unknownEventPayloadSchema = z
  .looseObject({ payloadType: z.string() })
  .refine((p) => !knownEventPayloadTypes.includes(p.payloadType), { message: 'malformed payload of a known type' });
export type UnknownEventPayload = z.infer<typeof unknownEventPayloadSchema>;

/**
 * An event payload. A known `payloadType` must match its schema; any other type is kept.
 * Narrow with {@link isPriceCurvePayload} and friends (a plain `payloadType ===` check does not
 * narrow because of the open unknown branch).
 */
export const eventPayloadSchema = z.union([
  z.discriminatedUnion('payloadType', [
    priceCurvePayloadSchema,
    userEligibilityPayloadSchema,
    locationLpcPayloadSchema,
    resourceLpcPayloadSchema,
    lpcReservationPayloadSchema,
  ]),
  unknownEventPayloadSchema,
]);
export type EventPayload = z.infer<typeof eventPayloadSchema>;

export const isPriceCurvePayload = (p: EventPayload | null | undefined): p is PriceCurvePayload => p?.payloadType === 'PriceCurve';
export const isUserEligibilityPayload = (p: EventPayload | null | undefined): p is UserEligibilityPayload => p?.payloadType === 'UserEligibility';
export const isLocationLpcPayload = (p: EventPayload | null | undefined): p is LocationLpcPayload => p?.payloadType === 'LocationLPC';
export const isResourceLpcPayload = (p: EventPayload | null | undefined): p is ResourceLpcPayload => p?.payloadType === 'ResourceLPC';
export const isLpcReservationPayload = (p: EventPayload | null | undefined): p is LpcReservationPayload => p?.payloadType === 'LPCReservation';

export const eventSchema = z.looseObject({
  id: z.string(),
  createdAt: dateTime.nullish(),
  /** Not marked required by the document; always present in practice. */
  payload: eventPayloadSchema.nullish(),
});
export type SparkEvent = z.infer<typeof eventSchema>;
export const eventsPageSchema = z.looseObject({ pagination: paginationSchema, events: z.array(eventSchema).nullish() });
export type EventsPage = z.infer<typeof eventsPageSchema>;

/** Body of each webhook call. */
export const eventNotificationSchema = z.looseObject({
  notificationId: z.string(),
  eventId: z.string(),
  eventCreatedAtUtc: dateTime,
  notificationSentUtc: dateTime,
  notificationType: openEnum(notificationTypes),
  payload: eventPayloadSchema,
});
export type EventNotification = z.infer<typeof eventNotificationSchema>;

// ---------------------------------------------------------------------------------------------
// Reports (requests)

export const energyUsageReportPayloadSchema = z
  .strictObject({
    payloadType: z.literal('EnergyUsage'),
    resourceId: nonEmpty,
    locationId: z.string().nullish(),
    meterPointId: z.string().nullish(),
    resolution: timeSpanRequest,
    points: z.array(energyCurvePointRequestSchema).nullish(),
    /** Deprecated name of `points`; accepted. */
    curvePoints: z.array(energyCurvePointRequestSchema).nullish(),
  })
  .refine((p) => Array.isArray(p.points) || Array.isArray(p.curvePoints), { message: 'points (or curvePoints) is required', path: ['points'] });
export type EnergyUsageReportPayload = z.infer<typeof energyUsageReportPayloadSchema>;
export const locationEnergyUsageReportPayloadSchema = z.strictObject({
  payloadType: z.literal('LocationEnergyUsage'),
  locationId: nonEmpty,
  meterPointId: nonEmpty,
  resolution: timeSpanRequest,
  points: z.array(energyCurvePointRequestSchema),
});
export type LocationEnergyUsageReportPayload = z.infer<typeof locationEnergyUsageReportPayloadSchema>;
export const lpcResourceSchema = z.strictObject({ meterPointId: nonEmpty, locationId: nonEmpty, resourceId: nonEmpty });
export const lpcLocationSchema = z.strictObject({ locationId: nonEmpty, meterPointId: nonEmpty });
export const resourceLpcAckReportPayloadSchema = z.strictObject({
  payloadType: z.enum(['ResourceLPCAcknowledgement', 'ResourceLPCAcknowledged']),
  acknowledgedTargets: z.array(lpcResourceSchema).nullish(),
  declinedTargets: z.array(lpcResourceSchema).nullish(),
});
export type ResourceLpcAckReportPayload = z.infer<typeof resourceLpcAckReportPayloadSchema>;
export const locationLpcAckReportPayloadSchema = z.strictObject({
  payloadType: z.enum(['LocationLPCAcknowledgement', 'LocationLPCAcknowledged']),
  acknowledgedTargets: z.array(lpcLocationSchema).nullish(),
  declinedTargets: z.array(lpcLocationSchema).nullish(),
});
export type LocationLpcAckReportPayload = z.infer<typeof locationLpcAckReportPayloadSchema>;
export const locationEnergyUsagePlanReportPayloadSchema = z.strictObject({
  payloadType: z.literal('LocationEnergyUsagePlan'),
  locationId: nonEmpty,
  meterPointId: nonEmpty,
  resolution: timeSpanRequest,
  baseline: z.array(energyCurvePointRequestSchema),
  flexibility: z.array(energyCurvePointRequestSchema),
});
export type LocationEnergyUsagePlanReportPayload = z.infer<typeof locationEnergyUsagePlanReportPayloadSchema>;

export const reportPayloadSchema = z.discriminatedUnion('payloadType', [
  energyUsageReportPayloadSchema,
  locationEnergyUsageReportPayloadSchema,
  resourceLpcAckReportPayloadSchema,
  locationLpcAckReportPayloadSchema,
  locationEnergyUsagePlanReportPayloadSchema,
]);
export type ReportPayload = z.infer<typeof reportPayloadSchema>;
export const reportRequestSchema = z.strictObject({ eventId: nonEmpty.nullish(), payloads: z.array(reportPayloadSchema).min(1) });
export type ReportRequest = z.infer<typeof reportRequestSchema>;
export const reportResponseSchema = z.looseObject({ id: z.string(), eventId: z.string().nullish(), createdAt: dateTime.nullish() });
export type ReportResponse = z.infer<typeof reportResponseSchema>;

/** The document's payload type for either acknowledgement spelling; other types unchanged. */
export function canonicalReportPayloadType(payloadType: string): string {
  return (reportPayloadTypeAliases as Record<string, string>)[payloadType] ?? payloadType;
}
/** The usage points of an energy-usage payload: `points`, else the deprecated `curvePoints`. */
export function energyUsagePoints(p: EnergyUsageReportPayload): EnergyCurvePoint[] {
  return p.points ?? p.curvePoints ?? [];
}

// ---------------------------------------------------------------------------------------------
// Webhooks

const webhookUrl = z.url({ protocol: /^https?$/ });
export const webhookCreateSchema = z.strictObject({
  name: z.string().nullish(),
  webhookSecret: z.string().nullish(),
  webhookUrl,
  notificationTypes: z.array(z.enum(notificationTypes)).optional(),
});
export type WebhookCreate = z.infer<typeof webhookCreateSchema>;
export const webhookPutSchema = z.strictObject({
  webhookSecret: z.string().nullish(),
  webhookUrl,
  notificationTypes: z.array(z.enum(notificationTypes)).optional(),
  enabled: z.boolean().optional(),
  name: z.string().nullish(),
});
export type WebhookPut = z.infer<typeof webhookPutSchema>;
export const webhookPatchSchema = z.strictObject({
  webhookSecret: z.string().nullish(),
  webhookUrl: webhookUrl.nullish(),
  notificationTypes: z.array(z.enum(notificationTypes)).nullish(),
  enabled: z.boolean().nullish(),
  name: z.string().nullish(),
});
export type WebhookPatch = z.infer<typeof webhookPatchSchema>;

export const webhookSchema = z.looseObject({
  webhookId: z.string(),
  webhookUrl: z.string(),
  name: z.string().nullish(),
  notificationTypes: z.array(openEnum(notificationTypes)).nullish(),
  enabled: z.boolean().nullish(),
  status: openEnum(webhookStatuses).nullish(),
  modifiedDate: dateTime.nullish(),
  createdDate: dateTime.nullish(),
  lastAnalyzedTimestamp: dateTime.nullish(),
});
export type Webhook = z.infer<typeof webhookSchema>;
export const webhooksListSchema = z.looseObject({ webhooks: z.array(webhookSchema) });
export type WebhooksList = z.infer<typeof webhooksListSchema>;
export const webhookLogSchema = z.looseObject({
  webhookId: z.string(),
  tenantId: z.string(),
  webhookUrl: z.string(),
  partnerEventId: z.string().nullish(),
  notificationId: z.string().nullish(),
  notificationType: openEnum(notificationTypes).nullish(),
  notificationSent: dateTime.nullish(),
  sparkSignature: z.string().nullish(),
  requestTimeout: z.boolean().nullish(),
  responseStatusCode: int.nullish(),
  requestDurationMs: int.nullish(),
});
export type WebhookLog = z.infer<typeof webhookLogSchema>;
export const webhookLogsPageSchema = z.looseObject({
  webhookNotificationLogs: z.array(webhookLogSchema).nullish(),
  pagination: paginationSchema.nullish(),
});
export type WebhookLogsPage = z.infer<typeof webhookLogsPageSchema>;
export const webhookLogDetailSchema = z.looseObject({
  webhookNotificationLog: webhookLogSchema.nullish(),
  /** The raw body as sent. */
  notificationContent: z.string().nullish(),
});
export type WebhookLogDetail = z.infer<typeof webhookLogDetailSchema>;

// ---------------------------------------------------------------------------------------------
// Simulation

export const simulatePriceCurveRequestSchema = z.strictObject({
  targets: z.array(priceCurveTargetRequestSchema).nullish(),
  priceCurveDelta: priceCurveRequestSchema.nullish(),
  priceArea: z.enum(priceAreas).nullish(),
});
export type SimulatePriceCurveRequest = z.infer<typeof simulatePriceCurveRequestSchema>;
const locationTargetSchema = z.strictObject({ locationId: nonEmpty.optional(), meterPointId: nonEmpty.optional() });
const resourceTargetSchema = z.strictObject({ locationId: nonEmpty.optional(), resourceId: nonEmpty.optional(), meterPointId: nonEmpty.optional() });
export const simulateLocationLpcRequestSchema = z.strictObject({
  locations: z.array(z.strictObject({ location: locationTargetSchema.optional(), points: z.array(lpcDataPointRequestSchema).nullish() })).nullish(),
});
export type SimulateLocationLpcRequest = z.infer<typeof simulateLocationLpcRequestSchema>;
export const simulateResourceLpcRequestSchema = z.strictObject({
  resources: z.array(z.strictObject({ resource: resourceTargetSchema.optional(), points: z.array(lpcDataPointRequestSchema).nullish() })).nullish(),
});
export type SimulateResourceLpcRequest = z.infer<typeof simulateResourceLpcRequestSchema>;
export const simulateEventResponseSchema = z.looseObject({ simulatedEvent: eventSchema });
export type SimulateEventResponse = z.infer<typeof simulateEventResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Forecast price service (`/smart/v1`)

export const priceUnitsSchema = z.looseObject({
  currency: z.string(),
  vat: z.looseObject({ rate: z.number().nullish(), hasVAT: z.boolean().nullish() }).nullish(),
  energyUnit: z.string(),
});
export type PriceUnits = z.infer<typeof priceUnitsSchema>;
export const forecastSegmentSchema = z.looseObject({ from: dateTime, to: dateTime, averagePrice: z.number() });
export type ForecastSegment = z.infer<typeof forecastSegmentSchema>;
export const adviceTypes = ['Good', 'Normal', 'Avoid'] as const;
export const adviceSegmentSchema = forecastSegmentSchema.extend({ loss: z.number().nullish(), type: openEnum(adviceTypes) });
export type AdviceSegment = z.infer<typeof adviceSegmentSchema>;
const segmentOptionsSchema = z.looseObject({ segmentSize: int });
export const forecastResponseSchema = z.looseObject({
  priceArea: z.string(),
  priceUnits: priceUnitsSchema,
  segmentOptions: segmentOptionsSchema.nullish(),
  forecastSegments: z.array(forecastSegmentSchema),
});
export type ForecastResponse = z.infer<typeof forecastResponseSchema>;
export const forecastAdviceRequestSchema = z.strictObject({
  priceUnitsParameters: z.strictObject({
    currency: z.enum(currencies),
    energyUnit: z.enum([...energyUnits, 'KWh']),
    vatRate: z.number().min(0).nullish(),
  }),
  segmentOptionsParameters: z.strictObject({ segmentSize: int.min(1).max(24) }),
});
export type ForecastAdviceRequest = z.infer<typeof forecastAdviceRequestSchema>;
export const forecastAdviceResponseSchema = z.looseObject({
  priceArea: z.string(),
  priceUnits: priceUnitsSchema,
  segmentOptions: segmentOptionsSchema.nullish(),
  forecastAdvice: z.array(adviceSegmentSchema),
});
export type ForecastAdviceResponse = z.infer<typeof forecastAdviceResponseSchema>;
/** `GET /prices/actual/{priceArea}`: prices keyed by ISO timestamp. */
export const actualPricesResponseSchema = z.looseObject({
  priceArea: z.string(),
  priceUnits: priceUnitsSchema,
  prices: z.record(z.string(), z.number()),
});
export type ActualPricesResponse = z.infer<typeof actualPricesResponseSchema>;
