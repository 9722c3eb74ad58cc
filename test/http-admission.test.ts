/**
 * Connection admission and client-error handling (src/http/) on a real node:http server over
 * loopback, with peers on other addresses of 127.0.0.0/8.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { guardConnections, peerKey, type AdmissionOptions } from '../src/http/admission.js';
import { guardClientErrors, refusalLog } from '../src/http/client-errors.js';
import { createLogger } from '../src/log.js';
import { sendRaw } from './helpers/http-fuzz-send.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A server that reads each body and answers 200, or holds the answer while `hold` is set. */
async function serve(options: Omit<AdmissionOptions, 'onRefused'>, hold = false): Promise<{ port: number; refused: string[]; whole: () => number }> {
  const refused: string[] = [];
  let whole = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      whole++;
      if (!hold) res.end('ok');
    });
  });
  guardConnections(server, { ...options, onRefused: (kind, { peer }) => refused.push(`${kind} ${peer}`) });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, refused, whole: () => whole };
}

/** An open socket from `localAddress`, connected. */
async function idle(port: number, localAddress: string): Promise<{ socket: Socket; gone: Promise<void> }> {
  const s = connect({ host: '127.0.0.1', port, localAddress });
  s.on('error', () => undefined);
  const gone = new Promise<void>((r) => s.once('close', () => r()));
  await new Promise<void>((r, j) => {
    s.once('connect', r);
    s.once('error', j);
  });
  return { socket: s, gone };
}

const get = (localAddress?: string) => ({
  parts: [Buffer.from('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')],
  pausesMs: [0],
  end: 'wait' as const,
  localAddress,
});

describe('connection admission', () => {
  it('counts IPv4 peers by address and IPv6 peers by /64', () => {
    expect(peerKey('127.0.0.2')).toBe('127.0.0.2');
    expect(peerKey('::ffff:192.168.1.7')).toBe('192.168.1.7');
    expect(peerKey('2001:db8:1:2:aaaa::1')).toBe(peerKey('2001:0db8:1:2:bbbb:cccc:dddd:eeee'));
    expect(peerKey('2001:db8:1:2::1')).not.toBe(peerKey('2001:db8:1:3::1'));
    expect(peerKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(peerKey(undefined)).toBe('unknown');
  });

  it('lets an address past its share while the table has room, then closes its further connections at once', async () => {
    const { port, refused } = await serve({ maxConnections: 8, maxPerAddress: 2, bodyTimeoutMs: 60_000 });
    const held = [];
    for (let i = 0; i < 4; i++) held.push(await idle(port, '127.0.0.2'));
    expect(refused).toEqual([]);
    // Half the table is taken, and all by 127.0.0.2: it gets no more.
    const fifth = await idle(port, '127.0.0.2');
    await fifth.gone;
    expect(refused).toEqual(['address-full 127.0.0.2']);
    const other = await sendRaw(get(), { port, localAddress: '127.0.0.3' });
    expect(other.status).toBe(200);
    expect(held.every((s) => !s.socket.destroyed)).toBe(true);
  });

  it('with the table full, closes the oldest connection of the address holding the most for a newcomer', async () => {
    const { port, refused } = await serve({ maxConnections: 4, maxPerAddress: 4, bodyTimeoutMs: 60_000 });
    const heavy = [await idle(port, '127.0.0.2'), await idle(port, '127.0.0.2'), await idle(port, '127.0.0.2')];
    const light = await idle(port, '127.0.0.3');
    expect((await sendRaw(get(), { port, localAddress: '127.0.0.4' })).status).toBe(200);
    await heavy[0]!.gone;
    expect(refused).toEqual(['evicted 127.0.0.2']);
    expect([heavy[1]!, heavy[2]!, light].every((s) => !s.socket.destroyed)).toBe(true);
  });

  it('never closes a whole request awaiting its answer for room: the newcomer is refused then', async () => {
    const { port, refused, whole } = await serve({ maxConnections: 2, maxPerAddress: 2, bodyTimeoutMs: 60_000 }, true);
    const waiting = [await idle(port, '127.0.0.2'), await idle(port, '127.0.0.3')];
    for (const { socket } of waiting) socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}');
    while (whole() < 2) await new Promise((r) => setTimeout(r, 10));
    const outcome = await sendRaw(get(), { port, localAddress: '127.0.0.4' });
    expect(refused).toEqual(['table-full 127.0.0.4']);
    expect(outcome.status).toBeNull();
    expect(waiting.every((s) => !s.socket.destroyed)).toBe(true);
  });

  it('answers 408 and closes a request whose body does not arrive by the deadline; a whole body is served', async () => {
    const { port, refused } = await serve({ maxConnections: 16, maxPerAddress: 16, bodyTimeoutMs: 300 });
    const slow = await sendRaw(
      { parts: [Buffer.from('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{')], pausesMs: [0], end: 'wait' },
      { port, timeoutMs: 10_000 },
    );
    expect(slow.status).toBe(408);
    expect(slow.ending).toBe('closed');
    expect(refused).toEqual(['slow-body 127.0.0.1']);
    const whole = await sendRaw(
      { parts: [Buffer.from('POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}')], pausesMs: [0], end: 'wait' },
      { port },
    );
    expect(whole.status).toBe(200);
  });
});

describe('client errors', () => {
  it('answers 400 or 431 and closes, logging each kind at a bounded rate', async () => {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });
    const server = createServer((_req, res) => res.end('ok'));
    guardClientErrors(server, refusalLog(log));
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const bad = { parts: [Buffer.from('GET / HTTP/1.1\r\nBad Header\r\n\r\n')], pausesMs: [0], end: 'wait' as const };
    const huge = { parts: [Buffer.from(`GET / HTTP/1.1\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`)], pausesMs: [0], end: 'wait' as const };
    for (let i = 0; i < 20; i++) {
      const o = await sendRaw(bad, { port });
      expect(o.status).toBe(400);
      expect(o.ending).toBe('closed');
    }
    for (let i = 0; i < 5; i++) expect((await sendRaw(huge, { port })).status).toBe(431);
    const kinds = lines.filter((l) => l['code'] === 'HTTP_REQUEST_INVALID').map((l) => l['kind']);
    expect(kinds).toEqual(['HPE_INVALID_HEADER_TOKEN', 'HPE_INVALID_HEADER_TOKEN', 'HPE_HEADER_OVERFLOW', 'HPE_HEADER_OVERFLOW']);
  });
});
