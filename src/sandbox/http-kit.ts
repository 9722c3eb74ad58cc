import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';

/**
 * The sandbox's tiny HTTP layer: replies as values, two error styles (the OpenAPI document
 * declares `application/problem+json` HttpValidationProblemDetails on some operations and a bare
 * JSON string on others), and a router where literal segments beat parameters and literals
 * match case-insensitively (like ASP.NET routing: both `priceCurve` and `pricecurve` work).
 */

export interface Reply {
  status: number;
  /** JSON-serialised unless `raw` is set; `undefined` = empty body. */
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

/** `problem` = HttpValidationProblemDetails; `string` = a JSON string body; `empty` = no body. */
export type ErrorStyle = 'problem' | 'string' | 'empty';

export interface RequestContext<P = unknown> {
  req: IncomingMessage;
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  /** The partner (OAuth client id) when the route is authenticated. */
  clientId: string;
  body: P;
  rawBody: Buffer;
}

export interface Route {
  method: string;
  /** Pattern like `/users/{userId}/locations`; relative to the service's base path. */
  pattern: string;
  /** Shape of 400 bodies for this operation. */
  errors: ErrorStyle;
  /** Shape of 404 bodies: undefined = 404 not declared (unknown ids answer 400 instead). */
  notFound?: ErrorStyle;
  /** Request body: a zod schema (JSON body required), 'none' (ignored) or 'form'. */
  body?: z.ZodType | 'none' | 'form';
  auth?: boolean;
  handler: (ctx: RequestContext<unknown>) => Reply | Promise<Reply>;
}

type BodyOf<S> = S extends z.ZodType ? z.infer<S> : undefined;

/** Declares a route with a handler typed by its body schema. */
export function defineRoute<S extends z.ZodType | 'none' | 'form' | undefined = undefined>(
  r: Omit<Route, 'handler' | 'body'> & { body?: S; handler: (ctx: RequestContext<BodyOf<S>>) => Reply | Promise<Reply> },
): Route {
  return r as unknown as Route;
}

export const problemType400 = 'https://tools.ietf.org/html/rfc9110#section-15.5.1';

export function json(status: number, body: unknown): Reply {
  return { status, body, contentType: 'application/json; charset=utf-8' };
}

export function empty(status: number): Reply {
  return { status };
}

export function problem(status: number, title: string, errors?: Record<string, string[]>, detail?: string): Reply {
  const body: Record<string, unknown> = {
    type: status === 400 ? problemType400 : `https://httpstatuses.io/${status}`,
    title,
    status,
  };
  if (detail !== undefined) body.detail = detail;
  if (errors) body.errors = errors;
  return { status, body, contentType: 'application/problem+json; charset=utf-8' };
}

/** A 400 in the operation's declared style. `field` names the offending member for ProblemDetails. */
export function badRequest(style: ErrorStyle, message: string, field = '$'): Reply {
  if (style === 'problem') return problem(400, 'One or more validation errors occurred.', { [field]: [message] });
  if (style === 'empty') return empty(400);
  return json(400, message);
}

/** Thrown by handlers to answer with a reply from deep inside. */
export class ReplyError extends Error {
  constructor(readonly reply: Reply) {
    super(`HTTP ${reply.status}`);
  }
}

/**
 * Answer for an unknown id: 404 in the declared style when the operation declares a 404,
 * otherwise a 400 in the operation's error style (the document is followed to the letter).
 */
export function unknownId(route: Pick<Route, 'errors' | 'notFound'>, what: string, id: string): ReplyError {
  const message = `${what} '${id}' was not found`;
  if (route.notFound === 'string') return new ReplyError(json(404, message));
  if (route.notFound !== undefined) return new ReplyError(empty(404));
  return new ReplyError(badRequest(route.errors, message, what));
}

/** Flattens zod issues into `{ "path": ["message"] }`. */
export function zodErrors(error: z.ZodError): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const issue of error.issues) {
    const key = issue.path.length === 0 ? '$' : issue.path.map(String).join('.');
    (out[key] ??= []).push(issue.message);
  }
  return out;
}

interface CompiledRoute {
  route: Route;
  segments: string[];
}

export type RouteMatch = { kind: 'found'; route: Route; params: Record<string, string> } | { kind: 'method'; allow: string[] } | { kind: 'none' };

export class Router {
  private readonly compiled: CompiledRoute[] = [];

  constructor(routes: readonly Route[]) {
    for (const route of routes) this.compiled.push({ route, segments: split(route.pattern) });
  }

  match(method: string, path: string): RouteMatch {
    const parts = split(path);
    let best: { score: number[]; pattern: string; params: Record<string, string> } | undefined;
    const byPattern = new Map<string, { route: Route; params: Record<string, string> }[]>();
    for (const c of this.compiled) {
      const m = matchSegments(c.segments, parts);
      if (!m) continue;
      const list = byPattern.get(c.route.pattern) ?? [];
      list.push({ route: c.route, params: m.params });
      byPattern.set(c.route.pattern, list);
      if (!best || compareScore(m.score, best.score) > 0) best = { score: m.score, pattern: c.route.pattern, params: m.params };
    }
    if (!best) return { kind: 'none' };
    const candidates = byPattern.get(best.pattern) ?? [];
    const hit = candidates.find((c) => c.route.method === method);
    if (hit) return { kind: 'found', route: hit.route, params: hit.params };
    return { kind: 'method', allow: candidates.map((c) => c.route.method) };
  }
}

function split(path: string): string[] {
  return path.split('/').filter((s) => s.length > 0);
}

function matchSegments(pattern: string[], parts: string[]): { params: Record<string, string>; score: number[] } | undefined {
  if (pattern.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  const score: number[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i] ?? '';
    const v = parts[i] ?? '';
    if (p.startsWith('{') && p.endsWith('}')) {
      let decoded: string;
      try {
        decoded = decodeURIComponent(v);
      } catch {
        return undefined;
      }
      params[p.slice(1, -1)] = decoded;
      score.push(0);
    } else if (p.toLowerCase() === v.toLowerCase()) {
      score.push(1);
    } else {
      return undefined;
    }
  }
  return { params, score };
}

function compareScore(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
