/**
 * OAuth 2.0 client-credentials token source: form POST to `{authUrl}/connect/token`, cached,
 * refreshed ahead of `expires_in` (60 minutes when absent), one fetch at a time however many
 * callers wait. The token never reaches a log line or an error message.
 */
import { codeOf, isWattshiftError, WattshiftError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import type { SparkConnection } from './connection.js';
import { createHttpTransport, type HttpTimeoutsMs, type RetryOptions, type TokenSource } from './http.js';
import { tokenResponseSchema } from './wire.js';

export type { TokenSource } from './http.js';

export interface TokenSourceOptions {
  /** Base of the identity server; the token endpoint is `{authUrl}/connect/token`. */
  authUrl: string;
  clientId: string;
  clientSecret: string;
  clock: Clock;
  logger: Logger;
  /** Optional `scope` form field (the Energy Coordination API needs none). */
  scope?: string;
  /** The shared pool (see `connection.ts`); an own one from `timeoutsMs` otherwise. */
  connection?: SparkConnection;
  timeoutsMs?: HttpTimeoutsMs;
  retry?: RetryOptions;
  /** Refresh this long before expiry (capped at half the lifetime). Default 5 minutes. */
  refreshAheadMs?: number;
  /**
   * After rejected credentials, token requests wait this long, doubling up to `rejectedMaxMs`
   * (defaults 1 min and 1 h); meanwhile every caller gets the rejection at once.
   */
  rejectedBaseMs?: number;
  rejectedMaxMs?: number;
}

export interface ClientCredentialsTokenSource extends TokenSource {
  /** How many tokens have been fetched so far (for status output and tests). */
  readonly fetchCount: number;
  /** Closes the token source's keep-alive connections. */
  close(): Promise<void>;
}

const defaultLifetimeS = 3600;

interface CachedToken {
  value: string;
  refreshAtMs: number;
  expiresAtMs: number;
}

/** Creates a cached, single-flight client-credentials token source. */
export function createTokenSource(options: TokenSourceOptions): ClientCredentialsTokenSource {
  const log = options.logger.child({ component: 'spark-oauth' });
  const http = createHttpTransport({
    baseUrl: options.authUrl,
    clock: options.clock,
    logger: options.logger,
    connection: options.connection,
    timeoutsMs: options.timeoutsMs,
    retry: options.retry,
  });
  const refreshAheadMs = options.refreshAheadMs ?? 5 * 60_000;
  let cached: CachedToken | undefined;
  let inflight: Promise<CachedToken> | undefined;
  let fetchCount = 0;
  // Rejected credentials are not retried by every request: they stay rejected until `retryAtMs`.
  let rejection: { error: WattshiftError; retryAtMs: number; delayMs: number } | undefined;
  const rejectedBaseMs = options.rejectedBaseMs ?? 60_000;
  const rejectedMaxMs = options.rejectedMaxMs ?? 3_600_000;

  async function fetchToken(): Promise<CachedToken> {
    const form: Record<string, string> = {
      grant_type: 'client_credentials',
      client_id: options.clientId,
      client_secret: options.clientSecret,
    };
    if (options.scope) form.scope = options.scope;
    fetchCount++;
    try {
      const body = await http.sendJson(
        { method: 'POST', path: '/connect/token', form, auth: false, idempotent: true, operation: 'fetchToken' },
        tokenResponseSchema,
      );
      const lifetimeMs = (body.expires_in ?? defaultLifetimeS) * 1000;
      const now = options.clock.nowMs();
      const ahead = Math.min(refreshAheadMs, lifetimeMs / 2);
      log.debug({ expiresInS: lifetimeMs / 1000 }, 'fetched an access token');
      return { value: body.access_token, refreshAtMs: now + lifetimeMs - ahead, expiresAtMs: now + lifetimeMs };
    } catch (err) {
      if (isWattshiftError(err, 'API_REJECTED') || isWattshiftError(err, 'AUTH_REJECTED')) {
        const status = err.details?.status;
        if (status === 400 || status === 401 || status === 403) {
          throw new WattshiftError(
            'AUTH_REJECTED',
            `the token endpoint rejected the client credentials (${String(status)}${err.details?.serverMessage ? `: ${String(err.details.serverMessage)}` : ''})`,
            {
              cause: err,
              details: { status, clientId: options.clientId },
            },
          );
        }
      }
      throw err;
    }
  }

  return {
    get fetchCount() {
      return fetchCount;
    },
    async getToken(signal?: AbortSignal): Promise<string> {
      const current = cached;
      if (current && options.clock.nowMs() < current.refreshAtMs) return current.value;
      if (rejection && options.clock.nowMs() < rejection.retryAtMs) throw rejection.error;
      if (!inflight) {
        inflight = fetchToken().then(
          (t) => {
            cached = t;
            inflight = undefined;
            rejection = undefined;
            return t;
          },
          (err: unknown) => {
            inflight = undefined;
            if (isWattshiftError(err, 'AUTH_REJECTED')) {
              const delayMs = rejection ? Math.min(rejectedMaxMs, rejection.delayMs * 2) : rejectedBaseMs;
              rejection = { error: err, retryAtMs: options.clock.nowMs() + delayMs, delayMs };
              log.info({ code: 'AUTH_REJECTED', retryInMs: delayMs }, 'credentials rejected; token requests paused');
            }
            throw err;
          },
        );
      }
      try {
        return (await abortable(inflight, signal)).value;
      } catch (err) {
        // A failed early refresh keeps using a token that has not expired yet.
        if (!signal?.aborted && current && cached === current && options.clock.nowMs() < current.expiresAtMs) {
          log.warn({ code: codeOf(err) }, 'token refresh failed; using the current token until it expires');
          return current.value;
        }
        throw err;
      }
    },
    invalidate(token?: string): void {
      if (cached && (token === undefined || cached.value === token)) cached = undefined;
    },
    close: () => http.close(),
  };
}

/** `promise`, or a rejection with the signal's reason when `signal` aborts first. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
