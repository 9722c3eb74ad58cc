import { connect, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectLoopback, loopbackServer } from '../../test/helpers/loopback.js';
import { watchQuiescence, type Quiescence } from './quiescence.js';

let quiescence: Quiescence;
beforeEach(() => {
  quiescence = watchQuiescence();
});
afterEach(() => quiescence.close());

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A loopback connection whose server writes `bytes` at once to a client that reads nothing until
 * resumed; `thenClose`: the server's end closes once its bytes are with the kernel.
 */
async function heldBytes(bytes: number, options: { thenClose?: boolean } = {}): Promise<{ client: Socket; written: Promise<void> }> {
  let wrote!: () => void;
  const written = new Promise<void>((resolve) => {
    wrote = resolve;
  });
  const { port } = await loopbackServer((socket) => {
    socket.write(Buffer.alloc(bytes, 7), () => {
      if (options.thenClose) socket.destroy();
      wrote();
    });
  });
  const client = await connectLoopback(port, { paused: true });
  return { client, written };
}

/** Resumes `socket` and resolves once it has read `bytes`. */
function readAll(socket: Socket, bytes: number): Promise<void> {
  let read = 0;
  return new Promise((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read >= bytes) resolve();
    });
    socket.resume();
  });
}

describe('watchQuiescence', () => {
  it('counts bytes one loopback end wrote that its peer has not read, and none once they are read', async () => {
    const { client, written } = await heldBytes(100);
    await written;
    for (let i = 0; i < 5; i++) await nextTurn();
    expect(quiescence.bytesInFlight()).toBe(100);
    expect(quiescence.busy()).toBe(true);
    await readAll(client, 100);
    expect(quiescence.bytesInFlight()).toBe(0);
  });

  it('keeps counting what a closed end wrote until its peer has read it', async () => {
    const { client, written } = await heldBytes(64, { thenClose: true });
    await written;
    for (let i = 0; i < 5; i++) await nextTurn();
    expect(quiescence.bytesInFlight()).toBe(64);
    await readAll(client, 64);
    expect(quiescence.bytesInFlight()).toBe(0);
  });

  it('is busy while a connect is open, with no byte in flight', async () => {
    const { port } = await loopbackServer();
    await quiescence.settle();
    expect(quiescence.busy()).toBe(false);
    const socket = connect({ host: '127.0.0.1', port });
    socket.on('error', () => undefined);
    const connected = new Promise((resolve) => socket.once('connect', resolve));
    // Node opens the connect request on the next tick.
    await new Promise((resolve) => process.nextTick(resolve));
    expect(quiescence.bytesInFlight()).toBe(0);
    expect(quiescence.busy()).toBe(true);
    await connected;
    await quiescence.settle();
    expect(quiescence.busy()).toBe(false);
    socket.destroy();
  });

  it('settles only after a zero-delay timer between a request and its answer has run and the answer is read', async () => {
    // As modbus-serial's server does: the request is handled on a setTimeout(fn, 0).
    const { port } = await loopbackServer((socket) => {
      socket.on('data', (chunk: Buffer) => setTimeout(() => socket.write(Buffer.concat([Buffer.from('re:'), chunk])), 0));
    });
    const client = await connectLoopback(port);
    const answers: string[] = [];
    client.on('data', (chunk: Buffer) => answers.push(chunk.toString()));
    await quiescence.settle();
    client.write('ping');
    await quiescence.settle();
    expect(answers).toEqual(['re:ping']);
  });

  it('holds a settle while a predicate it was given says work is under way', async () => {
    let working = true;
    quiescence.alsoBusyWhile(() => working);
    expect(quiescence.busy()).toBe(true);
    let settled = false;
    const settling = quiescence.settle().then((turns) => {
      settled = true;
      return turns;
    });
    for (let i = 0; i < 20; i++) await nextTurn();
    expect(settled).toBe(false);
    working = false;
    const turns = await settling;
    expect(turns).toBeGreaterThan(20);
    expect(quiescence.busy()).toBe(false);
  });

  it('stops watching sockets once closed', async () => {
    quiescence.close();
    const other = watchQuiescence();
    try {
      const { client, written } = await heldBytes(100);
      await written;
      for (let i = 0; i < 5; i++) await nextTurn();
      expect(other.bytesInFlight()).toBe(100);
      expect(quiescence.bytesInFlight()).toBe(0);
      await readAll(client, 100);
    } finally {
      other.close();
    }
  });
});
