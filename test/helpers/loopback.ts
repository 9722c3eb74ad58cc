/**
 * Loopback TCP peers for tests of the simulation kernel and of our own TCP servers: a server that
 * hands each connection to a function, clients to it, and one request–answer exchange. Everything
 * is closed when the test that made it ends.
 */
import { connect, createServer, type Socket } from 'node:net';
import { onTestFinished } from 'vitest';

export interface LoopbackServer {
  port: number;
  /** The server's end of each connection, in the order they were accepted. */
  accepted: Socket[];
}

/** A TCP server on 127.0.0.1 (a free port) serving each connection with `serve`. */
export async function loopbackServer(serve: (socket: Socket) => void = () => undefined): Promise<LoopbackServer> {
  const accepted: Socket[] = [];
  const server = createServer((socket) => {
    accepted.push(socket);
    socket.on('error', () => undefined);
    serve(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        for (const s of accepted) s.destroy();
        server.close(() => resolve());
      }),
  );
  const address = server.address();
  if (!address || typeof address !== 'object') throw new Error('the loopback server has no port');
  return { port: address.port, accepted };
}

/** Serves each connection by writing back what it reads. */
export const echo = (socket: Socket): void => {
  socket.on('data', (chunk: Buffer) => socket.write(chunk));
};

/**
 * A client connected to 127.0.0.1:`port`. `paused`: it reads nothing until `resume()`, so what its
 * peer writes stays in flight.
 */
export async function connectLoopback(port: number, options: { paused?: boolean } = {}): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port });
  if (options.paused) socket.pause();
  onTestFinished(() => {
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve();
    });
    socket.once('error', reject);
  });
  return socket;
}

/** Writes `request` and resolves with the next chunk the socket reads. */
export function exchange(socket: Socket, request: Buffer | string): Promise<Buffer> {
  const answer = new Promise<Buffer>((resolve) => socket.once('data', resolve));
  socket.write(request);
  return answer;
}
