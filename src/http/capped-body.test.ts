import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readCappedBody, type CappedBody } from './capped-body.js';

const limit = 1024;
let server: Server | null = null;
/** Requests the server has begun to read. */
let started = 0;

/** A server that reads each body with `readCappedBody` and answers what it read; `seen` gets every result. */
async function listen(seen: CappedBody[]): Promise<number> {
  started = 0;
  server = createServer((req, res) => {
    started++;
    void readCappedBody(req, limit).then((read) => {
      seen.push(read);
      if (read.kind === 'aborted') return;
      res.writeHead(read.kind === 'body' ? 200 : 413, { connection: 'close' });
      res.end(read.kind === 'body' ? String(read.bytes.length) : 'too large');
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

/** Sends `chunks` one after another (chunked encoding unless `length` is given) and resolves with the status, or the socket's error. */
function send(port: number, chunks: Buffer[], opts: { length?: number; endAfter?: boolean } = {}): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request({ port, host: '127.0.0.1', method: 'POST', headers: opts.length === undefined ? {} : { 'content-length': opts.length } });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    for (const c of chunks) req.write(c);
    if (opts.endAfter !== false) req.end();
  });
}

const until = async (cond: () => boolean): Promise<void> => {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
};

describe('readCappedBody', () => {
  it('gives the whole body up to the limit', async () => {
    const seen: CappedBody[] = [];
    const port = await listen(seen);
    expect(await send(port, [Buffer.alloc(600), Buffer.alloc(424)])).toBe(200);
    expect(seen).toEqual([{ kind: 'body', bytes: Buffer.alloc(1024) }]);
  });

  it('answers a declared length past the limit at once, before the client has sent its body', async () => {
    const seen: CappedBody[] = [];
    const port = await listen(seen);
    // The body is never finished: only an answer that does not wait for it can arrive.
    expect(await send(port, [Buffer.alloc(10)], { length: limit + 1, endAfter: false })).toBe(413);
    expect(seen).toEqual([{ kind: 'too-large' }]);
  });

  it('answers a chunked body as soon as it passes the limit', async () => {
    const seen: CappedBody[] = [];
    const port = await listen(seen);
    expect(await send(port, [Buffer.alloc(limit), Buffer.alloc(1)], { endAfter: false })).toBe(413);
    expect(seen).toEqual([{ kind: 'too-large' }]);
  });

  it('drops what a sender goes on sending past the limit, and the sender still reads the answer', async () => {
    const seen: CappedBody[] = [];
    const port = await listen(seen);
    const huge = Array.from({ length: 64 }, () => Buffer.alloc(64 * 1024));
    expect(await send(port, huge)).toBe(413);
    expect(seen).toEqual([{ kind: 'too-large' }]);
  });

  it('says aborted when the client goes away mid-body', async () => {
    const seen: CappedBody[] = [];
    const port = await listen(seen);
    const req = request({ port, host: '127.0.0.1', method: 'POST', headers: { 'content-length': 500 } });
    req.on('error', () => undefined);
    req.write(Buffer.alloc(100));
    await until(() => started === 1);
    req.destroy();
    await until(() => seen.length === 1);
    expect(seen).toEqual([{ kind: 'aborted' }]);
  });
});
