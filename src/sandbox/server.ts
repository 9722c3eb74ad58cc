import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../clock.js';
import { silentLogger, type Logger } from '../log.js';
import type { Clock } from '../ports.js';
import { defaultCredentials, TokenService, type PartnerCredentials } from './auth.js';
import { SandboxEngine } from './engine.js';
import { badRequest, empty, problem, ReplyError, Router, zodErrors, type Reply, type Route } from './http-kit.js';
import { defaultNeighbourhoods, type Neighbourhood } from './neighbourhoods.js';
import { forecastRoutes } from './routes-forecast.js';
import { programRoutes } from './routes-program.js';
import { simulationRoutes } from './routes-simulation.js';
import { userRoutes } from './routes-users.js';
import { webhookRoutes } from './routes-webhooks.js';
import { compactPath, weatherBasePath, weatherReply } from './routes-weather.js';
import type { AcceptedPlanReport, AcceptedReport, EventRec } from './state.js';
import { localTimeToUtcMs } from '../core/zoned-time.js';
import { parseRequestTarget } from '../http/request-target.js';
import { readCappedBody } from '../http/capped-body.js';

/**
 * A faithful local sandbox of the Energy Coordination API (`/energy-coordination/v1`), its
 * token endpoint (`/connect/token`) and the forecast price service (`/smart/v1`), on node:http
 * (no framework: about thirty routes need no more than the small router in http-kit.ts).
 */

export const ecBasePath = '/energy-coordination/v1';
export const smartBasePath = '/smart/v1';

export interface SandboxOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  clock?: Clock;
  seed?: number;
  partners?: PartnerCredentials[];
  neighbourhoods?: Neighbourhood[];
  logger?: Logger;
  /** Clock-time delays before webhook retries 1..3 (default 1, 2, 4 minutes). */
  webhookRetryDelaysMs?: number[];
  /** Real-time limit of one webhook attempt (default 10 s). */
  webhookTimeoutMs?: number;
  /** Eligibility batch window, clock time (default 10 minutes). */
  eligibilityBatchMs?: number;
  /** Request body limit in bytes (default 1 MiB); larger bodies get 413. */
  bodyLimitBytes?: number;
  /** Access token lifetime (default 3600 s). */
  tokenTtlSeconds?: number;
  /** Price curves switch from EUR to local currency at this instant (default 2025-06-01 Oslo). */
  localCurrencyFromMs?: number;
  /** Run the scheduler by itself on the clock (default true); tests may call tick() instead. */
  autoTick?: boolean;
}

