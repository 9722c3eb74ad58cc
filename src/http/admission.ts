/**
 * Connection admission for a listener that strangers can reach: a table of open connections with
 * a total cap and a cap per peer address, and a deadline for each request's body.
 *
 * An attacker on the home network has one address (or a few) and can open any number of sockets;
 * the genuine deliverer comes from another address and sends its body at once. So once the table
 * is half full, an address holding its share gets no more connections (they are closed at once), a
 * body that has not arrived within the deadline after its headers ends its connection, and when
 * the whole table is full the oldest connection of the address holding the most is closed for the
 * newcomer, unless it is a request being answered.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface AdmissionOptions {
  /** Open connections kept in all. */
  maxConnections: number;
  /** Open connections kept per peer address (an IPv6 peer is its /64) once the table is half full. */
  maxPerAddress: number;
  /** Time a request's body has to arrive in full once its headers have, ms (real time, like Node's own timeouts). */
  bodyTimeoutMs: number;
  /** A connection closed by admission: `address-full`, `evicted` (table full), `table-full` (nothing to evict), `slow-body`. */
  onRefused?: (kind: 'address-full' | 'evicted' | 'table-full' | 'slow-body', fields: { peer: string }) => void;
}

export interface Admission {
  stats(): { open: number; refused: number; evicted: number; slowBodies: number };
}

interface Entry {
  address: string;
  /** The request in progress on the connection (headers in, answer not yet sent), if any. */
  req: IncomingMessage | undefined;
}

/** The peer a connection is counted against: the IPv4 address, or the /64 of an IPv6 one. */
export function peerKey(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined || remoteAddress === '') return 'unknown';
  const a = remoteAddress.toLowerCase().replace(/%.*$/, '');
  if (a.startsWith('::ffff:') && a.includes('.')) return a.slice('::ffff:'.length);
  if (!a.includes(':')) return a;
  // A host picks its IPv6 addresses freely within its /64 (privacy addresses), so the /64 is one peer.
  const [head = '', tail] = a.split('::');
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? h : [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** Puts `server`'s connections under admission; call before it listens. */
export function guardConnections(server: Server, options: AdmissionOptions): Admission {
  const entries = new Map<Socket, Entry>();
  const byAddress = new Map<string, Set<Socket>>();
  let refused = 0;
  let evicted = 0;
  let slowBodies = 0;

  // A connection may be closed for room unless a whole request is on it awaiting its answer.
  const evictable = (e: Entry): boolean => e.req === undefined || !e.req.complete;

  const victim = (): Socket | undefined => {
    const heaviest = [...byAddress.values()].sort((a, b) => b.size - a.size);
    for (const sockets of heaviest) {
      for (const s of sockets) if (evictable(entries.get(s)!)) return s;
    }
    return undefined;
  };

  const forget = (socket: Socket, e: Entry): void => {
    if (!entries.delete(socket)) return;
    const set = byAddress.get(e.address);
    set?.delete(socket);
    if (set?.size === 0) byAddress.delete(e.address);
  };

  server.on('connection', (socket: Socket) => {
    const address = peerKey(socket.remoteAddress);
    const own = byAddress.get(address);
    // An address may hold more than its share while the table has room to spare: one busy client
    // is served, and only contention makes it share.
    if (own && own.size >= options.maxPerAddress && entries.size >= options.maxConnections / 2) {
      refused++;
      options.onRefused?.('address-full', { peer: address });
      socket.destroy();
      return;
    }
    if (entries.size >= options.maxConnections) {
      const out = victim();
      if (!out) {
        refused++;
        options.onRefused?.('table-full', { peer: address });
        socket.destroy();
        return;
      }
      evicted++;
      const e = entries.get(out)!;
      options.onRefused?.('evicted', { peer: e.address });
      forget(out, e);
      out.destroy();
    }
    const entry: Entry = { address, req: undefined };
    entries.set(socket, entry);
    const set = byAddress.get(address) ?? new Set<Socket>();
    set.add(socket);
    byAddress.set(address, set);
    socket.once('close', () => forget(socket, entry));
  });

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const entry = entries.get(req.socket);
    if (!entry) return;
    entry.req = req;
    const deadline = setTimeout(() => {
      if (req.complete || entry.req !== req) return;
      slowBodies++;
      options.onRefused?.('slow-body', { peer: entry.address });
      if (!res.headersSent) {
        res.writeHead(408, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
        res.end('body too slow');
      }
      // Whatever it still sends is not read: the connection ends here.
      req.socket.destroy();
    }, options.bodyTimeoutMs);
    deadline.unref();
    const done = (): void => {
      clearTimeout(deadline);
      if (entry.req === req) entry.req = undefined;
    };
    res.once('finish', done);
    res.once('close', done);
  });

  return { stats: () => ({ open: entries.size, refused, evicted, slowBodies }) };
}
