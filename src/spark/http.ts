/**
 * The one HTTP path of the Spark clients, on undici: the shared pool of `connection.ts` (keep-alive,
 * connect/headers/body timeouts, response size limit) and undici's retry interceptor, whose retry
 * decision is ours: network errors and 429/502/503/504 (honouring `Retry-After`) for idempotent
 * requests, a POST only when the error proves it never left. Waits between attempts go through
 * the injected {@link Clock}. One token refresh and retry on 401, zod parsing of responses,
 * stable error codes.
 */
import { interceptors, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { WattshiftError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import { createSparkConnection, type HttpTimeoutsMs, type SparkConnection } from './connection.js';
import { request } from './request.js';
import { parseResponse, parseRetryAfter, statusError, type HttpResult } from './http-answers.js';
import { backoffMs } from '../timing/backoff.js';

export type { HttpTimeoutsMs } from './connection.js';
export { hasStatus, parseResponse, parseRetryAfter, serverMessage, type HttpResult } from './http-answers.js';

/** Retry policy. */
export interface RetryOptions {
  /** Total attempts per request, including the first. Default 4. */
  attempts?: number;
  /** Backoff before the 2nd attempt; doubles each time. Default 500. */
  baseDelayMs?: number;
  /** Upper bound of one backoff. Default 30 000. */
  maxDelayMs?: number;
  /** A `Retry-After` longer than this is not waited for: the request fails at once. Default 300 000. */
  maxRetryAfterMs?: number;
  /** Random source in [0, 1) for jitter; `Math.random` by default (tests pass a fixed one). */
  random?: () => number;
}

/** Supplies bearer tokens; see `createTokenSource` in `oauth.ts`. */
export interface TokenSource {
  /** A valid access token (cached; fetched or refreshed when needed). */
  getToken(signal?: AbortSignal): Promise<string>;
  /** Drops `token` (or whatever is cached) so the next `getToken` fetches a new one. */
  invalidate(token?: string): void;
}

export interface HttpOptions {
  /** Base URL that request paths are appended to, e.g. `https://host/energy-coordination/v1`. */
  baseUrl: string;
  clock: Clock;
  logger: Logger;
  /** The shared pool; without it the transport makes (and closes) its own from the options below. */
  connection?: SparkConnection;
  timeoutsMs?: HttpTimeoutsMs;
  /** A larger response body fails with API_BAD_RESPONSE. Default 2 MiB. */
  maxResponseBytes?: number;
  /** Forward proxy URL for an own pool. */
  proxyUrl?: string;
  retry?: RetryOptions;
  /** Bearer tokens for requests with `auth: true`. */
  tokens?: TokenSource;
  /** Sent as `User-Agent`. */
  userAgent?: string;
}

export type QueryValue = string | number | boolean | null | undefined;

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below the base URL, starting with `/`; ids must already be encoded. */
  path: string;
  query?: Record<string, QueryValue>;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as `application/x-www-form-urlencoded`. */
  form?: Record<string, string>;
  /** Whether to send a bearer token (default true). */
  auth?: boolean;
  /**
   * Whether repeating the request after a network error is harmless. GET, PUT and DELETE always
   * are; POST and PATCH are only retried on errors that prove the request was not sent
   * (connection refused, connect timeout, DNS), unless this is true.
   */
  idempotent?: boolean;
  /** Short operation name for logs and error details, e.g. `createUser`. */
  operation: string;
  signal?: AbortSignal;
}

export interface HttpTransport {
  /** Sends `req`; resolves on 2xx, otherwise rejects with a {@link WattshiftError}. */
  send(req: HttpRequest): Promise<HttpResult>;
  /** Sends `req` and parses the JSON body with `schema` (API_BAD_RESPONSE on a mismatch). */
  sendJson<S extends z.ZodType>(req: HttpRequest, schema: S): Promise<z.infer<S>>;
  /** Closes the transport's keep-alive connections (only those of its own pool). */
  close(): Promise<void>;
}

type RetryCallback = (err?: Error | null) => void;
type RetryContext = { state: { counter: number }; opts: Dispatcher.DispatchOptions };

const retryStatuses = new Set([429, 502, 503, 504]);
/** undici's codes for failures before any byte of the request could reach the server. */
const notSentCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);
/** The names these failures had before undici, kept so log searches and alerts stay valid. */
const stableCodes: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'CONNECT_TIMEOUT',
  UND_ERR_HEADERS_TIMEOUT: 'HEADERS_TIMEOUT',
  UND_ERR_BODY_TIMEOUT: 'BODY_TIMEOUT',
  UND_ERR_SOCKET: 'ECONNRESET',
};
const tooLargeCode = 'UND_ERR_RES_EXCEEDED_MAX_SIZE';

