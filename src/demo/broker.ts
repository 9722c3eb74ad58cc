/** An in-process MQTT broker (aedes) on loopback, for the demo's home automation and devices. */
import { createServer, type Socket } from 'node:net';
import { Aedes } from 'aedes';

export interface EmbeddedBroker {
  readonly url: string;
  close(): Promise<void>;
}

export async function startEmbeddedBroker(port = 0): Promise<EmbeddedBroker> {
  const broker = await Aedes.createBroker();
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    broker.handle(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const actualPort = address && typeof address === 'object' ? address.port : port;
  return {
    url: `mqtt://127.0.0.1:${actualPort}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => broker.close(() => resolve()));
    },
  };
}
