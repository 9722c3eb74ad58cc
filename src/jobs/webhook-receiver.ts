import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log.js';
import { verifySignature } from '../spark/webhook-signature.js';
import type { EventIntake } from './event-intake.js';
import { isWattshiftError } from '../errors.js';

export interface WebhookReceiverOptions {
  host: string;
  port: number;
  path: string;
  /** When set, every call must carry a valid `X-Payload-Signature`. */
  secret: string | null;
  maxBodyBytes: number;
  maxConnections: number;
}

export interface WebhookReceiver {
  readonly url: string;
  stats(): { accepted: number; rejected: number };
  close(): Promise<void>;
}

function reply(res: ServerResponse, status: number, text: string, keepAlive = false): void {
  const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8' };
  // Refused calls close the connection (their body may be unread); accepted ones may reuse it.
  if (!keepAlive) headers.connection = 'close';
  res.writeHead(status, headers);
  res.end(text);
}

/**
 * Receives webhook notifications: the body is read raw (capped), its HMAC is checked on the raw
 * bytes, the call is answered at once and the event is processed right after the answer.
 * Rejected calls change nothing.
 */
export async function startWebhookReceiver(
  options: WebhookReceiverOptions,
  deps: { intake: EventIntake; logger: Logger },
): Promise<WebhookReceiver> {
  const log = deps.logger.child({ component: 'webhook' });
  let accepted = 0;
  let rejected = 0;
  const refuse = (res: ServerResponse, status: number, why: string, code: string): void => {
    rejected++;
    log.warn({ code, status }, `webhook call refused: ${why}`);
    reply(res, status, why);
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== options.path) return refuse(res, 404, 'not found', 'WEBHOOK_BODY_INVALID');
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return refuse(res, 405, 'method not allowed', 'WEBHOOK_BODY_INVALID');
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > options.maxBodyBytes) {
      req.resume();
      return refuse(res, 413, 'body too large', 'WEBHOOK_BODY_INVALID');
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > options.maxBodyBytes) {
        // Answer at once and stop buffering; the rest is drained (bounded by requestTimeout) and
        // the connection closes after the answer.
        tooLarge = true;
        chunks.length = 0;
        refuse(res, 413, 'body too large', 'WEBHOOK_BODY_INVALID');
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', () => undefined);
    req.on('end', () => {
      if (tooLarge) return;
      const raw = Buffer.concat(chunks);
      const header = req.headers['x-payload-signature'];
      if (options.secret !== null && !verifySignature(raw, Array.isArray(header) ? header[0] : header, options.secret)) {
        return refuse(res, 401, 'invalid signature', 'WEBHOOK_SIGNATURE_INVALID');
      }
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return refuse(res, 400, 'malformed JSON', 'WEBHOOK_BODY_INVALID');
      }
      accepted++;
      reply(res, 202, 'accepted', true);
      // Processing happens after the answer so the sender never waits on the store or planner.
      // A failure here (store full, read-only...) is logged; the event can still be polled.
      setImmediate(() => {
        try {
          const { outcome } = deps.intake.accept(body, 'notification', raw.toString('utf8'));
          if (outcome === 'invalid') log.warn({ code: 'WEBHOOK_BODY_INVALID' }, 'signed webhook body did not parse as a notification');
        } catch (err) {
          log.error({ err, code: isWattshiftError(err) ? err.code : 'INTERNAL' }, 'processing an accepted webhook call failed');
        }
      });
    });
  };

  const server: Server = createServer({ requestTimeout: 10_000, headersTimeout: 5_000 }, handle);
  server.maxConnections = options.maxConnections;
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}${options.path}`;
  log.info({ url }, 'webhook receiver listening');
  return {
    url,
    stats: () => ({ accepted, rejected }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
