/**
 * What the Spark clients make of an answer: the JSON body parsed with its schema, the server's own
 * message, `Retry-After`, and the stable error code of a status.
 */
import type { z } from 'zod';
import { WattshiftError, isWattshiftError, type ErrorCode } from '../errors.js';
import { problemDetailsSchema } from './wire.js';

/** A response that passed the status checks. */
export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
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

/** What names a request in an error (an `HttpRequest` of http.ts). */
interface RequestNames {
  operation: string;
  method: string;
  path: string;
}

export function statusError(req: RequestNames, res: HttpResult, attempts: number): WattshiftError {
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
