import { randomUUID } from 'node:crypto';
import type { Logger } from '../log.js';
import { request } from '../spark/request.js';
import { signatureHeader, signPayload } from '../spark/webhook-signature.js';
import type { Clock } from '../ports.js';
import type { EventRec, NotificationLogRec, PartnerState, WebhookRec } from './state.js';
import { isoUtc } from '../core/zoned-time.js';

/**
 * Delivers events to the partner's enabled webhooks subscribed to the event's notification type.
 * Any 2xx is delivered; anything else (status, network error, timeout) is retried up to
 * `retryDelaysMs.length` times, each after its delay of clock time (exponential by default).
 * Every attempt is logged for `/webhooks/logs`. Retries carry the identical body and signature.
 */

export interface DeliveryOptions {
  clock: Clock;
  logger: Logger;
  /** Clock-time delays before retry 1, 2, 3. */
  retryDelaysMs: readonly number[];
  /** Real-time limit for one attempt (connect + headers + body). */
  timeoutMs: number;
  nextSeq: () => number;
}

interface PendingRetry {
  dueMs: number;
  partner: PartnerState;
  webhook: WebhookRec;
  notification: PreparedNotification;
  attempt: number;
}

interface PreparedNotification {
  notificationId: string;
  event: EventRec;
  body: string;
}

export class WebhookDelivery {
  private readonly retries: PendingRetry[] = [];

  constructor(private readonly options: DeliveryOptions) {}

  /** Sends `event` to every matching webhook; resolves when the first attempts are done. */
  async deliver(partner: PartnerState, event: EventRec): Promise<void> {
    const targets = [...partner.webhooks.values()].filter((w) => w.enabled && w.notificationTypes.includes(event.notificationType));
    await Promise.all(
      targets.map((webhook) => {
        const notificationId = randomUUID();
        const body = JSON.stringify({
          notificationId,
          eventId: event.id,
          eventCreatedAtUtc: isoUtc(event.createdAtMs),
          notificationSentUtc: isoUtc(this.options.clock.nowMs()),
          notificationType: event.notificationType,
          payload: event.payload,
        });
        return this.attempt(partner, webhook, { notificationId, event, body }, 1);
      }),
    );
  }

  /** Runs the retries that are due at the clock's current time. */
  async runDueRetries(): Promise<void> {
    const now = this.options.clock.nowMs();
    const due = this.retries.filter((r) => r.dueMs <= now);
    for (const r of due) this.retries.splice(this.retries.indexOf(r), 1);
    await Promise.all(due.map((r) => this.attempt(r.partner, r.webhook, r.notification, r.attempt)));
  }

  /** Clock time of the next pending retry, if any. */
  nextDueMs(): number | undefined {
    return this.retries.reduce<number | undefined>((min, r) => (min === undefined || r.dueMs < min ? r.dueMs : min), undefined);
  }

  /** Drops pending retries of a deleted webhook or a partner wipe. */
  forget(predicate: (webhookId: string) => boolean): void {
    for (let i = this.retries.length - 1; i >= 0; i--) {
      const r = this.retries[i];
      if (r && predicate(r.webhook.webhookId)) this.retries.splice(i, 1);
    }
  }

  private async attempt(partner: PartnerState, webhook: WebhookRec, n: PreparedNotification, attempt: number): Promise<void> {
    const { clock, logger, timeoutMs } = this.options;
    const signature = webhook.secret ? signPayload(n.body, webhook.secret) : null;
    const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'wattshift-sandbox' };
    if (signature) headers[signatureHeader] = signature;
    const sentMs = clock.nowMs();
    const startedReal = performance.now();
    let status: number | null = null;
    let timedOut = false;
    try {
      const res = await request(webhook.webhookUrl, { method: 'POST', headers, body: n.body, signal: AbortSignal.timeout(timeoutMs) });
      await res.body.dump();
      status = res.statusCode;
    } catch (err) {
      const e = err as { name?: unknown; code?: unknown };
      timedOut = e.name === 'TimeoutError' || (typeof e.code === 'string' && /^UND_ERR_.*_TIMEOUT$/.test(e.code));
      logger.debug({ webhookId: webhook.webhookId, attempt, err: String(err) }, 'webhook attempt failed');
    }
    const ok = status !== null && status >= 200 && status < 300;
    const log: NotificationLogRec = {
      webhookId: webhook.webhookId,
      webhookUrl: webhook.webhookUrl,
      notificationId: n.notificationId,
      eventId: n.event.id,
      notificationType: n.event.notificationType,
      sentMs,
      signature,
      requestTimeout: timedOut,
      responseStatusCode: status,
      requestDurationMs: Math.round(performance.now() - startedReal),
      attempt,
      content: n.body,
      seq: this.options.nextSeq(),
    };
    partner.logs.push(log);
    webhook.lastAnalyzedMs = clock.nowMs();
    webhook.status = ok ? 'Healthy' : timedOut ? 'TimeOut' : 'Unhealthy';
    const delay = this.options.retryDelaysMs[attempt - 1];
    if (!ok && delay !== undefined && partner.webhooks.get(webhook.webhookId) === webhook) {
      this.retries.push({ dueMs: clock.nowMs() + delay, partner, webhook, notification: n, attempt: attempt + 1 });
    }
    logger.debug({ webhookId: webhook.webhookId, eventId: n.event.id, attempt, status, ok }, 'webhook attempt');
  }
}
