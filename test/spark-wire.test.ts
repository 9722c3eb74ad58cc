/**
 * The zod wire schemas against the OpenAPI document: every example in the document parses with
 * the matching schema, every object component has a schema, and instances generated from the
 * document's own component schemas (all fields / only required fields) are accepted.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import * as w from '../src/spark/wire.js';

const specPath = fileURLToPath(new URL('../spec/ec-sandbox-swagger.json', import.meta.url));
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
const doc: Json = JSON.parse(readFileSync(specPath, 'utf8'));
const components: Record<string, Json> = doc.components.schemas;

/** Component name → schema used for request bodies. */
const requestSchemas: Record<string, z.ZodType> = {
  Coordinate: w.coordinateRequestSchema,
  EnergyCurvePoint: w.energyCurvePointRequestSchema,
  LPCDataPoint: w.lpcDataPointRequestSchema,
  PriceCurvePoint: w.priceCurvePointRequestSchema,
  PriceCurve: w.priceCurveRequestSchema,
  PriceCurveTarget: w.priceCurveTargetRequestSchema,
  PostUserRequest: w.userCreateSchema,
  PostUsersBatchRequest: w.usersBatchCreateSchema,
  PostLocationRequest: w.locationCreateSchema,
  PutLocationRequest: w.locationPutSchema,
  PatchLocationRequest: w.locationPatchSchema,
  PostLocationWithUserRequest: w.locationWithUserCreateSchema,
  PostLocationsBatchRequest: w.locationsBatchCreateSchema,
  PostVehicleResourceRequest: w.vehicleCreateSchema,
  PostLocationBoundResourceRequest: w.locationResourceCreateSchema,
  PostReportRequest: w.reportRequestSchema,
  SparkReportPayload: w.reportPayloadSchema,
  EnergyUsageReportPayload: w.energyUsageReportPayloadSchema,
  LocationEnergyUsageReportPayload: w.locationEnergyUsageReportPayloadSchema,
  ResourceLPCAcknowledgmentReportPayload: w.resourceLpcAckReportPayloadSchema,
  LocationLPCAcknowledgmentReportPayload: w.locationLpcAckReportPayloadSchema,
  LocationEnergyUsagePlanReportPayload: w.locationEnergyUsagePlanReportPayloadSchema,
  LPCResource: w.lpcResourceSchema,
  LPCLocation: w.lpcLocationSchema,
  PostWebhookRequest: w.webhookCreateSchema,
  PutWebhookRequest: w.webhookPutSchema,
  PatchWebhookRequest: w.webhookPatchSchema,
  SimulatePriceCurveEventRequest: w.simulatePriceCurveRequestSchema,
  SimulateLocationLPCEventRequest: w.simulateLocationLpcRequestSchema,
  SimulateResourceLPCEventRequest: w.simulateResourceLpcRequestSchema,
};

