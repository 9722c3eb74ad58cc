/**
 * A counting TCP relay: the daemon talks to its peers through it so the benchmark knows how many
 * bytes the daemon wrote to sockets (to tell them apart from its file writes in /proc/<pid>/io).
 */
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface TcpRelay {
  readonly host: string;
  readonly port: number;
  /** Bytes the clients sent towards the upstream. */
  bytesFromClients(): number;
  close(): Promise<void>;
}

export async function startTcpRelay(
  upstreamHost: string,
  upstreamPort: number,
  options: { /** Sees each chunk a client sends, as it arrives. */ onClientData?: (chunk: Buffer) => void } = {},
): Promise<TcpRelay> {
  let fromClients = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(upstreamPort, upstreamHost);
    sockets.add(client);
    sockets.add(upstream);
    client.on('data', (chunk: Buffer) => {
      fromClients += chunk.length;
      options.onClientData?.(chunk);
    });
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    bytesFromClients: () => fromClients,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
