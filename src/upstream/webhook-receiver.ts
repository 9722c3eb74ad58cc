import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log.js';
import { guardConnections } from '../http/admission.js';
import { guardClientErrors, refusalLog } from '../http/client-errors.js';
import { parseRequestTarget } from '../http/request-target.js';
import { readCappedBody } from '../http/capped-body.js';
import { verifySignature } from '../spark/webhook-signature.js';
import type { EventIntake } from './port.js';
import { codeOf } from '../errors.js';
import { rateLimitedWarn } from '../log-limit.js';

export interface WebhookReceiverOptions {
  host: string;
  port: number;
  path: string;
  /** When set, every call must carry a valid `X-Payload-Signature`. */
  secret: string | null;
  maxBodyBytes: number;
  /**
   * Open connections kept; beyond it the oldest connection of the address holding the most that
   * has not sent a whole request yet is closed to make room (src/http/admission.ts).
   */
  maxConnections: number;
  /** Open connections kept per peer address (default an eighth of maxConnections, at least 4). */
  maxConnectionsPerAddress?: number;
  /** Time a client has to send its headers, and then (from the end of its headers) its body, ms (default 2000 and 5000). */
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
  const refusedHttp = refusalLog(log);
  const refuseHttp = (kind: string, fields?: Record<string, unknown>): void => {
    deps.onRefused?.('HTTP_REQUEST_INVALID');
    refusedHttp(kind, fields);
  };
  const refuse = (res: ServerResponse, status: number, why: string, code: string): void => {
    rejected++;
    deps.onRefused?.(code);
    warn(code, { status }, `webhook call refused: ${why}`);
    reply(res, status, why);
  };

  /** A step that throws is a defect, not input: answered 500 and logged, never the process's exception. */
  const safely = (res: ServerResponse, step: () => void): void => {
    try {
      step();
    } catch (err) {
      failed++;
      log.error({ err, code: 'INTERNAL' }, 'webhook call failed');
      if (!res.headersSent) reply(res, 500, 'failed');
    }
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const target = parseRequestTarget(req.url);
    if (target === null) {
      rejected++;
      refuseHttp('bad-target');
      return reply(res, 400, 'bad request target');
    }
    if (target.path !== options.path) return refuse(res, 404, 'not found', 'WEBHOOK_BODY_INVALID');
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return refuse(res, 405, 'method not allowed', 'WEBHOOK_BODY_INVALID');
    }
    void readCappedBody(req, options.maxBodyBytes).then((read) =>
      safely(res, () => {
        // Nobody is left to answer; the admission deadline or the peer ended it.
        if (read.kind === 'aborted') return;
        if (read.kind === 'too-large') return refuse(res, 413, 'body too large', 'WEBHOOK_BODY_INVALID');
        const raw = read.bytes;
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
          log.error({ err, code: codeOf(err) }, 'webhook event could not be processed; answered 500 for a redelivery');
          return reply(res, 500, 'not stored');
        }
        if (outcome === 'unstored') {
          failed++;
          return reply(res, 500, 'not stored');
        }
        if (outcome === 'invalid') return refuse(res, 400, 'not a notification', 'WEBHOOK_BODY_INVALID');
        accepted++;
        reply(res, 200, 'ok', true);
      }),
    );
  };

  const headersTimeout = options.headersTimeoutMs ?? 2_000;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? 5_000;
  const server: Server = createServer(
    // The whole-request bound stands behind the body deadline that admission sets per request.
    { headersTimeout, requestTimeout: headersTimeout + bodyTimeoutMs + 1_000, connectionsCheckingInterval: 500 },
    (req, res) => safely(res, () => handle(req, res)),
  );
  server.keepAliveTimeout = 1_000;
  guardClientErrors(server, refuseHttp);
  const admission = guardConnections(server, {
    maxConnections: options.maxConnections,
    maxPerAddress: options.maxConnectionsPerAddress ?? Math.max(4, Math.floor(options.maxConnections / 8)),
    bodyTimeoutMs,
    onRefused: refuseHttp,
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
    stats: () => ({ accepted, rejected, failed, evicted: admission.stats().evicted }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
