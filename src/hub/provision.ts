/**
 * Provisioning homes from a CSV, one row a home: the user, location, resources and enrollment
 * in the API (each made only when missing, so a rerun changes nothing), then the home in the
 * hub registry and its gateway's broker credentials. A new gateway gets a random password, shown
 * once; only its hash is stored.
 *
 *   gatewayId,userId,locationId,priceArea,meterPointId,resources
 *   gw-0001,user-0001,loc-0001,NO1,707057500000000001,res-0001-tank:HotWaterTank;res-0001-ev:Charger;res-0001-hp:HVAC
 *
 * A resource already registered under another type is deleted and created again with the CSV's.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { priceAreas } from '../config/schema.js';
import { isWattshiftError, WattshiftError } from '../errors.js';
import { ensureLocationResource, exists, resourceChangeText } from '../registration.js';
import type { SparkClient } from '../spark/client.js';
import { resourceTypes } from '../spark/wire.js';
import { mosquittoPasswordHash } from './broker-auth.js';
import type { RegistryStore } from './registry-store.js';

const id = z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, 'letters, digits, ".", "_" and "-" only (1–128)');
const columns = ['gatewayId', 'userId', 'locationId', 'priceArea', 'meterPointId', 'resources'] as const;

const homeSchema = z.strictObject({
  gatewayId: id,
  userId: id,
  locationId: id,
  priceArea: z.enum(priceAreas),
  /** The API needs a meter point id or coordinates for a location; the CSV takes the meter point. */
  meterPointId: z.string().regex(/^\d{18}$/, 'an 18-digit meter point id'),
  resources: z.string().transform((text, ctx) =>
    text
      .split(';')
      .filter((r) => r !== '')
      .map((entry) => {
        const [resourceId = '', resourceType = ''] = entry.split(':');
        const parsed = z.object({ resourceId: id, resourceType: z.enum(resourceTypes) }).safeParse({ resourceId, resourceType });
        if (!parsed.success) ctx.addIssue({ code: 'custom', message: `resource "${entry}": expected id:${resourceTypes.join('|')}` });
        return { resourceId, resourceType: resourceType as (typeof resourceTypes)[number] };
      }),
  ),
});
export type ProvisionedHome = z.infer<typeof homeSchema>;

/** Parses the CSV (a header line with exactly the columns above, no quoting); every bad row is reported. */
export function parseHomesCsv(text: string): ProvisionedHome[] {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const problems: { path: string; message: string }[] = [];
  if (lines[0] !== columns.join(',')) problems.push({ path: 'line 1', message: `expected the header ${columns.join(',')}` });
  const homes: ProvisionedHome[] = [];
  lines.slice(1).forEach((line, i) => {
    const cells = line.split(',');
    const parsed = cells.length === columns.length ? homeSchema.safeParse(Object.fromEntries(columns.map((c, j) => [c, cells[j]]))) : undefined;
    if (parsed?.success) homes.push(parsed.data);
    else
      problems.push({
        path: `line ${i + 2}`,
        message: parsed ? parsed.error.issues.map((e) => `${e.path.join('.')}: ${e.message}`).join('; ') : `expected ${columns.length} cells`,
      });
  });
  if (problems.length > 0)
    throw new WattshiftError('CONFIG_INVALID', `invalid homes CSV (${problems.length} problem${problems.length === 1 ? '' : 's'})`, {
      details: { problems },
    });
  return homes;
}

export interface ProvisionResult {
  /** What was created in the API and the registry. */
  changes: string[];
  /** Broker credentials of gateways new to the registry: shown once, stored only as a hash. */
  newCredentials: { gatewayId: string; username: string; password: string }[];
}

export async function provisionHomes(
  homes: readonly ProvisionedHome[],
  deps: { spark: SparkClient; registry: RegistryStore },
): Promise<ProvisionResult> {
  const { spark, registry } = deps;
  const changes: string[] = [];
  const newCredentials: ProvisionResult['newCredentials'] = [];
  const known = new Set((await registry.gateways()).map((g) => g.gatewayId));
  for (const h of homes) {
    if (!(await exists(() => spark.getUser(h.userId)))) {
      await spark.createUser(h.userId);
      changes.push(`created user ${h.userId}`);
    }
    if (!(await exists(() => spark.getLocation(h.userId, h.locationId)))) {
      await spark.createLocation(h.userId, { locationId: h.locationId, locationType: 'Residential', meterPointIds: [h.meterPointId] });
      changes.push(`created location ${h.locationId}`);
    }
    for (const r of h.resources) {
      const change = await ensureLocationResource(spark, h.userId, h.locationId, r);
      if (change !== null) changes.push(resourceChangeText(change, r.resourceId, r.resourceType, r.resourceType));
    }
    const enrollment = await spark.getEnrollment(h.userId).catch((err: unknown) => {
      if (isWattshiftError(err, 'API_NOT_FOUND')) return null;
      throw err;
    });
    if (!enrollment?.isEnrolled) {
      await spark.enroll(h.userId);
      changes.push(`enrolled user ${h.userId}`);
    }
    if (!known.has(h.gatewayId)) {
      const password = randomBytes(18).toString('base64url');
      await registry.upsertGateway({
        gatewayId: h.gatewayId,
        brokerUsername: h.gatewayId,
        brokerPasswordHash: mosquittoPasswordHash(password),
        priceArea: h.priceArea,
      });
      newCredentials.push({ gatewayId: h.gatewayId, username: h.gatewayId, password });
      known.add(h.gatewayId);
      changes.push(`created gateway ${h.gatewayId}`);
    }
    await registry.upsertLocation(
      { locationId: h.locationId, userId: h.userId, priceArea: h.priceArea, meterPointId: h.meterPointId, gatewayId: h.gatewayId },
      h.resources.map((r) => r.resourceId),
    );
  }
  return { changes, newCredentials };
}
