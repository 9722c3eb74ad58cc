import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from '../log.js';
import { verifySignature } from '../spark/webhook-signature.js';
import type { EventIntake } from './event-intake.js';
import { isWattshiftError } from '../errors.js';
import { rateLimitedWarn } from '../log-limit.js';

export interface WebhookReceiverOptions {
  host: string;
  port: number;
  path: string;
  /** When set, every call must carry a valid `X-Payload-Signature`. */
  secret: string | null;
  maxBodyBytes: number;
  /**
   * Open connections kept; beyond it the oldest connection that has not sent a whole request yet
   * is closed to make room, so slow-header sockets cannot starve genuine deliveries.
   */
  maxConnections: number;
  /** Time a client has to send its headers, and then its body, ms (default 2000 and 5000). */
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
}

export interface WebhookReceiver {
  readonly url: string;
  /** accepted: stored (or known); rejected: refused input; failed: could not be stored (500); evicted: idle sockets closed for room. */
  stats(): { accepted: number; rejected: number; failed: number; evicted: number };
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
 * bytes, the event is stored and only then answered 200 (the webhook document's code). When it
 * cannot be stored the answer is 500, so the API delivers it again; the intake still acts on it
 * in memory. Rejected calls change nothing.
 */
export async function startWebhookReceiver(
  options: WebhookReceiverOptions,
  deps: { intake: EventIntake; logger: Logger; onRefused?: (code: string) => void },
): Promise<WebhookReceiver> {
  const log = deps.logger.child({ component: 'webhook' });
  const warn = rateLimitedWarn(log);
  let accepted = 0;
  let rejected = 0;
  let failed = 0;
  let evicted = 0;
  const refuse = (res: ServerResponse, status: number, why: string, code: string): void => {
    rejected++;
    deps.onRefused?.(code);
    warn(code, { status }, `webhook call refused: ${why}`);
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
      let outcome: string;
      try {
        outcome = deps.intake.accept(body, 'notification', raw.toString('utf8')).outcome;
      } catch (err) {
        failed++;
        log.error({ err, code: isWattshiftError(err) ? err.code : 'INTERNAL' }, 'webhook event could not be processed; answered 500 for a redelivery');
        return reply(res, 500, 'not stored');
      }
      if (outcome === 'unstored') {
        failed++;
        return reply(res, 500, 'not stored');
      }
      if (outcome === 'invalid') return refuse(res, 400, 'not a notification', 'WEBHOOK_BODY_INVALID');
      accepted++;
      reply(res, 200, 'ok', true);
    });
  };

  const headersTimeout = options.headersTimeoutMs ?? 2_000;
  const server: Server = createServer(
    { headersTimeout, requestTimeout: headersTimeout + (options.bodyTimeoutMs ?? 5_000), connectionsCheckingInterval: 500 },
    handle,
  );
  server.keepAliveTimeout = 1_000;
  // Sockets in arrival order, each marked once a whole request arrived on it.
  const sockets = new Map<Socket, { busy: boolean }>();
  server.on('connection', (socket: Socket) => {
    if (sockets.size >= options.maxConnections) {
      const idle = [...sockets].find(([, s]) => !s.busy);
      if (idle) {
        evicted++;
        idle[0].destroy();
        sockets.delete(idle[0]);
      } else {
        socket.destroy();
        return;
      }
    }
    sockets.set(socket, { busy: false });
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const entry = sockets.get(req.socket);
    if (!entry) return;
    entry.busy = true;
    res.once('finish', () => (entry.busy = false));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}${options.path}`;
  log.info({ url }, 'webhook receiver listening');
  return {
    url,
    stats: () => ({ accepted, rejected, failed, evicted }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
