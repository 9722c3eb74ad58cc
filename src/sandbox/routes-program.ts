import { randomUUID } from 'node:crypto';
import { reportRequestSchema } from '../spark/wire.js';
import type { SandboxEngine } from './engine.js';
import { badRequest, defineRoute, empty, json, unknownId, type Route } from './http-kit.js';
import { meterPointEligible } from './neighbourhoods.js';
import { compensation, ReportRejected, validatePlanReport, validateReport } from './reports.js';
import { paginate, parsePaging, type PartnerState } from './state.js';
import { eventView, newestFirst } from './views.js';
import { isoUtc } from '../core/zoned-time.js';

/** Enrollment, eligibility, compensation, events and reports. */
export function programRoutes(engine: SandboxEngine): Route[] {
  const p = (clientId: string): PartnerState => engine.partner(clientId);
  const byUser = { errors: 'string' as const, notFound: 'empty' as const };
  const needUser = (partner: PartnerState, userId: string): void => {
    if (!partner.users.has(userId)) throw unknownId(byUser, 'user', userId);
  };
  const enrollmentView = (partner: PartnerState, userId: string): Record<string, unknown> => {
    const e = partner.users.get(userId)?.enrollment;
    return { isEnrolled: e !== undefined, userId, enrollmentId: e?.enrollmentId ?? null, enrollmentDate: e ? isoUtc(e.enrolledAtMs) : null };
  };

  return [
    defineRoute({
      method: 'GET',
      pattern: '/users/{userId}/enrollment',
      ...byUser,
      handler: (ctx) => {
        needUser(p(ctx.clientId), ctx.params.userId ?? '');
        return json(200, enrollmentView(p(ctx.clientId), ctx.params.userId ?? ''));
      },
    }),
    defineRoute({
      // No request body; enrolling twice keeps the first enrollment (idempotent).
      method: 'POST',
      pattern: '/users/{userId}/enrollment',
      ...byUser,
      body: 'none',
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const userId = ctx.params.userId ?? '';
        needUser(partner, userId);
        const user = partner.users.get(userId);
        if (user && !user.enrollment) user.enrollment = { enrollmentId: randomUUID(), enrolledAtMs: engine.clock.nowMs() };
        return json(200, enrollmentView(partner, userId));
      },
    }),
    defineRoute({
      method: 'DELETE',
      pattern: '/users/{userId}/enrollment',
      ...byUser,
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        needUser(partner, ctx.params.userId ?? '');
        const user = partner.users.get(ctx.params.userId ?? '');
        if (user) delete user.enrollment;
        return empty(204);
      },
    }),
    defineRoute({
      // The published eligibility: changes appear after the eligibility batch has run.
      method: 'GET',
      pattern: '/users/{userId}/eligibility',
      ...byUser,
      handler: (ctx) => {
        needUser(p(ctx.clientId), ctx.params.userId ?? '');
        return json(200, { userId: ctx.params.userId, isEligible: p(ctx.clientId).published.has(ctx.params.userId ?? '') });
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/users/eligible',
      errors: 'problem',
      handler: (ctx) => {
        const paging = parsePaging(ctx.query);
        if ('error' in paging) return badRequest('problem', paging.error, paging.field);
        const page = paginate([...p(ctx.clientId).published], paging.page, paging.pageSize);
        return json(200, { pagination: page.pagination, users: page.items.map((userId) => ({ userId })) });
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/meters/{mpid}/eligible',
      errors: 'empty',
      handler: (ctx) => json(200, { meterPointId: ctx.params.mpid, isEligible: meterPointEligible(ctx.params.mpid ?? '', engine.neighbourhoods) }),
    }),
    defineRoute({
      method: 'GET',
      pattern: '/users/{userId}/compensation',
      ...byUser,
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const userId = ctx.params.userId ?? '';
        needUser(partner, userId);
        const c = compensation(engine, partner, userId);
        return json(200, { userId, period: c.period, locationCompensations: c.locations });
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/events',
      errors: 'problem',
      handler: (ctx) => {
        const paging = parsePaging(ctx.query);
        if ('error' in paging) return badRequest('problem', paging.error, paging.field);
        const sorted = newestFirst(p(ctx.clientId).events, (e) => e.createdAtMs);
        const page = paginate(sorted, paging.page, paging.pageSize);
        return json(200, { pagination: page.pagination, events: page.items.map(eventView) });
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/events/{eventId}',
      errors: 'problem',
      notFound: 'empty',
      handler: (ctx) => {
        const e = p(ctx.clientId).events.find((x) => x.id === ctx.params.eventId);
        if (!e) throw unknownId({ errors: 'problem', notFound: 'empty' }, 'event', ctx.params.eventId ?? '');
        return json(200, eventView(e));
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/reports',
      errors: 'string',
      body: reportRequestSchema,
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        try {
          if (ctx.body.eventId === undefined || ctx.body.eventId === null) {
            const plan = validatePlanReport(engine, partner, ctx.body);
            partner.planReports.push(plan);
            return json(200, { id: plan.id, eventId: null, createdAt: isoUtc(plan.createdAtMs) });
          }
          const report = validateReport(engine, partner, ctx.body);
          partner.reports.push(report);
          return json(200, { id: report.id, eventId: report.eventId, createdAt: isoUtc(report.createdAtMs) });
        } catch (err) {
          if (err instanceof ReportRejected) return badRequest('string', err.message);
          throw err;
        }
      },
    }),
  ];
}
