import { randomUUID } from 'node:crypto';
import { webhookCreateSchema, webhookPatchSchema, webhookPutSchema } from '../spark/wire.js';
import type { SandboxEngine } from './engine.js';
import { badRequest, defineRoute, empty, json, unknownId, type Route } from './http-kit.js';
import { paginate, parsePaging, type PartnerState, type WebhookRec } from './state.js';
import { logView, newestFirst, webhookView } from './views.js';

/** Webhook registration and the notification logs. */
export function webhookRoutes(engine: SandboxEngine): Route[] {
  const p = (clientId: string): PartnerState => engine.partner(clientId);
  const byId = { errors: 'problem' as const, notFound: 'empty' as const };
  const need = (partner: PartnerState, webhookId: string, route: Pick<Route, 'errors' | 'notFound'> = byId): WebhookRec => {
    const w = partner.webhooks.get(webhookId);
    if (!w) throw unknownId(route, 'webhook', webhookId);
    return w;
  };

  return [
    defineRoute({
      method: 'GET',
      pattern: '/webhooks',
      errors: 'problem',
      handler: (ctx) => json(200, { webhooks: [...p(ctx.clientId).webhooks.values()].map(webhookView) }),
    }),
    defineRoute({
      method: 'POST',
      pattern: '/webhooks',
      errors: 'problem',
      body: webhookCreateSchema,
      handler: (ctx) => {
        const now = engine.clock.nowMs();
        const w: WebhookRec = {
          webhookId: randomUUID(),
          webhookUrl: ctx.body.webhookUrl,
          name: ctx.body.name ?? null,
          secret: ctx.body.webhookSecret ?? null,
          notificationTypes: [...new Set(ctx.body.notificationTypes ?? [])],
          enabled: true,
          status: 'New',
          createdMs: now,
          modifiedMs: now,
          lastAnalyzedMs: now,
        };
        p(ctx.clientId).webhooks.set(w.webhookId, w);
        return json(201, webhookView(w));
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/webhooks/logs',
      errors: 'problem',
      handler: (ctx) => {
        const paging = parsePaging(ctx.query);
        if ('error' in paging) return badRequest('problem', paging.error, paging.field);
        const partner = p(ctx.clientId);
        const webhookId = ctx.query.get('webhookId');
        const logs = newestFirst(
          partner.logs.filter((l) => !webhookId || l.webhookId === webhookId),
          (l) => l.sentMs,
        );
        const page = paginate(logs, paging.page, paging.pageSize);
        return json(200, { webhookNotificationLogs: page.items.map((l) => logView(l, partner.clientId)), pagination: page.pagination });
      },
    }),
    defineRoute({
      // No 404 is declared: an unknown notification id is a 400 ProblemDetails.
      method: 'GET',
      pattern: '/webhooks/logs/{notificationId}',
      errors: 'problem',
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const attempts = newestFirst(
          partner.logs.filter((l) => l.notificationId === ctx.params.notificationId),
          (l) => l.sentMs,
        );
        const latest = attempts[0];
        if (!latest) throw unknownId({ errors: 'problem' }, 'notificationId', ctx.params.notificationId ?? '');
        return json(200, { webhookNotificationLog: logView(latest, partner.clientId), notificationContent: latest.content });
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/webhooks/{webhookId}',
      ...byId,
      handler: (ctx) => json(200, webhookView(need(p(ctx.clientId), ctx.params.webhookId ?? ''))),
    }),
    defineRoute({
      method: 'PUT',
      pattern: '/webhooks/{webhookId}',
      ...byId,
      body: webhookPutSchema,
      handler: (ctx) => {
        const w = need(p(ctx.clientId), ctx.params.webhookId ?? '');
        w.webhookUrl = ctx.body.webhookUrl;
        w.secret = ctx.body.webhookSecret ?? null;
        w.notificationTypes = [...new Set(ctx.body.notificationTypes ?? [])];
        w.enabled = ctx.body.enabled ?? true;
        w.name = ctx.body.name ?? null;
        w.modifiedMs = engine.clock.nowMs();
        return json(200, webhookView(w));
      },
    }),
    defineRoute({
      method: 'PATCH',
      pattern: '/webhooks/{webhookId}',
      ...byId,
      body: webhookPatchSchema,
      handler: (ctx) => {
        const w = need(p(ctx.clientId), ctx.params.webhookId ?? '');
        const b = ctx.body;
        if (b.webhookUrl != null) w.webhookUrl = b.webhookUrl;
        if (b.webhookSecret !== undefined) w.secret = b.webhookSecret;
        if (b.notificationTypes != null) w.notificationTypes = [...new Set(b.notificationTypes)];
        if (b.enabled != null) w.enabled = b.enabled;
        if (b.name !== undefined) w.name = b.name;
        w.modifiedMs = engine.clock.nowMs();
        return json(200, webhookView(w));
      },
    }),
    defineRoute({
      method: 'DELETE',
      pattern: '/webhooks/{webhookId}',
      errors: 'problem',
      notFound: 'string',
      handler: (ctx) => {
        const partner = p(ctx.clientId);
        const w = need(partner, ctx.params.webhookId ?? '', { errors: 'problem', notFound: 'string' });
        partner.webhooks.delete(w.webhookId);
        engine.delivery.forget((id) => id === w.webhookId);
        return empty(204);
      },
    }),
    defineRoute({
      method: 'PUT',
      pattern: '/webhooks/{webhookId}/enabled',
      errors: 'problem',
      notFound: 'empty',
      body: 'none',
      handler: (ctx) => {
        const w = need(p(ctx.clientId), ctx.params.webhookId ?? '');
        const raw = ctx.query.get('enabled');
        if (raw === null || !/^(true|false)$/i.test(raw))
          return badRequest('problem', "The query parameter 'enabled' (true or false) is required", 'enabled');
        w.enabled = raw.toLowerCase() === 'true';
        w.modifiedMs = engine.clock.nowMs();
        return empty(204);
      },
    }),
  ];
}
