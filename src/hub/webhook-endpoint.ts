/**
 * The hub's one public webhook endpoint for the whole fleet. The raw body's HMAC is checked
 * (`src/spark/webhook-signature.ts`, as the daemon does), the notification parsed, and the answer
 * is 200 only once the event is stored and published, so the API delivers it again otherwise.
 * The same server answers `GET /healthz` with the instance's health (200, or 503 when unhealthy).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log.js';
import { codeOf } from '../errors.js';
import { rateLimitedWarn } from '../log-limit.js';
import { guardConnections } from '../http/admission.js';
import { guardClientErrors, refusalLog } from '../http/client-errors.js';
import { parseRequestTarget } from '../http/request-target.js';
import { readCappedBody } from '../http/capped-body.js';
import { eventNotificationSchema } from '../spark/wire.js';
import { signatureHeader, verifySignature } from '../spark/webhook-signature.js';
import type { EventFanout } from './event-fanout.js';
import type { HubHealth } from './health.js';

export interface WebhookEndpointOptions {
  host: string;
  port: number;
  path: string;
  secret: string;
  maxBodyBytes: number;
}

export interface WebhookEndpoint {
  readonly url: string;
  close(): Promise<void>;
}

const answer = (res: ServerResponse, status: number, text: string): void => {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...(status === 200 ? {} : { connection: 'close' }) });
  res.end(text);
};

/**
 * Connections the endpoint keeps, in all and per address. The API delivers a fleet's events in
 * parallel, so an address gets a larger share than on a gateway; a slow body still ends at the deadline.
 */
const admissionLimits = { maxConnections: 1024, maxPerAddress: 128, bodyTimeoutMs: 5_000 };

export async function startWebhookEndpoint(
  options: WebhookEndpointOptions,
  deps: { fanout: EventFanout; health: () => Promise<HubHealth>; logger: Logger },
): Promise<WebhookEndpoint> {
  const log = deps.logger.child({ component: 'hub-webhook' });
  const warn = rateLimitedWarn(log);
  const refused = refusalLog(log);
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const target = parseRequestTarget(req.url);
    if (target === null) {
      refused('bad-target');
      return answer(res, 400, 'bad request target');
    }
    const path = target.path;
    if (path === '/healthz' && req.method === 'GET') {
      const health = await deps.health();
      res.writeHead(health.ok ? 200 : 503, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
      return void res.end(JSON.stringify(health));
    }
    if (path !== options.path || req.method !== 'POST') {
      warn('WEBHOOK_BODY_INVALID', { method: req.method }, 'webhook call refused: not a POST to the webhook path');
      return answer(res, 404, 'not found');
    }
    const read = await readCappedBody(req, options.maxBodyBytes);
    // Nobody is left to answer; the admission deadline or the peer ended it.
    if (read.kind === 'aborted') return;
    if (read.kind === 'too-large') {
      warn('WEBHOOK_BODY_INVALID', {}, 'webhook call refused: body too large');
      return answer(res, 413, 'body too large');
    }
    const raw = read.bytes;
    const header = req.headers[signatureHeader];
    if (!verifySignature(raw, Array.isArray(header) ? header[0] : header, options.secret)) {
      warn('WEBHOOK_SIGNATURE_INVALID', {}, 'webhook call refused: invalid signature');
      return answer(res, 401, 'invalid signature');
    }
    let notification;
    try {
      notification = eventNotificationSchema.parse(JSON.parse(raw.toString('utf8')));
    } catch {
      warn('WEBHOOK_BODY_INVALID', {}, 'webhook call refused: not an event notification');
      return answer(res, 400, 'not a notification');
    }
    try {
      await deps.fanout.accept({ id: notification.eventId, createdAt: notification.eventCreatedAtUtc, payload: notification.payload });
      answer(res, 200, 'ok');
    } catch (err) {
      log.error(
        { err, code: codeOf(err, 'STORE_FAILED'), eventId: notification.eventId },
        'webhook event not stored or not published; answered 500 for a redelivery',
      );
      answer(res, 500, 'not stored');
    }
  };
  const server = createServer({ headersTimeout: 5_000, requestTimeout: 15_000 }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error({ err, code: 'INTERNAL' }, 'webhook call failed');
      if (!res.headersSent) answer(res, 500, 'failed');
    });
  });
  guardClientErrors(server, refused);
  guardConnections(server, { ...admissionLimits, onRefused: refused });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host}:${port}${options.path}`;
  log.info({ url }, 'hub webhook endpoint listening');
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
