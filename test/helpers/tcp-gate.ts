/**
 * A TCP relay on 127.0.0.1 in front of a server (a broker) that can hold back what the server
 * sends to the client: a link that stalls and then delivers everything at once, in order, like a
 * charger whose Wi-Fi drops out for a few seconds. What the client sends always goes through.
 */
import { connect, createServer, type Socket } from 'node:net';

export interface TcpGate {
  /** Where clients connect instead of the server. */
  readonly port: number;
  /** Bytes from the server held back now. */
  readonly heldBytes: number;
  /** Holds back what the server sends from now on. */
  hold(): void;
  /** Delivers what was held back, in order, and passes everything through again. */
  release(): void;
  close(): Promise<void>;
}

export async function startTcpGate(serverPort: number): Promise<TcpGate> {
  let holding = false;
  const held: { to: Socket; chunk: Buffer }[] = [];
  const sockets = new Set<Socket>();
  const track = (s: Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    // A peer that goes away ends its relay; the error itself is of no interest here.
    s.on('error', () => undefined);
  };
  const server = createServer((client) => {
    const upstream = connect(serverPort, '127.0.0.1');
    track(client);
    track(upstream);
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (holding) held.push({ to: client, chunk });
      else client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = address && typeof address === 'object' ? address.port : 0;
  return {
    port,
    get heldBytes() {
      return held.reduce((sum, h) => sum + h.chunk.length, 0);
    },
    hold() {
      holding = true;
    },
    release() {
      for (const { to, chunk } of held.splice(0)) if (!to.destroyed) to.write(chunk);
      holding = false;
    },
    async close() {
      held.length = 0;
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
