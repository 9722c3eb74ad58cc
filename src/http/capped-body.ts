/**
 * One way every listener reads a request body: whole, up to a limit, and never more than a bounded
 * amount of what a client sends past it.
 */
import type { IncomingMessage } from 'node:http';

export type CappedBody = { kind: 'body'; bytes: Buffer } | { kind: 'too-large' } | { kind: 'aborted' };

/**
 * Reads the body of `req` up to `limitBytes`.
 *
 * - `body`: the whole body, at most `limitBytes`.
 * - `too-large`: the declared length or the bytes received passed the limit. It settles at once, so the
 *   listener can answer 413 without waiting for the rest. What still comes is read and dropped, never
 *   kept, so the client reads the answer rather than a reset; the listener's own request deadline
 *   (`requestTimeout`, the admission guard's body deadline) ends a sender that never stops.
 * - `aborted`: the client went away (or the admission deadline destroyed the request) before the end.
 */
export function readCappedBody(req: IncomingMessage, limitBytes: number): Promise<CappedBody> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: CappedBody): void => {
      if (settled) return;
      settled = true;
      chunks.length = 0;
      resolve(result);
    };
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limitBytes) settle({ kind: 'too-large' });
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limitBytes) return settle({ kind: 'too-large' });
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!settled) settle({ kind: 'body', bytes: Buffer.concat(chunks) });
    });
    req.on('error', () => settle({ kind: 'aborted' }));
    req.on('close', () => settle({ kind: 'aborted' }));
  });
}