/** Component name → schema used for responses and webhook bodies. */
const responseSchemas: Record<string, z.ZodType> = {
  ApiPagination: w.paginationSchema,
  HttpValidationProblemDetails: w.problemDetailsSchema,
  Coordinate: w.coordinateSchema,
  EnergyCurvePoint: w.energyCurvePointSchema,
  LPCDataPoint: w.lpcDataPointSchema,
  PriceCurvePoint: w.priceCurvePointSchema,
  PriceCurve: w.priceCurveSchema,
  PriceCurveTarget: w.priceCurveTargetSchema,
  GetUserResponse: w.userSchema,
  GetUsersResponse: w.usersPageSchema,
  PostUsersBatchResponse: w.usersBatchResponseSchema,
  GetLocationResponse: w.locationSchema,
  PostLocationsBatchResponse: w.locationsBatchResponseSchema,
  GetResourceResponse: w.resourceSchema,
  GetLocationBoundResourceResponse: w.locationResourceSchema,
  GetUserResourcesResponse: w.userResourcesSchema,
  GetUserEnrollmentResponse: w.enrollmentSchema,
  GetUserEligibilityResponse: w.userEligibilitySchema,
  GetEligibleUsersResponse: w.eligibleUsersPageSchema,
  GetMpidEligibilityResponse: w.meterEligibilitySchema,
  GetUserCompensationForCurrentMonthResponse: w.compensationSchema,
  LocationCompensation: w.locationCompensationSchema,
  Problem: w.compensationProblemSchema,
  SparkEventPayload: w.eventPayloadSchema,
  PriceCurvePayload: w.priceCurvePayloadSchema,
  UserEligibilityPayload: w.userEligibilityPayloadSchema,
  LocationLPCPayload: w.locationLpcPayloadSchema,
  ResourceLPCPayload: w.resourceLpcPayloadSchema,
  LPCReservationPayload: w.lpcReservationPayloadSchema,
  LocationLPCTarget: w.locationLpcTargetSchema,
  ResourceLPCTarget: w.resourceLpcTargetSchema,
  GetEventResponse: w.eventSchema,
  GetEventsResponse: w.eventsPageSchema,
  EventNotification: w.eventNotificationSchema,
  GetReportResponse: w.reportResponseSchema,
  GetWebhookResponse: w.webhookSchema,
  GetWebhooksResponse: w.webhooksListSchema,
  WebhookNotificationLog: w.webhookLogSchema,
  GetWebhookNotificationLogsResponse: w.webhookLogsPageSchema,
  GetWebhookNotificationLogByIdResponse: w.webhookLogDetailSchema,
  SimulateEventResponse: w.simulateEventResponseSchema,
};

/** Object components covered only as parts of a bigger schema (checked through their parent). */
const coveredByParent = new Set(['Period', 'LPCLocationTarget', 'LPCResourceTarget', 'LocationTarget', 'ResourceTarget']);

const refName = (ref: string): string => ref.replace('#/components/schemas/', '');

/** The zod schema for an OpenAPI schema object (a $ref or an array of $ref). */
function zodFor(schema: Json, map: Record<string, z.ZodType>): { name: string; parse: (v: unknown) => z.ZodSafeParseResult<unknown> } {
  if (schema.$ref) {
    const name = refName(schema.$ref);
    const s = map[name];
    if (!s) throw new Error(`no zod schema for ${name}`);
    return { name, parse: (v) => s.safeParse(v) };
  }
  if (schema.type === 'array' && schema.items?.$ref) {
    const inner = zodFor(schema.items, map);
    return {
      name: `${inner.name}[]`,
      parse: (v) => {
        if (!Array.isArray(v)) return { success: false, error: new Error('not an array') } as never;
        for (const item of v) {
          const r = inner.parse(item);
          if (!r.success) return r;
        }
        return { success: true, data: v } as never;
      },
    };
  }
  throw new Error(`unsupported schema ${JSON.stringify(schema)}`);
}

interface Example {
  where: string;
  schema: Json;
  value: unknown;
  kind: 'request' | 'response';
}

function collectExamples(): Example[] {
  const out: Example[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const [method, op] of Object.entries<Json>(item)) {
      const add = (content: Json, where: string, kind: Example['kind']): void => {
        for (const [type, media] of Object.entries<Json>(content ?? {})) {
          if (media.example !== undefined) out.push({ where: `${where} ${type}`, schema: media.schema, value: media.example, kind });
          for (const [name, ex] of Object.entries<Json>(media.examples ?? {}))
            out.push({ where: `${where} ${type} ${name}`, schema: media.schema, value: ex.value, kind });
        }
      };
      add(op.requestBody?.content, `${method.toUpperCase()} ${path} request`, 'request');
      for (const [status, res] of Object.entries<Json>(op.responses ?? {})) add(res.content, `${method.toUpperCase()} ${path} ${status}`, 'response');
    }
  }
  return out;
}

