/**
 * A TCP relay on 127.0.0.1 in front of one server that can be cut: every connection through it
 * drops and new ones are refused (nothing listens on its port) until it is restored on the same
 * port. A cut link fails at once, as a peer whose host is down answers a connect with a reset, so a
 * run on the virtual clock sees the outage without waiting on any library's real-time timeout.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface CuttableLink {
  /** Where clients connect instead of the server. */
  readonly port: number;
  readonly cut: boolean;
  /** Drops every connection through the link and refuses new ones. */
  cutNow(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startCuttableLink(serverPort: number): Promise<CuttableLink> {
  const sockets = new Set<Socket>();
  const track = (s: Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    // A peer that goes away ends its relay; the error itself is of no interest here.
    s.on('error', () => undefined);
  };
  const relay = (client: Socket): void => {
    const upstream = connect(serverPort, '127.0.0.1');
    track(client);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  };
  let server: Server | null = null;
  const listen = (port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const s = createServer(relay);
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        server = s;
        const address = s.address();
        resolve(address && typeof address === 'object' ? address.port : port);
      });
    });
  const stopListening = async (): Promise<void> => {
    const s = server;
    server = null;
    for (const socket of sockets) socket.destroy();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  const port = await listen(0);
  return {
    port,
    get cut() {
      return server === null;
    },
    cutNow: stopListening,
    async restore() {
      if (server === null) await listen(port);
    },
    close: stopListening,
  };
}