export interface ResponseRecord {
  service: 'ec' | 'smart' | 'auth' | 'weather' | 'none';
  method: string;
  /** The path as requested, without the query. */
  path: string;
  /** The matched route pattern relative to the service base (e.g. `/users/{userId}`). */
  pattern: string | undefined;
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Sandbox {
  /** `http://host:port/energy-coordination/v1` */
  baseUrl: string;
  /** Origin of the token endpoint: POST `${authUrl}/connect/token`. */
  authUrl: string;
  /** `http://host:port/smart/v1` */
  forecastUrl: string;
  /** `http://host:port/weatherapi/locationforecast/2.0/compact` (MET Norway's, without a token). */
  weatherUrl: string;
  credentials: PartnerCredentials[];
  clock: Clock;
  /** Runs what is due on the clock (eligibility batch, daily curves, webhook retries). */
  tick(): Promise<void>;
  close(): Promise<void>;
  // ---- test hooks
  engine: SandboxEngine;
  acceptedReports(clientId?: string): AcceptedReport[];
  /** Accepted location energy usage plans (reports without an event). */
  acceptedPlanReports(clientId?: string): AcceptedPlanReport[];
  events(clientId?: string): EventRec[];
  tokensIssued(clientId?: string): number;
  onResponse(listener: (r: ResponseRecord) => void): () => void;
  /**
   * Requests being handled now. Their work is partly off the event loop (a token's signature on
   * WebCrypto), where the simulation kernel cannot see it, so it asks here.
   */
  requestsInFlight(): number;
  setNeighbourhoods(areas: Neighbourhood[]): void;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const clock = options.clock ?? systemClock;
  const logger = (options.logger ?? silentLogger()).child({ component: 'sandbox' });
  const partners = options.partners && options.partners.length > 0 ? options.partners : [defaultCredentials];
  const bodyLimit = options.bodyLimitBytes ?? 1024 * 1024;
  const engine = new SandboxEngine({
    clock,
    seed: options.seed ?? 1,
    neighbourhoods: options.neighbourhoods ?? defaultNeighbourhoods.map((n) => ({ ...n })),
    logger,
    webhookRetryDelaysMs: options.webhookRetryDelaysMs ?? [60_000, 120_000, 240_000],
    webhookTimeoutMs: options.webhookTimeoutMs ?? 10_000,
    eligibilityBatchMs: options.eligibilityBatchMs ?? 600_000,
    localCurrencyFromMs: options.localCurrencyFromMs ?? localTimeToUtcMs(2025, 6, 1, 0),
    dailyCurveHour: 13,
  });
  const ecRouter = new Router([...userRoutes(engine), ...programRoutes(engine), ...webhookRoutes(engine), ...simulationRoutes(engine)]);
  const smartRouter = new Router(forecastRoutes(engine));
  const listeners = new Set<(r: ResponseRecord) => void>();
  // The issuer is fixed (not the origin): the port is only known after listen().
  const tokens = new TokenService(partners, clock, 'wattshift-sandbox', options.tokenTtlSeconds ?? 3600);

  let handling = 0;
  const server: Server = createServer((req, res) => {
    handling++;
    handle(req, res)
      .catch((err: unknown) => {
        logger.error({ err: String(err) }, 'request failed');
        if (!res.headersSent) send(req, res, problem(500, 'Internal error'), 'none', undefined);
      })
      .finally(() => {
        handling--;
      });
  });

  const send = (req: IncomingMessage, res: ServerResponse, reply: Reply, service: ResponseRecord['service'], pattern: string | undefined): void => {
    const text = reply.body === undefined ? '' : JSON.stringify(reply.body);
    const headers: Record<string, string> = { ...(reply.headers ?? {}) };
    if (text !== '') headers['content-type'] = reply.contentType ?? 'application/json; charset=utf-8';
    headers['content-length'] = String(Buffer.byteLength(text));
    res.writeHead(reply.status, headers);
    res.end(text);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    for (const l of listeners) l({ service, method: req.method ?? 'GET', path, pattern, status: reply.status, headers, body: text });
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = parseRequestTarget(req.url);
    if (target === null) return send(req, res, problem(400, 'Bad Request', undefined, 'The request target is not a path'), 'none', undefined);
    // A checked path on a fixed origin: `//name` stays a path, and nothing here can throw.
    const url = new URL(`http://sandbox${target.path}${target.query === '' ? '' : `?${target.query}`}`);
    const method = (req.method ?? 'GET').toUpperCase();
    const lower = url.pathname.toLowerCase();
    if (lower === '/connect/token') {
      if (method !== 'POST') return send(req, res, { ...problem(405, 'Method Not Allowed'), headers: { allow: 'POST' } }, 'auth', '/connect/token');
      const read = await readCappedBody(req, bodyLimit);
      if (read.kind === 'aborted') return;
      if (read.kind === 'too-large') return send(req, res, problem(413, 'Payload Too Large'), 'auth', '/connect/token');
      const raw = read.bytes;
      const reply = await tokens.handleTokenRequest(new URLSearchParams(raw.toString('utf8')), req.headers.authorization);
      return send(req, res, reply, 'auth', '/connect/token');
    }
    if (lower.startsWith(weatherBasePath + '/'))
      return send(req, res, weatherReply(req, method, url, clock, options.seed ?? 1), 'weather', url.pathname);
    const service = lower.startsWith(ecBasePath + '/') ? 'ec' : lower.startsWith(smartBasePath + '/') ? 'smart' : 'none';
    if (service === 'none') return send(req, res, problem(404, 'Not Found', undefined, `No route for ${url.pathname}`), 'none', undefined);
    const rel = url.pathname.slice(service === 'ec' ? ecBasePath.length : smartBasePath.length);
    const match = (service === 'ec' ? ecRouter : smartRouter).match(method, rel);
    if (match.kind === 'none') return send(req, res, problem(404, 'Not Found', undefined, `No route for ${url.pathname}`), service, undefined);
    if (match.kind === 'method')
      return send(req, res, { ...problem(405, 'Method Not Allowed'), headers: { allow: match.allow.join(', ') } }, service, undefined);
    const route: Route = match.route;
    const clientId = await tokens.verify(req.headers.authorization);
    if (!clientId) return send(req, res, { ...empty(401), headers: { 'www-authenticate': 'Bearer error="invalid_token"' } }, service, route.pattern);
    const read = await readCappedBody(req, bodyLimit);
    if (read.kind === 'aborted') return;
    if (read.kind === 'too-large')
      return send(req, res, problem(413, 'Payload Too Large', undefined, `The request body exceeds ${bodyLimit} bytes`), service, route.pattern);
    const raw = read.bytes;
    let body: unknown;
    if (route.body !== undefined && route.body !== 'none' && route.body !== 'form') {
      const text = raw.toString('utf8');
      if (text.trim() === '') return send(req, res, badRequest(route.errors, 'A non-empty request body is required.'), service, route.pattern);
      try {
        body = JSON.parse(text);
      } catch (err) {
        return send(
          req,
          res,
          badRequest(route.errors, `The JSON value could not be parsed: ${err instanceof Error ? err.message : String(err)}`),
          service,
          route.pattern,
        );
      }
      const parsed = route.body.safeParse(body);
      if (!parsed.success) {
        const errors = zodErrors(parsed.error);
        const reply =
          route.errors === 'problem'
            ? problem(400, 'One or more validation errors occurred.', errors)
            : badRequest(
                route.errors,
                Object.entries(errors)
                  .map(([k, v]) => `${k}: ${v.join('; ')}`)
                  .join(' | '),
              );
        return send(req, res, reply, service, route.pattern);
      }
      body = parsed.data;
    }
    let reply: Reply;
    try {
      reply = await route.handler({ req, method, path: rel, params: match.params, query: url.searchParams, clientId, body, rawBody: raw });
    } catch (err) {
      if (!(err instanceof ReplyError)) throw err;
      reply = err.reply;
    }
    send(req, res, reply, service, route.pattern);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const origin = `http://${host}:${address.port}`;

  const abort = new AbortController();
  let closed = false;
  const loop = async (): Promise<void> => {
    while (!closed) {
      const wait = Math.min(60_000, Math.max(1_000, engine.nextDueMs() - clock.nowMs()));
      try {
        await clock.sleep(wait, abort.signal);
      } catch {
        return;
      }
      if (!closed) await engine.tick().catch((err: unknown) => logger.error({ err: String(err) }, 'tick failed'));
    }
  };
  const loopDone = options.autoTick === false ? Promise.resolve() : loop();
  logger.info({ baseUrl: origin + ecBasePath }, 'sandbox listening');

  const first = (clientId?: string): string => clientId ?? partners[0]?.clientId ?? defaultCredentials.clientId;
  return {
    baseUrl: origin + ecBasePath,
    authUrl: origin,
    forecastUrl: origin + smartBasePath,
    weatherUrl: origin + compactPath,
    credentials: partners.map((p) => ({ ...p })),
    clock,
    engine,
    tick: () => engine.tick(),
    close: async () => {
      closed = true;
      abort.abort(new Error('sandbox closed'));
      await loopDone;
      await engine.settle();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
    acceptedReports: (clientId) => [...engine.partner(first(clientId)).reports],
    acceptedPlanReports: (clientId) => [...engine.partner(first(clientId)).planReports],
    events: (clientId) => [...engine.partner(first(clientId)).events],
    tokensIssued: (clientId) => tokens.issued.get(first(clientId)) ?? 0,
    requestsInFlight: () => handling,
    onResponse: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    setNeighbourhoods: (areas) => engine.setNeighbourhoods(areas),
  };
}
