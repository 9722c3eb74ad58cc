import {
  locationCreateSchema,
  locationPatchSchema,
  locationPutSchema,
  locationResourceCreateSchema,
  locationsBatchCreateSchema,
  userCreateSchema,
  usersBatchCreateSchema,
  vehicleCreateSchema,
  type LocationCreate,
} from '../spark/wire.js';
import type { SandboxEngine } from './engine.js';
import { badRequest, defineRoute, empty, json, ReplyError, unknownId, type Route } from './http-kit.js';
import { paginate, parsePaging, type LocationRec, type PartnerState } from './state.js';
import { locationBoundResourceView, locationView, resourceView } from './views.js';

/** Users, locations and resources (location-bound and vehicles). */
export function userRoutes(engine: SandboxEngine): Route[] {
  const p = (clientId: string): PartnerState => engine.partner(clientId);

  const needUser = (partner: PartnerState, route: Pick<Route, 'errors' | 'notFound'>, userId: string): void => {
    if (!partner.users.has(userId)) throw unknownId(route, 'user', userId);
  };
  const needLocation = (partner: PartnerState, route: Pick<Route, 'errors' | 'notFound'>, userId: string, locationId: string): LocationRec => {
    needUser(partner, route, userId);
    const loc = partner.locations.get(locationId);
    if (!loc || loc.userId !== userId) throw unknownId(route, 'location', locationId);
    return loc;
  };

  /** Location fields after the rules of the brief: meter point ids or coordinates, at least one. */
  const locationFields = (
    body: Omit<LocationCreate, 'locationId'>,
    errors: 'string',
  ): Pick<LocationRec, 'meterPointIds' | 'coordinates' | 'locationType'> => {
    const meterPointIds = [...new Set(body.meterPointIds ?? (body.meterPointId ? [body.meterPointId] : []))];
    const coordinates = body.coordinates ?? undefined;
    if (meterPointIds.length === 0 && !coordinates)
      throw new ReplyError(badRequest(errors, 'A location needs meterPointIds or coordinates (at least one of them)', 'meterPointIds'));
    return { meterPointIds, coordinates, locationType: body.locationType ?? 'Unknown' };
  };

  /** A meter point id may belong to one location of the partner only. */
  const mpidTaken = (partner: PartnerState, mpids: string[], exceptLocationId?: string): string | undefined =>
    mpids.find((m) => [...partner.locations.values()].some((l) => l.locationId !== exceptLocationId && l.meterPointIds.includes(m)));

  const usersGet = { errors: 'string' as const };
  const userById = { errors: 'string' as const, notFound: 'empty' as const };

  return [
    defineRoute({
      method: 'GET',
      pattern: '/users',
      ...usersGet,
      handler: (ctx) => {
        const paging = parsePaging(ctx.query);
        if ('error' in paging) return badRequest('string', paging.error);
        const page = paginate([...p(ctx.clientId).users.keys()], paging.page, paging.pageSize);
        return json(200, { pagination: page.pagination, users: page.items.map((userId) => ({ userId })) });
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/users',
      errors: 'string',
      body: userCreateSchema,
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        if (partner.users.has(ctx.body.userId)) return badRequest('string', `User '${ctx.body.userId}' already exists`);
        partner.users.set(ctx.body.userId, { userId: ctx.body.userId, simulated: false });
        return json(201, { userId: ctx.body.userId });
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/users/batch',
      errors: 'string',
      body: usersBatchCreateSchema,
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const ids = ctx.body.users.map((u) => u.userId);
        const dup = ids.find((id, i) => ids.indexOf(id) !== i || partner.users.has(id));
        if (dup !== undefined) return badRequest('string', `User '${dup}' already exists or appears twice`);
        for (const userId of ids) partner.users.set(userId, { userId, simulated: false });
        return json(201, { users: ids.map((userId) => ({ userId })) });
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/users/{userId}',
      ...userById,
      handler: (ctx) => {
        needUser(p(ctx.clientId), userById, ctx.params.userId ?? '');
        return json(200, { userId: ctx.params.userId });
      },
    }),
    defineRoute({
      method: 'DELETE',
      pattern: '/users/{userId}',
      ...userById,
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const userId = ctx.params.userId ?? '';
        needUser(partner, userById, userId);
        partner.deleteUser(userId);
        engine.markEligibilityDirty(partner);
        return empty(204);
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/users/{userId}/locations',
      errors: 'string',
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        needUser(partner, { errors: 'string' }, ctx.params.userId ?? '');
        return json(200, partner.locationsOf(ctx.params.userId ?? '').map(locationView));
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/users/{userId}/locations',
      errors: 'string',
      notFound: 'empty',
      body: locationCreateSchema,
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const userId = ctx.params.userId ?? '';
        needUser(partner, { errors: 'string', notFound: 'empty' }, userId);
        const fields = locationFields(ctx.body, 'string');
        // 409 (declared for this operation): the location id, or one of its meter point ids,
        // is already registered by this partner.
        if (partner.locations.has(ctx.body.locationId) || mpidTaken(partner, fields.meterPointIds)) return empty(409);
        const loc: LocationRec = { locationId: ctx.body.locationId, userId, simulated: false, ...fields };
        partner.locations.set(loc.locationId, loc);
        engine.markEligibilityDirty(partner);
        return json(201, locationView(loc));
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/users/locations/batch',
      errors: 'string',
      body: locationsBatchCreateSchema,
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const created: LocationRec[] = [];
        const seenIds = new Set<string>();
        const seenMpids = new Set<string>();
        for (const item of ctx.body.locations) {
          if (!partner.users.has(item.userId)) return badRequest('string', `user '${item.userId}' was not found`);
          const fields = locationFields(item, 'string');
          if (partner.locations.has(item.locationId) || seenIds.has(item.locationId))
            return badRequest('string', `Location '${item.locationId}' already exists or appears twice`);
          const taken = mpidTaken(partner, fields.meterPointIds) ?? fields.meterPointIds.find((m) => seenMpids.has(m));
          if (taken) return badRequest('string', `Meter point '${taken}' is already registered on another location`);
          seenIds.add(item.locationId);
          for (const m of fields.meterPointIds) seenMpids.add(m);
          created.push({ locationId: item.locationId, userId: item.userId, simulated: false, ...fields });
        }
        for (const loc of created) partner.locations.set(loc.locationId, loc);
        if (created.length > 0) engine.markEligibilityDirty(partner);
        return json(201, { locations: created.map(locationView) });
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/users/{userId}/locations/{locationId}',
      errors: 'string',
      notFound: 'empty',
      handler: (ctx) =>
        json(
          200,
          locationView(needLocation(p(ctx.clientId), { errors: 'string', notFound: 'empty' }, ctx.params.userId ?? '', ctx.params.locationId ?? '')),
        ),
    }),
    defineRoute({
      method: 'PUT',
      pattern: '/users/{userId}/locations/{locationId}',
      errors: 'string',
      notFound: 'empty',
      body: locationPutSchema,
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const loc = needLocation(partner, { errors: 'string', notFound: 'empty' }, ctx.params.userId ?? '', ctx.params.locationId ?? '');
        if (ctx.body.locationId !== loc.locationId) return badRequest('string', 'locationId in the body differs from the path');
        const fields = locationFields(ctx.body, 'string');
        const taken = mpidTaken(partner, fields.meterPointIds, loc.locationId);
        if (taken) return badRequest('string', `Meter point '${taken}' is already registered on another location`);
        Object.assign(loc, fields);
        if (!fields.coordinates) delete loc.coordinates;
        engine.markEligibilityDirty(partner);
        return json(200, locationView(loc));
      },
    }),
    defineRoute({
      method: 'PATCH',
      pattern: '/users/{userId}/locations/{locationId}',
      errors: 'string',
      notFound: 'empty',
      body: locationPatchSchema,
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const loc = needLocation(partner, { errors: 'string', notFound: 'empty' }, ctx.params.userId ?? '', ctx.params.locationId ?? '');
        const meterPointIds = ctx.body.meterPointIds === undefined ? loc.meterPointIds : [...new Set(ctx.body.meterPointIds ?? [])];
        const coordinates = ctx.body.coordinates === undefined ? loc.coordinates : (ctx.body.coordinates ?? undefined);
        if (meterPointIds.length === 0 && !coordinates)
          return badRequest('string', 'A location needs meterPointIds or coordinates (at least one of them)');
        if (mpidTaken(partner, meterPointIds, loc.locationId)) return empty(409);
        loc.meterPointIds = meterPointIds;
        if (coordinates) loc.coordinates = coordinates;
        else delete loc.coordinates;
        if (ctx.body.locationType) loc.locationType = ctx.body.locationType;
        engine.markEligibilityDirty(partner);
        return json(200, locationView(loc));
      },
    }),
    defineRoute({
      method: 'DELETE',
      pattern: '/users/{userId}/locations/{locationId}',
      errors: 'string',
      notFound: 'empty',
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const loc = needLocation(partner, { errors: 'string', notFound: 'empty' }, ctx.params.userId ?? '', ctx.params.locationId ?? '');
        partner.deleteLocation(loc.locationId);
        engine.markEligibilityDirty(partner);
        return empty(204);
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/users/{userId}/vehicles',
      errors: 'problem',
      body: vehicleCreateSchema,
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        needUser(partner, { errors: 'problem' }, ctx.params.userId ?? '');
        if (ctx.body.resourceType !== 'Vehicle') return badRequest('problem', 'resourceType must be Vehicle', 'resourceType');
        if (partner.resources.has(ctx.body.resourceId))
          return badRequest('problem', `Resource '${ctx.body.resourceId}' already exists`, 'resourceId');
        const r = {
          resourceId: ctx.body.resourceId,
          resourceType: ctx.body.resourceType,
          userId: ctx.params.userId ?? '',
          locationId: null,
          meterPointId: null,
          simulated: false,
        };
        partner.resources.set(r.resourceId, r);
        return json(201, resourceView(r));
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/users/{userId}/resources',
      errors: 'empty',
      notFound: 'empty',
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        needUser(partner, { errors: 'empty', notFound: 'empty' }, ctx.params.userId ?? '');
        return json(200, { resources: partner.resourcesOfUser(ctx.params.userId ?? '').map(resourceView) });
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/users/{userId}/locations/{locationId}/resources',
      errors: 'empty',
      notFound: 'empty',
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const loc = needLocation(partner, { errors: 'empty', notFound: 'empty' }, ctx.params.userId ?? '', ctx.params.locationId ?? '');
        return json(200, partner.resourcesOfLocation(loc.locationId).map(locationBoundResourceView));
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/users/{userId}/locations/{locationId}/resources',
      errors: 'string',
      notFound: 'string',
      body: locationResourceCreateSchema,
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const loc = needLocation(partner, { errors: 'string', notFound: 'string' }, ctx.params.userId ?? '', ctx.params.locationId ?? '');
        if (ctx.body.resourceType === 'Vehicle') return badRequest('string', 'A vehicle belongs to a user: use POST /users/{userId}/vehicles');
        if (partner.resources.has(ctx.body.resourceId)) return badRequest('string', `Resource '${ctx.body.resourceId}' already exists`);
        const r = {
          resourceId: ctx.body.resourceId,
          resourceType: ctx.body.resourceType,
          userId: loc.userId,
          locationId: loc.locationId,
          meterPointId: ctx.body.meterPointId ?? null,
          simulated: false,
        };
        partner.resources.set(r.resourceId, r);
        return json(201, locationBoundResourceView(r));
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/resources/{resourceId}',
      errors: 'string',
      notFound: 'string',
      handler: (ctx) => {
        const r = p(ctx.clientId).resources.get(ctx.params.resourceId ?? '');
        if (!r) throw unknownId({ errors: 'string', notFound: 'string' }, 'resource', ctx.params.resourceId ?? '');
        return json(200, resourceView(r));
      },
    }),
    defineRoute({
      method: 'DELETE',
      pattern: '/resources/{resourceId}',
      errors: 'string',
      notFound: 'empty',
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        if (!partner.resources.delete(ctx.params.resourceId ?? ''))
          throw unknownId({ errors: 'string', notFound: 'empty' }, 'resource', ctx.params.resourceId ?? '');
        return empty(204);
      },
    }),
  ];
}