export function createHttpTransport(options: HttpOptions): HttpTransport {
  const log = options.logger.child({ component: 'spark-http' });
  const retry = { attempts: 4, baseDelayMs: 500, maxDelayMs: 30_000, maxRetryAfterMs: 300_000, random: Math.random, ...options.retry };
  const own = options.connection ? undefined : createSparkConnection(options);
  const connection = options.connection ?? own!;
  const base = options.baseUrl.replace(/\/+$/, '');
  const nextDelayMs = (attempt: number): number => backoffMs(attempt, { baseMs: retry.baseDelayMs, maxMs: retry.maxDelayMs }, retry.random);

  function buildUrl(req: HttpRequest): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined && v !== null) params.set(k, String(v));
    const qs = params.toString();
    return `${base}${req.path}${qs ? `?${qs}` : ''}`;
  }

  function requestBody(req: HttpRequest, headers: Record<string, string>): string | undefined {
    if (req.json !== undefined) {
      headers['content-type'] = 'application/json';
      return JSON.stringify(req.json);
    }
    if (req.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      return new URLSearchParams(req.form).toString();
    }
    return undefined;
  }

  /** One call with undici's retries; the outcome carries how many attempts it took. */
  async function attempt(req: HttpRequest, token: string | undefined): Promise<{ res?: HttpResult; err?: unknown; attempts: number }> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (options.userAgent) headers['user-agent'] = options.userAgent;
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const body = requestBody(req, headers);
    const detail = { operation: req.operation, method: req.method, path: req.path };
    const repeatable = req.method === 'GET' || req.method === 'PUT' || req.method === 'DELETE' || req.idempotent === true;
    let attempts = 1;
    // A failure after the headers arrived is final: undici would resume with a Range request, which the API does not serve.
    let headersSeen = false;

    const decide = (
      err: Error & { statusCode?: number; headers?: Record<string, string | string[] | undefined> },
      ctx: RetryContext,
      done: RetryCallback,
    ): void => {
      attempts = ctx.state.counter;
      const giveUp = (): void => done(err);
      if (req.signal?.aborted || headersSeen || attempts >= retry.attempts) return giveUp();
      let delayMs: number;
      if (err.statusCode !== undefined) {
        if (!retryStatuses.has(err.statusCode)) return giveUp();
        const retryAfterMs = parseRetryAfter(err.headers?.['retry-after'], options.clock.nowMs());
        if (retryAfterMs !== undefined && retryAfterMs > retry.maxRetryAfterMs) return giveUp();
        delayMs = retryAfterMs ?? nextDelayMs(attempts);
        log.debug({ ...detail, attempt: attempts, delayMs, status: err.statusCode }, 'retryable status; retrying');
      } else {
        const code = rawErrorCode(err);
        if (code === tooLargeCode || !(repeatable || notSentCodes.has(code))) return giveUp();
        delayMs = nextDelayMs(attempts);
        log.debug({ ...detail, attempt: attempts, delayMs, errorCode: stableCode(code) }, 'network error; retrying');
      }
      options.clock.sleep(delayMs, req.signal).then(
        () => done(null),
        (e: unknown) => done(e instanceof Error ? e : err),
      );
    };

    const dispatcher = connection.dispatcher.compose(interceptors.retry({ retry: decide as never, throwOnError: false }));
    try {
      const res = await request(buildUrl(req), { dispatcher, method: req.method, headers, body, signal: req.signal });
      headersSeen = true;
      // undici's limit counts bytes as they come; a declared length over it fails before the first one.
      if (Number(res.headers['content-length']) > connection.maxResponseBytes) {
        res.body.destroy();
        return { err: Object.assign(new Error('declared content-length over the limit'), { code: tooLargeCode }), attempts };
      }
      const text = await res.body.text();
      return { res: { status: res.statusCode, headers: res.headers, text }, attempts };
    } catch (err) {
      return { err, attempts };
    }
  }

  async function send(req: HttpRequest): Promise<HttpResult> {
    const auth = req.auth ?? true;
    if (auth && !options.tokens) throw new WattshiftError('INTERNAL', 'spark http: auth requested without a token source');
    const detail = { operation: req.operation, method: req.method, path: req.path };
    req.signal?.throwIfAborted();
    for (let refreshed = false; ; refreshed = true) {
      const token = auth ? await options.tokens!.getToken(req.signal) : undefined;
      const { res, err, attempts } = await attempt(req, token);
      if (!res) {
        if (req.signal?.aborted) throw req.signal.reason ?? err;
        const code = rawErrorCode(err);
        if (code === tooLargeCode) {
          throw new WattshiftError(
            'API_BAD_RESPONSE',
            `${req.operation}: ${req.method} ${req.path}: the response body exceeds ${connection.maxResponseBytes} bytes`,
            {
              cause: err,
              details: { ...detail, maxResponseBytes: connection.maxResponseBytes },
            },
          );
        }
        throw new WattshiftError('API_UNAVAILABLE', `${req.operation}: ${req.method} ${req.path} failed: ${stableCode(code)}`, {
          cause: err,
          details: { ...detail, networkError: stableCode(code), attempts },
        });
      }
      if (res.status >= 200 && res.status < 300) return res;
      if (res.status === 401 && auth && !refreshed) {
        options.tokens!.invalidate(token);
        log.debug(detail, '401; refreshing the token and retrying once');
        continue;
      }
      throw statusError(req, res, attempts);
    }
  }

  return {
    send,
    async sendJson(req, schema) {
      const res = await send(req);
      return parseResponse(schema, res, req.operation);
    },
    close: () => own?.close() ?? Promise.resolve(),
  };
}

/** The code a failed request carries (undici's or the system's), or its name. */
function rawErrorCode(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as { code?: unknown; name?: unknown; cause?: unknown };
    if (typeof e.code === 'string') return e.code;
    if (e.cause) return rawErrorCode(e.cause);
    if (typeof e.name === 'string') return e.name;
  }
  return 'UNKNOWN';
}

const stableCode = (code: string): string => stableCodes[code] ?? code;
