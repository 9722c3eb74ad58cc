/**
 * `wattshift register`: makes the API know this home — user, location, resources, the user's
 * vehicles, enrollment and
 * (optionally) the webhook — and stores the ids. Every step looks before it creates, so running it
 * again changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Config } from './config/schema.js';
import type { Logger } from './log.js';
import type { SparkClient } from './spark/client.js';
import type { Store } from './store/types.js';
import type { ResourceType } from './spark/wire.js';
import { WattshiftError, isWattshiftError } from './errors.js';
import { loadRegistration, registrationKey, type Registration } from './identity.js';

/** What `register` last learnt about the program (the daemon re-checks it on eligibility events). */
export const eligibilityStateKey = 'register:eligibility';
export const eligibilityStateSchema = z.strictObject({
  eligible: z.boolean().nullable(),
  enrolled: z.boolean().nullable(),
  checkedMs: z.number(),
  error: z.string().nullable(),
});
export type EligibilityState = z.infer<typeof eligibilityStateSchema>;

/** Whether a lookup finds its object (false on API_NOT_FOUND; other failures throw). */
export async function exists(lookup: () => Promise<unknown>): Promise<boolean> {
  try {
    await lookup();
    return true;
  } catch (err) {
    if (isWattshiftError(err, 'API_NOT_FOUND')) return false;
    throw err;
  }
}

/**
 * The API answers 409 with an empty body; for a location it documents the causes (an id or a meter
 * point id this partner already has elsewhere), so the error names them and the keys to change.
 */
function locationConflict(err: unknown, locationId: string, meterPointIds: readonly string[]): unknown {
  if (!isWattshiftError(err, 'API_CONFLICT')) return err;
  const meters = meterPointIds.length > 0 ? `, or one of its meter point ids (${meterPointIds.join(', ')}) is registered at another location` : '';
  return new WattshiftError(
    'API_CONFLICT',
    `${err.message}: location ${locationId} already exists under another user${meters}; choose another spark.locationId, or check spark.meterPointIds`,
    { cause: err, ...(err.details ? { details: err.details } : {}) },
  );
}

/** Each device kind as the API's ResourceType names it: a heat pump is `HVAC`, whatever it heats, and so is a heated zone. */
export const resourceTypes: Record<'hotWaterTank' | 'evCharger' | 'heatPump' | 'zone' | 'solar', ResourceType> = {
  hotWaterTank: 'HotWaterTank',
  evCharger: 'Charger',
  heatPump: 'HVAC',
  zone: 'HVAC',
  solar: 'SolarInverter',
};

/** What {@link ensureLocationResource} did: nothing, a new resource, or a new type (with the old one). */
export type ResourceChange = null | { created: true } | { retypedFrom: string };

/**
 * Makes a location-bound resource exist with the wanted type. The API has no call that changes a
 * resource's type (GET and DELETE on /resources/{id}, POST to create, nothing to patch), so a
 * resource registered under another type is deleted and created again with the same id.
 */
export async function ensureLocationResource(
  spark: Pick<SparkClient, 'getResource' | 'deleteResource' | 'createLocationResource'>,
  userId: string,
  locationId: string,
  resource: { resourceId: string; resourceType: ResourceType; meterPointId?: string },
): Promise<ResourceChange> {
  let current: Awaited<ReturnType<SparkClient['getResource']>> | null = null;
  try {
    current = await spark.getResource(resource.resourceId);
  } catch (err) {
    if (!isWattshiftError(err, 'API_NOT_FOUND')) throw err;
  }
  if (current !== null && current.resourceType === resource.resourceType) return null;
  if (current !== null) await spark.deleteResource(resource.resourceId);
  await spark.createLocationResource(userId, locationId, resource);
  return current === null ? { created: true } : { retypedFrom: current.resourceType };
}

/** The line `register` and `hub provision` print for a resource change. */
export function resourceChangeText(change: Exclude<ResourceChange, null>, resourceId: string, resourceType: ResourceType, what: string): string {
  return 'created' in change
    ? `created resource ${resourceId} (${what})`
    : `re-created resource ${resourceId} as ${resourceType} (was ${change.retypedFrom})`;
}

export interface RegisterResult {
  registration: Registration;
  /** What this run created or changed (empty on a repeat run). */
  changes: string[];
}

