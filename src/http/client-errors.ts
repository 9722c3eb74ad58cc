/**
 * What a listener does with input that never becomes a request: a client error (a request line or
 * headers that Node's parser refuses, a header block too large, a request that timed out) is
 * answered with a status line and the socket destroyed, and every refusal is logged at a bounded
 * rate per kind, so that a flood costs a few lines and one kind cannot hide another.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../log.js';
import { rateLimitedWarn } from '../log-limit.js';

/** Logs a refusal of `kind` (a short fixed word) under HTTP_REQUEST_INVALID, rate-limited per kind. */
export type RefusalLog = (kind: string, fields?: Record<string, unknown>) => void;

/** Kinds kept apart; past this many (a client choosing error codes cannot make more) they share one budget. */
const maxKinds = 32;

export function refusalLog(log: Logger, options: { perWindow?: number; windowMs?: number } = {}): RefusalLog {
  const byKind = new Map<string, ReturnType<typeof rateLimitedWarn>>();
  return (kind, fields = {}) => {
    const key = byKind.has(kind) || byKind.size < maxKinds ? kind : 'other';
    let warn = byKind.get(key);
    if (!warn) {
      warn = rateLimitedWarn(log, { perWindow: options.perWindow ?? 2, ...(options.windowMs === undefined ? {} : { windowMs: options.windowMs }) });
      byKind.set(key, warn);
    }
    warn('HTTP_REQUEST_INVALID', { kind, ...fields }, `HTTP request refused: ${kind}`);
  };
}

const statusLines: Record<string, string> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
  HPE_HEADERS_TIMEOUT: '408 Request Timeout',
};

/** How long a refused client gets to read its answer before its socket is destroyed, ms. */
const lingerMs = 1_000;

/** Answers every client error on `server` with 400 (431, 408 where they fit) and destroys the socket. */
export function guardClientErrors(server: Server, refused: RefusalLog): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const code = typeof err.code === 'string' ? err.code : 'unknown';
    // A peer that reset or went away is not worth a line: there is nobody to answer.
    if (code === 'ECONNRESET' || code === 'EPIPE' || !socket.writable) {
      socket.destroy();
      return;
    }
    refused(code.startsWith('HPE_') || code.startsWith('ERR_HTTP_') ? code : 'client-error');
    const status = statusLines[code] ?? '400 Bad Request';
    socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`, () => socket.destroy());
    setTimeout(() => socket.destroy(), lingerMs).unref();
  });
}
