/**
 * The one HTTP path of the Spark clients: node:http/https (`node-request.ts` says why not undici)
 * with connect/headers/body timeouts, a response size cap, retries with exponential backoff and
 * jitter (network errors, 429 honouring `Retry-After`, 502/503/504), one token refresh and retry
 * on 401, zod parsing of responses, and stable error codes.
 * Every wait goes through the injected {@link Clock}.
 */
import type { z } from 'zod';
import { WattshiftError, isWattshiftError, type ErrorCode } from '../errors.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import { createKeepAliveAgent, defaultMaxBodyBytes, nodeRequest, RequestError, type RequestTimeoutsMs } from './node-request.js';
import { problemDetailsSchema } from './wire.js';

/** Timeouts of one HTTP attempt in milliseconds (connect, headers, body idle); defaults 10 s, 30 s, 30 s. */
export type HttpTimeoutsMs = RequestTimeoutsMs;

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
  timeoutsMs?: HttpTimeoutsMs;
  /** A larger response body fails with API_BAD_RESPONSE. Default 2 MiB. */
  maxResponseBytes?: number;
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

/** A response that passed the status checks. */
export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface HttpTransport {
  /** Sends `req`; resolves on 2xx, otherwise rejects with a {@link WattshiftError}. */
  send(req: HttpRequest): Promise<HttpResult>;
  /** Sends `req` and parses the JSON body with `schema` (API_BAD_RESPONSE on a mismatch). */
  sendJson<S extends z.ZodType>(req: HttpRequest, schema: S): Promise<z.infer<S>>;
  /** Closes the transport's keep-alive connections. */
  close(): Promise<void>;
}

const retryStatuses = new Set([429, 502, 503, 504]);
/** Errors raised before any byte of the request could reach the server. */
const notSentCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'CONNECT_TIMEOUT']);

export function createHttpTransport(options: HttpOptions): HttpTransport {
  const log = options.logger.child({ component: 'spark-http' });
  const retry = { attempts: 4, baseDelayMs: 500, maxDelayMs: 30_000, maxRetryAfterMs: 300_000, random: Math.random, ...options.retry };
  const maxBodyBytes = options.maxResponseBytes ?? defaultMaxBodyBytes;
  const base = options.baseUrl.replace(/\/+$/, '');
  const agent = createKeepAliveAgent(base);

  function backoffMs(attempt: number): number {
    const cap = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1));
    return cap / 2 + retry.random() * (cap / 2);
  }

  function buildUrl(req: HttpRequest): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined && v !== null) params.set(k, String(v));
    const qs = params.toString();
    return `${base}${req.path}${qs ? `?${qs}` : ''}`;
  }

  function attemptOnce(req: HttpRequest, token: string | undefined): Promise<HttpResult> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (options.userAgent) headers['user-agent'] = options.userAgent;
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (req.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(req.json);
    } else if (req.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(req.form).toString();
    }
    return nodeRequest(buildUrl(req), { method: req.method, headers, body, agent, timeoutsMs: options.timeoutsMs, maxBodyBytes, signal: req.signal });
  }

  async function send(req: HttpRequest): Promise<HttpResult> {
    const auth = req.auth ?? true;
    if (auth && !options.tokens) throw new WattshiftError('INTERNAL', 'spark http: auth requested without a token source');
    const detail = { operation: req.operation, method: req.method, path: req.path };
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      const token = auth ? await options.tokens!.getToken(req.signal) : undefined;
      let res: HttpResult;
      try {
        res = await attemptOnce(req, token);
      } catch (err) {
        if (req.signal?.aborted) throw err;
        if (err instanceof RequestError && err.code === 'BODY_TOO_LARGE') {
          throw new WattshiftError('API_BAD_RESPONSE', `${req.operation}: ${req.method} ${req.path}: ${err.message}`, {
            cause: err,
            details: { ...detail, maxResponseBytes: maxBodyBytes },
          });
        }
        const code = networkErrorCode(err);
        const safe = req.method === 'GET' || req.method === 'PUT' || req.method === 'DELETE' || req.idempotent === true || notSentCodes.has(code);
        if (safe && attempt < retry.attempts) {
          const delayMs = backoffMs(attempt);
          log.debug({ ...detail, attempt, delayMs, errorCode: code }, 'network error; retrying');
          await options.clock.sleep(delayMs, req.signal);
          continue;
        }
        throw new WattshiftError('API_UNAVAILABLE', `${req.operation}: ${req.method} ${req.path} failed: ${code}`, {
          cause: err,
          details: { ...detail, networkError: code, attempts: attempt },
        });
      }
      if (res.status >= 200 && res.status < 300) return res;
      if (res.status === 401 && auth && !refreshed) {
        refreshed = true;
        options.tokens!.invalidate(token);
        log.debug(detail, '401; refreshing the token and retrying once');
        attempt--;
        continue;
      }
      if (retryStatuses.has(res.status) && attempt < retry.attempts) {
        const retryAfterMs = parseRetryAfter(res.headers['retry-after'], options.clock.nowMs());
        if (retryAfterMs === undefined || retryAfterMs <= retry.maxRetryAfterMs) {
          const delayMs = retryAfterMs ?? backoffMs(attempt);
          log.debug({ ...detail, attempt, delayMs, status: res.status }, 'retryable status; retrying');
          await options.clock.sleep(delayMs, req.signal);
          continue;
        }
      }
      throw statusError(req, res, attempt);
    }
  }

  return {
    send,
    async sendJson(req, schema) {
      const res = await send(req);
      return parseResponse(schema, res, req.operation);
    },
    close() {
      agent.destroy();
      return Promise.resolve();
    },
  };
}

