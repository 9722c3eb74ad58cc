import { randomUUID } from 'node:crypto';
import {
  simulateLocationLpcRequestSchema,
  simulatePriceCurveRequestSchema,
  simulateResourceLpcRequestSchema,
  type SimulateLocationLpcRequest,
} from '../spark/wire.js';
import type { SandboxEngine } from './engine.js';
import { defineRoute, empty, json, type Route } from './http-kit.js';
import { dailyIncentiveCurve, priceCurveDelta } from './price-curves.js';
import { priceAreas } from './spot-prices.js';
import type { EventRec, PartnerState } from './state.js';
import { timeSpanMs } from './reports.js';
import { eventView } from './views.js';
import { HOUR_MS, isoUtc, localDayStartMs, OSLO } from '../core/zoned-time.js';

/**
 * Simulation endpoints. They create events for the calling partner, deliver them and list them
 * under /events; they change no eligibility. Literal path segments match case-insensitively, so
 * `/simulation/events/priceCurve` (the brief) and `/pricecurve` (the document) both work.
 */
export function simulationRoutes(engine: SandboxEngine): Route[] {
  const p = (clientId: string): PartnerState => engine.partner(clientId);
  const pick = <T>(items: readonly T[], max: number): T[] => {
    const pool = [...items];
    const out: T[] = [];
    while (pool.length > 0 && out.length < max) out.push(...pool.splice(Math.floor(engine.random() * pool.length), 1));
    return out;
  };
  const simulated = (e: EventRec) => json(200, { simulatedEvent: eventView(e) });
  /** Default LPC points: 2–3 whole hours from `aheadHours` whole hours on (the next by default), capped at 0–3 kW. */
  const lpcPoints = (aheadHours = 0): { maxPowerInKiloWatts: number; timestamp: string }[] => {
    const start = (Math.ceil(engine.clock.nowMs() / HOUR_MS) + aheadHours) * HOUR_MS;
    const count = 2 + Math.floor(engine.random() * 2);
    const cap = [0, 1.5, 3][Math.floor(engine.random() * 3)] ?? 0;
    return Array.from({ length: count }, (_, i) => ({ maxPowerInKiloWatts: cap, timestamp: isoUtc(start + i * HOUR_MS) }));
  };
  const span = (points: { timestamp: string }[], resolution = '01:00:00'): { fromMs: number; toMs: number } => {
    const ts = points.map((pt) => Date.parse(pt.timestamp));
    const now = engine.clock.nowMs();
    return ts.length === 0 ? { fromMs: now, toMs: now } : { fromMs: Math.min(...ts), toMs: Math.max(...ts) + (timeSpanMs(resolution) || HOUR_MS) };
  };

  /** Location LPC targets from a request's `locations` (left out: up to two of the partner's locations), default points from `aheadHours` on. */
  const locationTargets = (partner: PartnerState, locations: SimulateLocationLpcRequest['locations'], aheadHours: number) => {
    const given =
      locations ??
      pick([...partner.locations.values()], 2).map((l) => ({
        location: { locationId: l.locationId, meterPointId: l.meterPointIds[0] ?? '' },
        points: null,
      }));
    return given.map((g) => {
      const loc = g.location?.locationId ? partner.locations.get(g.location.locationId) : pick([...partner.locations.values()], 1)[0];
      return {
        locationId: g.location?.locationId ?? loc?.locationId ?? `sim-location-${randomUUID()}`,
        meterPointId: g.location?.meterPointId ?? loc?.meterPointIds[0] ?? '',
        resolution: '01:00:00',
        points: g.points ?? lpcPoints(aheadHours),
      };
    });
  };

  return [
    defineRoute({
      method: 'POST',
      pattern: '/simulation/events/pricecurve',
      errors: 'string',
      body: simulatePriceCurveRequestSchema,
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const area = ctx.body.priceArea ?? priceAreas[1 + Math.floor(engine.random() * (priceAreas.length - 1))] ?? 'NO1';
        const targets =
          ctx.body.targets ??
          pick(
            [...partner.locations.values()].flatMap((l) => {
              const bound = partner.resourcesOfLocation(l.locationId);
              return bound.length === 0
                ? [{ resourceId: l.locationId, locationId: l.locationId }]
                : bound.map((r) => ({ resourceId: r.resourceId, locationId: l.locationId }));
            }),
            3,
          );
        let delta: Record<string, unknown>;
        let cover: { fromMs: number; toMs: number };
        if (ctx.body.priceCurveDelta) {
          const d = ctx.body.priceCurveDelta;
          const resolution = d.resolution ?? '01:00:00';
          delta = { points: d.points ?? [], energyUnit: d.energyUnit === 'MWh' ? 'MWh' : 'kWh', currency: d.currency ?? 'EUR', resolution };
          cover = span(d.points ?? [], resolution);
        } else {
          const sandboxArea = area === 'Unknown' ? 'NO1' : area;
          const curve = dailyIncentiveCurve(
            engine.options.seed + Math.floor(engine.random() * 1e6),
            sandboxArea,
            localDayStartMs(engine.clock.nowMs(), OSLO, 1),
            engine.options.localCurrencyFromMs,
          );
          delta = priceCurveDelta(curve);
          cover = { fromMs: curve.fromMs, toMs: curve.toMs };
        }
        return simulated(
          engine.createEvent(partner, 'PriceCurveCreated', { targets, priceCurveDelta: delta, priceArea: area, payloadType: 'PriceCurve' }, cover),
        );
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/simulation/events/usereligibility',
      errors: 'string',
      body: 'none',
      handler: (ctx) =>
        simulated(
          engine.createEvent(p(ctx.clientId), 'UserEligibilityUpdated', {
            lastUpdated: isoUtc(engine.clock.nowMs()),
            addedUsers: [],
            removedUsers: [],
            payloadType: 'UserEligibility',
          }),
        ),
    }),
    defineRoute({
      method: 'POST',
      pattern: '/simulation/events/lpc/locations',
      errors: 'string',
      body: simulateLocationLpcRequestSchema,
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const targets = locationTargets(partner, ctx.body.locations, 0);
        return simulated(
          engine.createEvent(partner, 'LocationLPCRequested', { targets, payloadType: 'LocationLPC' }, span(targets.flatMap((t) => t.points))),
        );
      },
    }),
    defineRoute({
      // Not in the document, which lists the LPCReservationCreated notification but no way to make
      // one: a reservation takes the same body as a location LPC. By default its hours start three
      // hours on, so that a partner sees the plan keep room for it.
      method: 'POST',
      pattern: '/simulation/events/lpc/reservations',
      errors: 'string',
      body: simulateLocationLpcRequestSchema,
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const targets = locationTargets(partner, ctx.body.locations, 3);
        return simulated(
          engine.createEvent(partner, 'LPCReservationCreated', { targets, payloadType: 'LPCReservation' }, span(targets.flatMap((t) => t.points))),
        );
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/simulation/events/lpc/resources',
      errors: 'string',
      body: simulateResourceLpcRequestSchema,
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const bound = [...partner.resources.values()].filter((r) => r.locationId !== null);
        const given =
          ctx.body.resources ??
          pick(bound, 2).map((r) => ({
            resource: { resourceId: r.resourceId, locationId: r.locationId ?? '', meterPointId: undefined as string | undefined },
            points: null,
          }));
        const targets = given.map((g) => {
          const r = g.resource?.resourceId ? partner.resources.get(g.resource.resourceId) : pick(bound, 1)[0];
          const locationId = g.resource?.locationId ?? r?.locationId ?? '';
          return {
            meterPointId: g.resource?.meterPointId ?? r?.meterPointId ?? partner.locations.get(locationId)?.meterPointIds[0] ?? '',
            locationId,
            resourceId: g.resource?.resourceId ?? r?.resourceId ?? `sim-resource-${randomUUID()}`,
            resolution: '01:00:00',
            points: g.points ?? lpcPoints(),
          };
        });
        const cover = span(targets.flatMap((t) => t.points));
        return simulated(engine.createEvent(partner, 'ResourceLPCRequested', { targets, payloadType: 'ResourceLPC' }, cover));
      },
    }),
    defineRoute({
      // Random simulated users with a location in test area 1, a hot water tank and a vehicle.
      method: 'POST',
      pattern: '/simulation/partner',
      errors: 'string',
      body: 'none',
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        for (let i = 0; i < 3; i++) {
          const id = randomUUID().slice(0, 8);
          const userId = `sim-user-${id}`;
          partner.users.set(userId, { userId, simulated: true });
          const locationId = `sim-location-${id}`;
          partner.locations.set(locationId, {
            locationId,
            userId,
            simulated: true,
            locationType: 'Residential',
            meterPointIds: [],
            coordinates: { latitude: 78.215 + engine.random() * 0.01, longitude: 15.6 + engine.random() * 0.05 },
          });
          partner.resources.set(`sim-tank-${id}`, {
            resourceId: `sim-tank-${id}`,
            resourceType: 'HotWaterTank',
            userId,
            locationId,
            meterPointId: null,
            simulated: true,
          });
          partner.resources.set(`sim-vehicle-${id}`, {
            resourceId: `sim-vehicle-${id}`,
            resourceType: 'Vehicle',
            userId,
            locationId: null,
            meterPointId: null,
            simulated: true,
          });
        }
        engine.markEligibilityDirty(partner);
        return empty(201);
      },
    }),
    defineRoute({
      method: 'DELETE',
      pattern: '/simulation/partner',
      errors: 'string',
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        for (const u of [...partner.users.values()].filter((x) => x.simulated)) partner.deleteUser(u.userId);
        for (const l of [...partner.locations.values()].filter((x) => x.simulated)) partner.deleteLocation(l.locationId);
        for (const r of [...partner.resources.values()].filter((x) => x.simulated)) partner.resources.delete(r.resourceId);
        engine.markEligibilityDirty(partner);
        return empty(200);
      },
    }),
    defineRoute({
      // Not in the document (it has no way to read reports back): what the sandbox accepted, so a
      // partner can see its reports as the API took them. Plan reports answer no event.
      method: 'GET',
      pattern: '/simulation/reports',
      errors: 'string',
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const all = [
          ...partner.reports.map((r) => ({ id: r.id, eventId: r.eventId as string | null, createdAtMs: r.createdAtMs, payloads: r.payloads })),
          ...partner.planReports.map((r) => ({ id: r.id, eventId: null, createdAtMs: r.createdAtMs, payloads: r.payloads })),
        ].sort((a, b) => b.createdAtMs - a.createdAtMs);
        return json(200, {
          reports: all.map((r) => ({ id: r.id, eventId: r.eventId, createdAt: isoUtc(r.createdAtMs), payloads: r.payloads.map((x) => x.raw) })),
        });
      },
    }),
  ];
}
