/**
 * An in-process aedes MQTT broker on 127.0.0.1 for tests. `restart()` closes the broker and every
 * client socket and listens again on the same port with a fresh broker (no retained messages, no
 * sessions), like a broker process restart without persistence.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { Aedes } from 'aedes';
import { afterEach, beforeEach } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { silentLogger } from '../../src/log.js';
import { createMqttConnection, type MqttConnection } from '../../src/devices/mqtt/index.js';

export interface TestBroker {
  readonly port: number;
  readonly url: string;
  /** Stops accepting and drops every client. */
  stop(): Promise<void>;
  /** Listens again on the same port with a fresh broker. */
  start(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startAedes(): Promise<TestBroker> {
  let broker: Aedes | undefined;
  let server: Server | undefined;
  let port = 0;
  const sockets = new Set<Socket>();

  const start = async (): Promise<void> => {
    const b = await Aedes.createBroker();
    const s = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      b.handle(socket);
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
    });
    const address = s.address();
    if (address && typeof address === 'object') port = address.port;
    broker = b;
    server = s;
  };

  const stop = async (): Promise<void> => {
    const s = server;
    const b = broker;
    server = undefined;
    broker = undefined;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    if (b) await new Promise<void>((resolve) => b.close(() => resolve()));
  };

  await start();
  return {
    get port() {
      return port;
    },
    get url() {
      return `mqtt://127.0.0.1:${port}`;
    },
    start,
    stop,
    async restart() {
      await stop();
      await start();
    },
    close: stop,
  };
}

/** Polls `check` (real time) until it stops throwing or `timeoutMs` passes. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 5000, everyMs = 10): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }
}

/** What each MQTT device test gets: a fresh broker, a connected daemon-side connection and a manual clock. */
export interface MqttDeviceWorld {
  broker: TestBroker;
  connection: MqttConnection;
  clock: ManualClock;
  /** Run after each test, last registered first (simulators, devices). */
  cleanups: (() => Promise<void> | void)[];
}

/** Registers per-test set-up and tear-down of an {@link MqttDeviceWorld} starting at `t0`. */
export function useMqttDeviceWorld(t0: number, options: { reconnectPeriodMs?: number } = {}): MqttDeviceWorld {
  const world = { cleanups: [] } as unknown as MqttDeviceWorld;
  beforeEach(async () => {
    world.broker = await startAedes();
    world.clock = new ManualClock(t0);
    world.connection = createMqttConnection(
      { url: world.broker.url, ...(options.reconnectPeriodMs ? { reconnectPeriodMs: options.reconnectPeriodMs } : {}) },
      { logger: silentLogger() },
    );
    await world.connection.waitConnected(AbortSignal.timeout(5000));
  });
  afterEach(async () => {
    for (const c of world.cleanups.splice(0).reverse()) await c();
    await world.connection.close();
    await world.broker.close();
  });
  return world;
}