/** Parses a response body as JSON with `schema`; API_BAD_RESPONSE when it is not JSON or does not match. */
export function parseResponse<S extends z.ZodType>(schema: S, res: Pick<HttpResult, 'status' | 'text'>, operation: string): z.infer<S> {
  let data: unknown;
  try {
    data = JSON.parse(res.text);
  } catch (err) {
    throw new WattshiftError('API_BAD_RESPONSE', `${operation}: response is not JSON (status ${res.status})`, {
      cause: err,
      details: { operation, status: res.status, bodyStart: res.text.slice(0, 200) },
    });
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new WattshiftError('API_BAD_RESPONSE', `${operation}: response does not match the contract: ${issues.join('; ')}`, {
      cause: parsed.error,
      details: { operation, status: res.status, issues },
    });
  }
  return parsed.data;
}

/** The error code node (or our {@link RequestError}) gave a failed request, or its name. */
function networkErrorCode(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as { code?: unknown; name?: unknown; cause?: unknown };
    if (typeof e.code === 'string') return e.code;
    if (e.cause) return networkErrorCode(e.cause);
    if (typeof e.name === 'string') return e.name;
  }
  return 'UNKNOWN';
}

/** `Retry-After` as milliseconds from now: delay-seconds or an HTTP date; undefined if absent/invalid. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  const trimmed = v.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!/[A-Za-z]/.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/** The server's message: ProblemDetails title/detail/errors, a JSON string, or plain text. */
export function serverMessage(text: string): string | undefined {
  const body = text.trim();
  if (body === '') return undefined;
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch {
    return body.slice(0, 500);
  }
  if (typeof data === 'string') return data.slice(0, 500);
  const pd = problemDetailsSchema.safeParse(data);
  if (pd.success && data !== null && typeof data === 'object' && !Array.isArray(data)) {
    const parts = [pd.data.title, pd.data.detail].filter((s): s is string => typeof s === 'string' && s !== '');
    for (const [field, msgs] of Object.entries(pd.data.errors ?? {})) parts.push(`${field}: ${msgs.join(', ')}`);
    if (parts.length > 0) return parts.join(' - ').slice(0, 500);
  }
  return body.slice(0, 500);
}

function statusError(req: HttpRequest, res: HttpResult, attempts: number): WattshiftError {
  const message = serverMessage(res.text);
  const details = { operation: req.operation, method: req.method, path: req.path, status: res.status, attempts, serverMessage: message };
  let code: ErrorCode;
  if (res.status === 401 || res.status === 403) code = 'AUTH_REJECTED';
  else if (res.status === 404) code = 'API_NOT_FOUND';
  else if (res.status === 409) code = 'API_CONFLICT';
  else if (res.status === 429 || res.status >= 500) code = 'API_UNAVAILABLE';
  else code = 'API_REJECTED';
  const suffix = message ? `: ${message}` : '';
  return new WattshiftError(code, `${req.operation}: ${req.method} ${req.path} answered ${res.status}${suffix}`, { details });
}

/** True if `err` is a WattshiftError with one of the HTTP statuses. */
export function hasStatus(err: unknown, ...statuses: number[]): boolean {
  return isWattshiftError(err) && statuses.includes(err.details?.status as number);
}
