/**
 * One HTTP(S) request on node:http / node:https, body buffered as UTF-8 text, with connect,
 * headers and body-idle timeouts, a body size cap and AbortSignal support.
 *
 * Why not undici or the global `fetch` (undici inside): on a Raspberry-Pi-class gateway the
 * daemon must stay under 80 MB RSS, and undici's first request costs ~28 MB (the WASM compile of
 * llhttp) where node:http, which the daemon loads anyway for its servers, costs ~7 MB.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';

/** Timeouts of one request, in milliseconds. */
export interface RequestTimeoutsMs {
  /** From the call until the socket is connected (DNS, TCP and TLS handshake, waiting for a pooled socket). */
  connect?: number;
  /** From a connected socket until the response headers arrive. */
  headers?: number;
  /** Longest silence between two body chunks. */
  body?: number;
}

export interface NodeRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** A keep-alive agent from {@link createKeepAliveAgent}; node's global agent otherwise. */
  agent?: HttpAgent;
  timeoutsMs?: RequestTimeoutsMs;
  /** Larger bodies fail with BODY_TOO_LARGE. Default {@link defaultMaxBodyBytes}. */
  maxBodyBytes?: number;
  /** Aborting destroys the socket and rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface NodeResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** Our own codes for failures node does not name itself. */
export type RequestErrorCode = 'CONNECT_TIMEOUT' | 'HEADERS_TIMEOUT' | 'BODY_TIMEOUT' | 'BODY_TOO_LARGE';

export class RequestError extends Error {
  override readonly name = 'RequestError';

  constructor(
    readonly code: RequestErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** 2 MiB: about 100 times the largest real body (the hourly 7-day forecast advice, ~21 kB). */
export const defaultMaxBodyBytes = 2 * 1024 * 1024;
const defaultTimeoutsMs = { connect: 10_000, headers: 30_000, body: 30_000 };
/** Idle pooled sockets close after this, before a typical 5 s server keep-alive timeout can race a reuse. */
const idleSocketMs = 4_000;

/** One keep-alive agent for `url`'s scheme; `destroy()` it when done. */
export function createKeepAliveAgent(url: string, maxSockets = 4): HttpAgent {
  const options = { keepAlive: true, maxSockets, timeout: idleSocketMs };
  return new URL(url).protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
}

/** Sends one request and buffers the whole response, whatever its status. */
export function nodeRequest(url: string, options: NodeRequestOptions = {}): Promise<NodeResponse> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : target.protocol === 'http:' ? httpRequest : undefined;
  if (!send) return Promise.reject(new TypeError(`unsupported URL scheme: ${target.protocol}`));
  const { signal, body } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const timeouts = { ...defaultTimeoutsMs, ...options.timeoutsMs };
  const maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes;
  const headers = { ...options.headers };
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));

  return new Promise<NodeResponse>((resolve, reject) => {
    const req = send(target, { method: options.method ?? 'GET', headers, agent: options.agent });
    let settled = false;
    let timer: NodeJS.Timeout | undefined;

    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      return true;
    };
    // Destroying the request also destroys its socket, so a failed socket never goes back to the pool.
    const fail = (err: unknown): void => {
      if (!settle()) return;
      req.destroy();
      reject(err);
    };
    const arm = (ms: number, code: RequestErrorCode, what: string): void => {
      clearTimeout(timer);
      timer = setTimeout(() => fail(new RequestError(code, `${what} within ${ms} ms`)), ms);
    };
    const onAbort = (): void => fail(signal?.reason);

    signal?.addEventListener('abort', onAbort, { once: true });
    arm(timeouts.connect, 'CONNECT_TIMEOUT', 'no connection');
    req.on('error', fail);
    req.on('socket', (socket: Socket) => {
      const connected = (): void => arm(timeouts.headers, 'HEADERS_TIMEOUT', 'no response headers');
      if (req.reusedSocket) connected();
      else socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', connected);
    });
    req.on('response', (res: IncomingMessage) => {
      const declared = Number(res.headers['content-length']);
      if (declared > maxBodyBytes) return fail(tooLarge(maxBodyBytes));
      const chunks: Buffer[] = [];
      let size = 0;
      arm(timeouts.body, 'BODY_TIMEOUT', 'the response body stalled: no data');
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBodyBytes) return fail(tooLarge(maxBodyBytes));
        chunks.push(chunk);
        timer?.refresh();
      });
      res.on('end', () => {
        // Decoded once at the end, so a character split across chunks stays whole.
        if (settle()) resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', fail);
      res.on('close', () => fail(Object.assign(new Error('the connection closed before the response ended'), { code: 'ECONNRESET' })));
    });
    req.end(body);
  });
}

function tooLarge(maxBodyBytes: number): RequestError {
  return new RequestError('BODY_TOO_LARGE', `the response body exceeds ${maxBodyBytes} bytes`);
}