export async function register(
  config: Config,
  deps: { spark: SparkClient; store: Pick<Store, 'getState' | 'setState'>; logger: Logger; nowMs: number },
): Promise<RegisterResult> {
  const { spark } = deps;
  const log = deps.logger.child({ component: 'register' });
  const previous = loadRegistration(deps.store);
  const changes: string[] = [];
  const userId = config.spark.userId ?? previous?.userId ?? `wattshift-${randomUUID()}`;
  const locationId = config.spark.locationId ?? previous?.locationId ?? `${userId}-home`;

  if (!(await exists(() => spark.getUser(userId)))) {
    await spark.createUser(userId);
    changes.push(`created user ${userId}`);
  }

  const wanted = {
    locationType: 'Residential' as const,
    ...(config.spark.coordinates ? { coordinates: config.spark.coordinates } : {}),
    ...(config.spark.meterPointIds.length > 0 ? { meterPointIds: config.spark.meterPointIds } : {}),
  };
  let location: Awaited<ReturnType<SparkClient['getLocation']>> | null = null;
  try {
    location = await spark.getLocation(userId, locationId);
  } catch (err) {
    if (!isWattshiftError(err, 'API_NOT_FOUND')) throw err;
  }
  if (!location) {
    await spark.createLocation(userId, { locationId, ...wanted }).catch((err: unknown) => {
      throw locationConflict(err, locationId, config.spark.meterPointIds);
    });
    changes.push(`created location ${locationId}`);
  } else {
    const sameCoordinates =
      !wanted.coordinates ||
      (location.coordinates?.latitude === wanted.coordinates.latitude && location.coordinates?.longitude === wanted.coordinates.longitude);
    const sameMeters = JSON.stringify([...(location.meterPointIds ?? [])].sort()) === JSON.stringify([...config.spark.meterPointIds].sort());
    if (!sameCoordinates || !sameMeters) {
      await spark.patchLocation(userId, locationId, { ...wanted, meterPointIds: config.spark.meterPointIds }).catch((err: unknown) => {
        throw locationConflict(err, locationId, config.spark.meterPointIds);
      });
      changes.push(`updated location ${locationId}`);
    }
  }

  const resources: Record<string, string> = {};
  for (const d of config.devices) {
    if (d.kind === 'meter') continue;
    const resourceId = d.resourceId ?? previous?.resources[d.id] ?? `${locationId}-${d.id}`;
    resources[d.id] = resourceId;
    const resourceType = resourceTypes[d.kind];
    const change = await ensureLocationResource(spark, userId, locationId, { resourceId, resourceType });
    if (change !== null) changes.push(resourceChangeText(change, resourceId, resourceType, d.kind));
  }

  // Cars belong to the user, not to the location (POST /users/{userId}/vehicles).
  for (const v of config.vehicles) {
    const resourceId = v.resourceId ?? previous?.resources[v.id] ?? `${userId}-${v.id}`;
    resources[v.id] = resourceId;
    if (!(await exists(() => spark.getResource(resourceId)))) {
      await spark.createVehicle(userId, { resourceId, resourceType: 'Vehicle' });
      changes.push(`created vehicle ${resourceId} (${v.id})`);
    }
  }

  const enrollment = await spark.getEnrollment(userId).catch((err: unknown) => {
    if (isWattshiftError(err, 'API_NOT_FOUND')) return null;
    throw err;
  });
  if (!enrollment?.isEnrolled) {
    await spark.enroll(userId);
    changes.push(`enrolled user ${userId}`);
  }

  let webhookId = previous?.webhookId ?? null;
  const wh = config.events.webhook;
  if (wh.enabled && wh.publicUrl) {
    const hooks = await spark.listWebhooks();
    const found = hooks.find((h) => h.webhookUrl === wh.publicUrl);
    if (found) {
      webhookId = found.webhookId;
    } else {
      const created = await spark.createWebhook({
        name: 'wattshift',
        webhookUrl: wh.publicUrl,
        ...(wh.secret ? { webhookSecret: wh.secret } : {}),
        notificationTypes: ['PriceCurveCreated', 'UserEligibilityUpdated', 'LocationLPCRequested', 'ResourceLPCRequested'],
      });
      webhookId = created.webhookId;
      changes.push(`registered webhook ${wh.publicUrl}`);
    }
  }

  const registration: Registration = { userId, locationId, resources, webhookId, registeredAtMs: previous?.registeredAtMs ?? deps.nowMs };
  if (JSON.stringify(previous) !== JSON.stringify(registration)) deps.store.setState(registrationKey, registration);
  for (const c of changes) log.info(c);
  return { registration, changes };
}