describe('OpenAPI examples', () => {
  const examples = collectExamples();

  it('finds the examples of the document', () => {
    expect(examples.length).toBeGreaterThanOrEqual(25);
  });

  it.each(examples.map((e) => [e.where, e] as const))('%s parses', (_where, e) => {
    const { parse } = zodFor(e.schema, e.kind === 'request' ? requestSchemas : responseSchemas);
    const r = parse(e.value);
    expect(r.success, JSON.stringify(r.error)).toBe(true);
  });

  it('every property-level example parses with the matching field schema', () => {
    let checked = 0;
    for (const [name, comp] of Object.entries<Json>(components)) {
      for (const [prop, def] of Object.entries<Json>(comp.properties ?? {})) {
        if (def.example === undefined) continue;
        for (const map of [requestSchemas, responseSchemas]) {
          const s = map[name] as (z.ZodType & { shape?: Record<string, z.ZodType> }) | undefined;
          const field = s?.shape?.[prop];
          if (!field) continue;
          expect(field.safeParse(def.example).success, `${name}.${prop}`).toBe(true);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(6);
  });

  it('the example bodies reconstructed from the provider guides and OpenAPI document parse', () => {
    const fixture = JSON.parse(readFileSync(fileURLToPath(new URL('./fixtures/spark/research-examples.json', import.meta.url)), 'utf8')) as {
      examples: { schema: keyof typeof w; body: unknown }[];
    };
    expect(fixture.examples.length).toBeGreaterThanOrEqual(10);
    for (const { schema, body } of fixture.examples) {
      const r = (w[schema] as z.ZodType).safeParse(body);
      expect(r.success, `${schema}: ${JSON.stringify(r.error?.issues)}`).toBe(true);
    }
  });

  it('the signed webhook test bodies parse as EventNotification', () => {
    for (const f of ['price-curve-event.json', 'user-eligibility-event.json']) {
      const body = JSON.parse(readFileSync(fileURLToPath(new URL(`../spec/webhook-test-data/${f}`, import.meta.url)), 'utf8'));
      expect(w.eventNotificationSchema.safeParse(body).success, f).toBe(true);
    }
  });
});

describe('component coverage', () => {
  it('every object component of the document has a zod schema', () => {
    const objects = Object.entries<Json>(components)
      .filter(([, c]) => c.type === 'object')
      .map(([n]) => n);
    const missing = objects.filter((n) => !requestSchemas[n] && !responseSchemas[n] && !coveredByParent.has(n));
    expect(missing).toEqual([]);
  });

  it('enum value lists match the document', () => {
    expect([...w.priceAreas]).toEqual(components.PriceArea.enum);
    expect([...w.currencies]).toEqual(components.Currency.enum);
    expect([...w.energyUnits]).toEqual(components.EnergyUnit.enum);
    expect([...w.resourceTypes]).toEqual(components.ResourceType.enum);
    expect([...w.locationTypes]).toEqual(components.LocationType.enum);
    expect([...w.notificationTypes]).toEqual(components.NotificationType.enum);
    expect([...w.eventPayloadTypes]).toEqual(components.SparkEventPayloadType.enum);
    expect([...w.reportPayloadTypes]).toEqual(components.SparkReportPayloadType.enum);
    expect([...w.webhookStatuses]).toEqual(components.WebhookStatus.enum);
    expect([...w.problemTypes]).toEqual(components.ProblemType.enum);
  });
});

// ---------------------------------------------------------------------------------------------
// Instances generated from the document's component schemas

/** payloadType value of a component that a discriminator maps to. */
const discriminatorValue = new Map<string, string>();
for (const c of Object.values<Json>(components)) {
  for (const [value, ref] of Object.entries<string>(c.discriminator?.mapping ?? {})) discriminatorValue.set(refName(ref), value);
}

function scalar(s: Json): unknown {
  if (s.enum) return s.enum.find((v: string) => v !== 'Unknown') ?? s.enum[0];
  switch (s.type) {
    case 'integer':
      return 2;
    case 'number':
      return 1.5;
    case 'boolean':
      return true;
    case 'string':
      switch (s.format) {
        case 'date-time':
          return '2026-03-03T12:00:00+00:00';
        case 'date':
          return '2026-03-01';
        case 'time-span':
          return '01:00:00';
        case 'uuid':
          return '3f2c8a52-5b7e-4c1e-9d7a-1b2c3d4e5f60';
        case 'uri':
          return 'https://example.com/hook';
        default:
          return 'x-1';
      }
    default:
      return {};
  }
}

/** An instance of `schema`: every property (`full`) or only the required ones. */
function generate(schema: Json, full: boolean, name?: string, depth = 0, nulls = false): unknown {
  if (schema.$ref) {
    const target = components[refName(schema.$ref)];
    // An abstract base with a discriminator: generate its first concrete variant.
    const concrete = Object.values<string>(target.discriminator?.mapping ?? {})[0];
    const name = refName(concrete ?? schema.$ref);
    return generate(components[name], full, name, depth + 1, nulls);
  }
  if (schema.oneOf) return generate(schema.oneOf[0], full, undefined, depth + 1, nulls);
  if (schema.type === 'array') return depth > 8 ? [] : [generate(schema.items, full, undefined, depth + 1, nulls)];
  if (schema.type !== 'object' && !schema.properties) return scalar(schema);
  const out: Record<string, unknown> = {};
  const required = new Set<string>(schema.required ?? []);
  for (const [prop, def] of Object.entries<Json>(schema.properties ?? {})) {
    if (!full && !required.has(prop)) continue;
    if (nulls && def.nullable && !required.has(prop)) out[prop] = null;
    else if (prop === 'webhookUrl') out[prop] = 'https://example.com/hook';
    else out[prop] = generate(def, full, undefined, depth + 1, nulls);
  }
  if (name && discriminatorValue.has(name)) out.payloadType = discriminatorValue.get(name);
  return out;
}

/** Request schemas that are deliberately stricter than the document about required fields. */
const stricterRequests: Record<string, string> = {
  PostReportRequest: 'eventId and at least one payload are required',
  SparkReportPayload: 'its first variant, EnergyUsage, needs points (or curvePoints)',
  EnergyUsageReportPayload: 'points (or curvePoints) is required',
  LocationEnergyUsageReportPayload: 'points is required',
  Coordinate: 'latitude and longitude are required',
  LPCDataPoint: 'maxPowerInKiloWatts and timestamp are required',
  PriceCurvePoint: 'price and timestamp are required',
};

/**
 * Response schemas that require fields the document leaves optional: .NET value types (double,
 * DateTimeOffset) are always serialized, and a simulation answer without its event is useless.
 */
const stricterResponses: Record<string, string> = {
  Coordinate: 'latitude and longitude (doubles)',
  PriceCurvePoint: 'price and timestamp (double, DateTimeOffset)',
  SimulateEventResponse: 'simulatedEvent',
};

describe('generated instances', () => {
  for (const [name, schema] of Object.entries(responseSchemas)) {
    it(`response ${name}: all fields parse${stricterResponses[name] ? '' : ' and so do only required fields'}`, () => {
      const comp = components[name];
      const fullR = schema.safeParse(generate({ $ref: `#/components/schemas/${name}` }, true));
      expect(fullR.success, JSON.stringify(fullR.error?.issues)).toBe(true);
      if (!stricterResponses[name]) {
        const minR = schema.safeParse(generate({ $ref: `#/components/schemas/${name}` }, false));
        expect(minR.success, JSON.stringify(minR.error?.issues)).toBe(true);
      }
      expect(comp).toBeDefined();
    });
  }
  for (const [name, schema] of Object.entries(requestSchemas)) {
    it(`request ${name}: all fields parse${stricterRequests[name] ? '' : ' and so do only required fields'}`, () => {
      const fullR = schema.safeParse(generate({ $ref: `#/components/schemas/${name}` }, true));
      expect(fullR.success, JSON.stringify(fullR.error?.issues)).toBe(true);
      if (!stricterRequests[name]) {
        const minR = schema.safeParse(generate({ $ref: `#/components/schemas/${name}` }, false));
        expect(minR.success, JSON.stringify(minR.error?.issues)).toBe(true);
      }
    });
  }
});

describe('generated instances with null in every nullable field', () => {
  const stricter = new Set(['PostReportRequest', 'SparkReportPayload', 'EnergyUsageReportPayload']);
  for (const [kind, map] of [
    ['request', requestSchemas],
    ['response', responseSchemas],
  ] as const) {
    for (const [name, schema] of Object.entries(map)) {
      if (kind === 'request' && stricter.has(name)) continue;
      it(`${kind} ${name}`, () => {
        const r = schema.safeParse(generate({ $ref: `#/components/schemas/${name}` }, true, undefined, 0, true));
        expect(r.success, JSON.stringify(r.error?.issues)).toBe(true);
      });
    }
  }
});

describe('strict requests, loose responses', () => {
  it('requests reject unknown fields and unknown enum values', () => {
    expect(w.userCreateSchema.safeParse({ userId: 'u', extra: 1 }).success).toBe(false);
    expect(w.locationCreateSchema.safeParse({ locationId: 'l', locationType: 'Castle' }).success).toBe(false);
    expect(w.webhookCreateSchema.safeParse({ webhookUrl: 'https://x.example', notificationTypes: ['Gossip'] }).success).toBe(false);
    expect(w.webhookCreateSchema.safeParse({ webhookUrl: 'not a url' }).success).toBe(false);
    expect(w.vehicleCreateSchema.safeParse({ resourceId: 'r' }).success).toBe(false);
  });

  it('reports accept both acknowledgement spellings and both points names', () => {
    const ack = (payloadType: string) => ({ eventId: 'e', payloads: [{ payloadType, acknowledgedTargets: [], declinedTargets: [] }] });
    for (const t of ['ResourceLPCAcknowledgement', 'ResourceLPCAcknowledged', 'LocationLPCAcknowledgement', 'LocationLPCAcknowledged']) {
      expect(w.reportRequestSchema.safeParse(ack(t)).success, t).toBe(true);
    }
    expect(w.reportRequestSchema.safeParse(ack('LPCAcknowledged')).success).toBe(false);
    expect(w.canonicalReportPayloadType('LocationLPCAcknowledged')).toBe('LocationLPCAcknowledgement');
    expect(w.canonicalReportPayloadType('EnergyUsage')).toBe('EnergyUsage');
    const usage = (extra: object) => ({
      eventId: 'e',
      payloads: [{ payloadType: 'EnergyUsage', resourceId: 'r', resolution: '01:00:00', ...extra }],
    });
    const pts = [{ timestamp: '2026-03-04T00:00:00Z', kiloWattHours: 1.2 }];
    const a = w.reportRequestSchema.parse(usage({ points: pts }));
    const b = w.reportRequestSchema.parse(usage({ curvePoints: pts }));
    expect(w.reportRequestSchema.safeParse(usage({})).success).toBe(false);
    expect(w.reportRequestSchema.safeParse(usage({ points: [{ timestamp: 'yesterday', kiloWattHours: 1 }] })).success).toBe(false);
    const first = a.payloads[0];
    const second = b.payloads[0];
    if (first?.payloadType !== 'EnergyUsage' || second?.payloadType !== 'EnergyUsage') throw new Error('narrowing');
    expect(w.energyUsagePoints(first)).toEqual(pts);
    expect(w.energyUsagePoints(second)).toEqual(pts);
  });

  it('responses keep unknown fields, unknown enum values and unknown payload types', () => {
    const ev = w.eventSchema.parse({
      id: 'e1',
      createdAt: '2026-03-03T12:00:00.1234567+00:00',
      payload: { payloadType: 'GridTariff', tariff: [1, 2] },
      region: 'north',
    });
    expect(ev.payload).toEqual({ payloadType: 'GridTariff', tariff: [1, 2] });
    expect((ev as Record<string, unknown>).region).toBe('north');
    expect(w.isPriceCurvePayload(ev.payload)).toBe(false);
    const n = w.eventNotificationSchema.parse({
      notificationId: 'n',
      eventId: 'e',
      eventCreatedAtUtc: '2026-03-03T12:00:00+00:00',
      notificationSentUtc: '2026-03-03T12:00:01+00:00',
      notificationType: 'GridTariffCreated',
      payload: { payloadType: 'GridTariff' },
    });
    expect(n.notificationType).toBe('GridTariffCreated');
    const hook = w.webhookSchema.parse({ webhookId: 'h', webhookUrl: 'https://x', status: 'Sleeping', notificationTypes: ['Future'] });
    expect(hook.status).toBe('Sleeping');
    expect(w.resourceSchema.parse({ resourceId: 'r', resourceType: 'HeatPump', userId: 'u' }).resourceType).toBe('HeatPump');
  });

  it('a malformed payload of a known type is rejected, not passed as unknown', () => {
    expect(w.eventPayloadSchema.safeParse({ payloadType: 'PriceCurve', targets: 'all' }).success).toBe(false);
    expect(w.eventPayloadSchema.safeParse({ payloadType: 'UserEligibility' }).success).toBe(false);
    expect(w.eventPayloadSchema.safeParse({ noType: true }).success).toBe(false);
  });

  it('type guards narrow the known payloads', () => {
    const p = w.eventPayloadSchema.parse({
      payloadType: 'UserEligibility',
      lastUpdated: '2026-03-03T12:00:00+00:00',
      addedUsers: ['u1'],
      removedUsers: [],
    });
    expect(w.isUserEligibilityPayload(p) && p.addedUsers).toEqual(['u1']);
    expect(w.isLocationLpcPayload(p) || w.isResourceLpcPayload(p) || w.isLpcReservationPayload(p)).toBe(false);
  });

  it('forecast responses parse', () => {
    const units = { currency: 'NOK', vat: { rate: 0.25, hasVAT: true }, energyUnit: 'kWh' };
    const seg = { from: '2026-03-03T00:00:00+01:00', to: '2026-03-03T06:00:00+01:00', averagePrice: 0.81 };
    expect(
      w.forecastResponseSchema.safeParse({ priceArea: 'NO1', priceUnits: units, segmentOptions: { segmentSize: 6 }, forecastSegments: [seg] })
        .success,
    ).toBe(true);
    expect(
      w.forecastAdviceResponseSchema.safeParse({
        priceArea: 'NO1',
        priceUnits: units,
        segmentOptions: { segmentSize: 6 },
        forecastAdvice: [{ ...seg, loss: 0.1, type: 'Good' }],
      }).success,
    ).toBe(true);
    expect(
      w.forecastAdviceResponseSchema.safeParse({ priceArea: 'NO1', priceUnits: units, forecastAdvice: [{ ...seg, type: 'Cheapest' }] }).success,
    ).toBe(true);
    expect(
      w.actualPricesResponseSchema.safeParse({ priceArea: 'SE3', priceUnits: units, prices: { '2026-03-03T00:00:00+01:00': 0.5 } }).success,
    ).toBe(true);
    expect(w.forecastResponseSchema.safeParse({ priceArea: 'NO1', priceUnits: units, forecastSegments: [{ from: 'x', to: 'y' }] }).success).toBe(
      false,
    );
  });
});
