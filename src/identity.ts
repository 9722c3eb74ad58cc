/** The ids this home has at the API: from the config, completed by `wattshift register`. */
import { z } from 'zod';
import type { Config } from './config/schema.js';
import type { Store } from './store/types.js';
import type { Identity } from './spark/event-normalise.js';

export const registrationSchema = z.strictObject({
  userId: z.string(),
  locationId: z.string(),
  /** Device id (or vehicle id) → resource id. */
  resources: z.record(z.string(), z.string()),
  webhookId: z.string().nullable(),
  registeredAtMs: z.number(),
});
export type Registration = z.infer<typeof registrationSchema>;

export const registrationKey = 'registration';

export function loadRegistration(store: Pick<Store, 'getState'>): Registration | undefined {
  return store.getState(registrationKey, registrationSchema);
}

/** Resource id of a device or vehicle: configured, else registered. */
export function resourceIdOf(config: Config, deviceId: string, reg: Registration | undefined): string | null {
  const v = config.vehicles.find((x) => x.id === deviceId);
  if (v) return v.resourceId ?? reg?.resources[v.id] ?? null;
  const d = config.devices.find((x) => x.id === deviceId);
  if (!d || d.kind === 'meter') return null;
  return d.resourceId ?? reg?.resources[deviceId] ?? null;
}

export function identityOf(config: Config, reg: Registration | undefined): Identity {
  const resources = new Map<string, string>();
  for (const { id: own } of [...config.devices, ...config.vehicles]) {
    const id = resourceIdOf(config, own, reg);
    if (id) resources.set(id, own);
  }
  return {
    userId: config.spark.userId ?? reg?.userId ?? null,
    // In fleet mode the hub provisioned the location and named it in the gateway's config.
    locationId: (config.upstream.mode === 'fleet' ? config.upstream.locationId : config.spark.locationId) ?? reg?.locationId ?? null,
    resources,
    meterPointIds: config.spark.meterPointIds,
  };
}
