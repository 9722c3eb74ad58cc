/**
 * The fleet wire: what a partner's hub (`wattshift hub`) and its gateways (`upstream: fleet`) say
 * to each other over the partner's MQTT broker. The hub holds the API credentials; a gateway holds
 * only its own broker credentials, and the broker's ACL keeps it to its own topics:
 *
 *   hub → gateway  `<prefix>/area/<priceArea>/advice`   retained, QoS 1: the area's prices (the
 *                                                       forecast advice, and the hourly forecast
 *                                                       and actual spot prices when the hub has them)
 *   hub → gateway  `<prefix>/loc/<locationId>/events`  QoS 1, not retained: each API event
 *                                                       targeting the location (persistent
 *                                                       sessions keep them while a home is away)
 *   gateway → hub  `<prefix>/gw/<gatewayId>/reports`   QoS 1: a report to upload, with its key
 *   hub → gateway  `<prefix>/gw/<gatewayId>/receipts`  QoS 1: what became of a report
 *   gateway → hub  `<prefix>/gw/<gatewayId>/sync`      QoS 1: "send me the events still open for my
 *                                                       locations" (after a new session or a restore)
 *
 * Hub instances share the report and sync topics with MQTT 5 shared subscriptions
 * (`$share/<group>/<prefix>/gw/+/reports`). Every message carries `v: 1`; a receiver parses it
 * with these schemas and drops (and logs) what does not parse. No packet is larger than
 * {@link fleetMaxPacketBytes}: the broker refuses one, and neither side's client reads one.
 */
import { z } from 'zod';
import { actualPricesResponseSchema, eventSchema, forecastAdviceResponseSchema, forecastResponseSchema, reportRequestSchema } from '../spark/wire.js';

export const fleetWireVersion = 1;
export const defaultFleetPrefix = 'wattshift/fleet/v1';
/**
 * The largest MQTT packet on the fleet broker, either way. A home's event (cut to its own
 * targets), an area's advice and a month of a home's usage are each far below it.
 */
export const fleetMaxPacketBytes = 1024 * 1024;

/** One MQTT topic level: no wildcards, separators or control characters. */
const topicLevel = z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, 'letters, digits, ".", "_" and "-" only (1–128)');
const version = z.literal(fleetWireVersion);

export const fleetTopics = (prefix = defaultFleetPrefix) => ({
  advice: (priceArea: string) => `${prefix}/area/${topicLevel.parse(priceArea)}/advice`,
  events: (locationId: string) => `${prefix}/loc/${topicLevel.parse(locationId)}/events`,
  reports: (gatewayId: string) => `${prefix}/gw/${topicLevel.parse(gatewayId)}/reports`,
  receipts: (gatewayId: string) => `${prefix}/gw/${topicLevel.parse(gatewayId)}/receipts`,
  sync: (gatewayId: string) => `${prefix}/gw/${topicLevel.parse(gatewayId)}/sync`,
  /** What hub instances subscribe to, shared among them under `group`. */
  sharedReports: (group: string) => `$share/${topicLevel.parse(group)}/${prefix}/gw/+/reports`,
  sharedSync: (group: string) => `$share/${topicLevel.parse(group)}/${prefix}/gw/+/sync`,
});

/**
 * The prices of one price area as the API answered them, and when the hub fetched them: the
 * forecast advice (6-hour segments), and, when the hub could fetch them, the hourly forecast
 * (`segmentSize` 1) and the actual spot prices (time zone UTC), all in kWh and the hub's
 * `advice.currency`. A gateway plans on hourly prices only from `forecast` and `actual`; one whose
 * `site.currency` differs from their `priceUnits.currency` does not use them.
 */
export const fleetAdviceSchema = z.strictObject({
  v: version,
  fetchedAtMs: z.number().int().nonnegative(),
  advice: forecastAdviceResponseSchema,
  forecast: forecastResponseSchema.optional(),
  actual: actualPricesResponseSchema.optional(),
});
export type FleetAdvice = z.infer<typeof fleetAdviceSchema>;

/** An API event as the hub received it (webhook or poll), for one of the gateway's locations. */
export const fleetEventSchema = z.strictObject({
  v: version,
  receivedAtMs: z.number().int().nonnegative(),
  event: eventSchema,
});
export type FleetEvent = z.infer<typeof fleetEventSchema>;

/**
 * A report a gateway asks the hub to upload. `idempotencyKey` is the gateway outbox's key: the hub
 * uploads each key at most once and answers every copy with the same receipt.
 */
export const fleetReportSchema = z.strictObject({
  v: version,
  idempotencyKey: z.string().min(1).max(200),
  createdAtMs: z.number().int().nonnegative(),
  report: reportRequestSchema,
});
export type FleetReport = z.infer<typeof fleetReportSchema>;

/**
 * What became of a report. `accepted`: the API took it (`reportId` is its id). `rejected`: it will
 * never be sent (the gateway does not own a location or resource it names, or the API refused it
 * for good); `reason` says why. A transient failure is not answered: the hub retries it.
 */
export const fleetReceiptSchema = z.strictObject({
  v: version,
  idempotencyKey: z.string().min(1).max(200),
  status: z.enum(['accepted', 'rejected']),
  reportId: z.string().optional(),
  reason: z.string().max(500).optional(),
  atMs: z.number().int().nonnegative(),
});
export type FleetReceipt = z.infer<typeof fleetReceiptSchema>;

/** A gateway's request for the events still open for its locations. */
export const fleetSyncSchema = z.strictObject({
  v: version,
  requestedAtMs: z.number().int().nonnegative(),
});
export type FleetSync = z.infer<typeof fleetSyncSchema>;
