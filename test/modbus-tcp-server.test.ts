/**
 * The simulators' Modbus TCP server against frames built here from the specification (MBAP header:
 * transaction id, protocol id 0, length of unit id and PDU, unit id; then the PDU), and a smoke
 * test with modbus-serial's client.
 */
import type { Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadModbusClient } from '../src/devices/modbus/bus.js';
import { modbusTcpServer, type ModbusTcpServer, type RegisterHandlers } from '../src/sandbox/devices/modbus-tcp-server.js';
import { watchQuiescence, type Quiescence } from '../src/simulation/quiescence.js';
import { connectLoopback } from './helpers/loopback.js';

type Fault = 'silent' | 'exception' | null;

/** Registers and coils in memory; addresses from 1000 do not exist (exception 2), register 500 fails (exception 4). */
function memoryDevice() {
  const holding = new Map<number, number>();
  const inputs = new Map<number, number>();
  const coils = new Map<number, boolean>();
  /** The fault each next request meets, in order; none once they are used up. */
  const faults: Fault[] = [];
  let syncs = 0;
  const check = (addr: number): void => {
    if (addr === 500) throw new Error('the device broke');
    if (addr >= 1000) throw Object.assign(new Error(`no register ${addr}`), { modbusErrorCode: 2 });
  };
  const read = (map: Map<number, number>, addr: number, length: number): number[] =>
    Array.from({ length }, (_, i) => {
      check(addr + i);
      return map.get(addr + i) ?? 0;
    });
  const handlers: RegisterHandlers = {
    sync: () => {
      syncs++;
      // Brought up to its clock: input 0 counts the requests answered.
      inputs.set(0, syncs);
    },
    fault: () => faults.shift() ?? null,
    inputs: (addr, length) => read(inputs, addr, length),
    holding: (addr, length) => read(holding, addr, length),
    coil: (addr) => {
      check(addr);
      return coils.get(addr) ?? false;
    },
    setCoil: (addr, value) => {
      check(addr);
      coils.set(addr, value);
    },
    setRegister: (addr, value) => {
      check(addr);
      holding.set(addr, value);
    },
  };
  return { handlers, holding, inputs, coils, faults };
}

/** A Modbus TCP request or response: MBAP header, then the PDU. */
function adu(transactionId: number, unitId: number, pdu: readonly number[], protocolId = 0): Buffer {
  const b = Buffer.alloc(7 + pdu.length);
  b.writeUInt16BE(transactionId, 0);
  b.writeUInt16BE(protocolId, 2);
  b.writeUInt16BE(pdu.length + 1, 4);
  b[6] = unitId;
  Buffer.from(pdu).copy(b, 7);
  return b;
}

const u16 = (v: number): number[] => [v >> 8, v & 0xff];

/** The responses a socket reads, one whole ADU at a time however TCP cuts them. */
function responses(socket: Socket): () => Promise<Buffer> {
  let buffered = Buffer.alloc(0);
  const waiting: ((b: Buffer) => void)[] = [];
  const ready: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 6 && buffered.length >= 6 + buffered.readUInt16BE(4)) {
      const end = 6 + buffered.readUInt16BE(4);
      const one = buffered.subarray(0, end);
      buffered = buffered.subarray(end);
      const waiter = waiting.shift();
      if (waiter) waiter(one);
      else ready.push(one);
    }
  });
  return () => {
    const one = ready.shift();
    return one ? Promise.resolve(one) : new Promise((resolve) => waiting.push(resolve));
  };
}

let quiescence: Quiescence;
let device: ReturnType<typeof memoryDevice>;
let server: ModbusTcpServer;
beforeEach(async () => {
  quiescence = watchQuiescence();
  device = memoryDevice();
  server = modbusTcpServer(device.handlers, { host: '127.0.0.1', unitId: 1 });
  await server.start();
});
afterEach(async () => {
  await server.stop();
  quiescence.close();
});

/** A raw connection to the server: `ask` sends one request and resolves with the next response. */
async function rawClient(port = server.port) {
  const socket = await connectLoopback(port);
  const next = responses(socket);
  const ask = (transactionId: number, pdu: readonly number[], unitId = 1): Promise<Buffer> => {
    socket.write(adu(transactionId, unitId, pdu));
    return next();
  };
  return { socket, next, ask };
}

/** Writes `parts` one after another, each read by the server before the next is written. */
async function writeApart(socket: Socket, parts: readonly Buffer[]): Promise<void> {
  for (const part of parts) {
    socket.write(part);
    while (quiescence.bytesInFlight() > 0) await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('Modbus TCP server, raw frames', () => {
  it('reads holding and input registers (FC 3, 4), bringing the device up to its clock first', async () => {
    device.holding.set(10, 0x1234);
    device.holding.set(11, 0xbeef);
    device.inputs.set(7, 230);
    const { ask } = await rawClient();
    expect(await ask(0x0102, [3, ...u16(10), ...u16(2)])).toEqual(adu(0x0102, 1, [3, 4, 0x12, 0x34, 0xbe, 0xef]));
    expect(await ask(0x0103, [4, ...u16(7), ...u16(1)])).toEqual(adu(0x0103, 1, [4, 2, ...u16(230)]));
    expect(await ask(0x0104, [4, ...u16(0), ...u16(1)])).toEqual(adu(0x0104, 1, [4, 2, ...u16(3)]));
  });

  it('reads coils (FC 1) packed least significant bit first across bytes', async () => {
    for (const a of [0, 2, 3, 8, 12]) device.coils.set(a, true);
    const { ask } = await rawClient();
    expect(await ask(1, [1, ...u16(0), ...u16(10)])).toEqual(adu(1, 1, [1, 2, 0b0000_1101, 0b0000_0001]));
    // From coil 2: 2, 3, 8 and 12 are bits 0, 1, 6 and 10; eleven coils take two bytes.
    expect(await ask(2, [1, ...u16(2), ...u16(11)])).toEqual(adu(2, 1, [1, 2, 0b0100_0011, 0b0000_0100]));
  });

  it('writes a single coil with 0xFF00 and 0x0000 and answers with an echo; any other value is exception 3', async () => {
    const { ask } = await rawClient();
    expect(await ask(1, [5, ...u16(4), 0xff, 0x00])).toEqual(adu(1, 1, [5, ...u16(4), 0xff, 0x00]));
    expect(device.coils.get(4)).toBe(true);
    expect(await ask(2, [5, ...u16(4), 0x00, 0x00])).toEqual(adu(2, 1, [5, ...u16(4), 0x00, 0x00]));
    expect(device.coils.get(4)).toBe(false);
    expect(await ask(3, [5, ...u16(4), 0x00, 0x01])).toEqual(adu(3, 1, [0x85, 3]));
    expect(await ask(4, [5, ...u16(4), 0x12, 0x34])).toEqual(adu(4, 1, [0x85, 3]));
    expect(device.coils.get(4)).toBe(false);
  });

  it('writes a single register (FC 6) and answers with an echo', async () => {
    const { ask } = await rawClient();
    expect(await ask(9, [6, ...u16(3), 0xbe, 0xef])).toEqual(adu(9, 1, [6, ...u16(3), 0xbe, 0xef]));
    expect(device.holding.get(3)).toBe(0xbeef);
  });

  it('writes multiple coils and registers (FC 15, 16) and echoes their address and quantity', async () => {
    const { ask } = await rawClient();
    expect(await ask(1, [15, ...u16(10), ...u16(10), 2, 0b1100_1101, 0b0000_0001])).toEqual(adu(1, 1, [15, ...u16(10), ...u16(10)]));
    expect(Array.from({ length: 10 }, (_, i) => device.coils.get(10 + i))).toEqual([true, false, true, true, false, false, true, true, true, false]);
    expect(await ask(2, [16, ...u16(1), ...u16(2), 4, ...u16(10), ...u16(0x0102)])).toEqual(adu(2, 1, [16, ...u16(1), ...u16(2)]));
    expect([device.holding.get(1), device.holding.get(2)]).toEqual([10, 0x0102]);
    // A byte count that does not match the quantity.
    expect(await ask(3, [16, ...u16(1), ...u16(2), 2, ...u16(10)])).toEqual(adu(3, 1, [0x90, 3]));
    expect(await ask(4, [15, ...u16(10), ...u16(10), 1, 0xff])).toEqual(adu(4, 1, [0x8f, 3]));
  });

  it('answers an unknown function with exception 1', async () => {
    const { ask } = await rawClient();
    expect(await ask(1, [0x2b, 0x0e, 0x01, 0x00])).toEqual(adu(1, 1, [0xab, 1]));
    // Read discrete inputs: not served.
    expect(await ask(2, [2, ...u16(0), ...u16(1)])).toEqual(adu(2, 1, [0x82, 1]));
  });

  it('answers a handler error with its modbusErrorCode (2), any other error with exception 4', async () => {
    const { ask } = await rawClient();
    expect(await ask(1, [4, ...u16(999), ...u16(2)])).toEqual(adu(1, 1, [0x84, 2]));
    expect(await ask(2, [6, ...u16(1000), ...u16(1)])).toEqual(adu(2, 1, [0x86, 2]));
    expect(await ask(3, [3, ...u16(500), ...u16(1)])).toEqual(adu(3, 1, [0x83, 4]));
  });

  it('answers a quantity of 0 or above the limit with exception 3, and serves the limit itself', async () => {
    const { ask } = await rawClient();
    expect(await ask(1, [3, ...u16(0), ...u16(0)])).toEqual(adu(1, 1, [0x83, 3]));
    expect(await ask(2, [4, ...u16(0), ...u16(126)])).toEqual(adu(2, 1, [0x84, 3]));
    device.holding.set(124, 0xabcd);
    expect(await ask(3, [3, ...u16(0), ...u16(125)])).toEqual(adu(3, 1, [3, 250, ...Array<number>(248).fill(0), 0xab, 0xcd]));
    expect(await ask(4, [1, ...u16(0), ...u16(0)])).toEqual(adu(4, 1, [0x81, 3]));
    expect(await ask(5, [1, ...u16(0), ...u16(2001)])).toEqual(adu(5, 1, [0x81, 3]));
    expect(await ask(6, [15, ...u16(0), ...u16(0), 0])).toEqual(adu(6, 1, [0x8f, 3]));
  });

  it('refuses what no device can answer: a range past address 65535 (2), fewer registers than asked, an out-of-range code or a failing fault hook (4)', async () => {
    let faultThrows = false;
    const lenient = modbusTcpServer(
      {
        sync: () => undefined,
        fault: () => {
          if (faultThrows) throw new Error('fault hook broke');
          return null;
        },
        inputs: (_addr, length) => Array.from({ length: length - 1 }, () => 0),
        holding: (addr, length) => {
          if (addr === 7) throw Object.assign(new Error('odd code'), { modbusErrorCode: 300 });
          return Array.from({ length }, () => 0);
        },
        coil: () => false,
        setCoil: () => undefined,
        setRegister: () => undefined,
      },
      { host: '127.0.0.1', unitId: 1 },
    );
    await lenient.start();
    try {
      const { ask } = await rawClient(lenient.port);
      expect([...(await ask(1, [3, ...u16(0xffff), ...u16(2)])).subarray(7)]).toEqual([0x83, 2]);
      expect([...(await ask(2, [1, ...u16(0xfff0), ...u16(17)])).subarray(7)]).toEqual([0x81, 2]);
      expect([...(await ask(3, [16, ...u16(0xffff), ...u16(2), 4, 0, 1, 0, 2])).subarray(7)]).toEqual([0x90, 2]);
      expect([...(await ask(4, [3, ...u16(0xfffe), ...u16(2)])).subarray(7)]).toEqual([3, 4, 0, 0, 0, 0]);
      expect([...(await ask(5, [4, ...u16(0), ...u16(3)])).subarray(7)]).toEqual([0x84, 4]);
      expect([...(await ask(6, [3, ...u16(7), ...u16(1)])).subarray(7)]).toEqual([0x83, 4]);
      faultThrows = true;
      expect([...(await ask(7, [3, ...u16(0), ...u16(1)])).subarray(7)]).toEqual([0x83, 4]);
    } finally {
      await lenient.stop();
    }
  });

  it('does not answer another unit id', async () => {
    device.holding.set(0, 42);
    const { socket, next } = await rawClient();
    socket.write(Buffer.concat([adu(1, 2, [3, ...u16(0), ...u16(1)]), adu(2, 0, [3, ...u16(0), ...u16(1)]), adu(3, 1, [3, ...u16(0), ...u16(1)])]));
    // The only response is the one to unit 1.
    expect(await next()).toEqual(adu(3, 1, [3, 2, ...u16(42)]));
  });

  it('answers every unit id, under its own id, when serving unit 255', async () => {
    await server.stop();
    server = modbusTcpServer(device.handlers, { host: '127.0.0.1', unitId: 255 });
    await server.start();
    device.holding.set(0, 42);
    const { ask } = await rawClient();
    expect(await ask(1, [3, ...u16(0), ...u16(1)], 7)).toEqual(adu(1, 7, [3, 2, ...u16(42)]));
    expect(await ask(2, [3, ...u16(0), ...u16(1)], 1)).toEqual(adu(2, 1, [3, 2, ...u16(42)]));
  });

  it('answers nothing under a silent fault, and exception 4 under an exception fault', async () => {
    device.holding.set(0, 42);
    device.faults.push('silent', 'exception');
    const { socket, next } = await rawClient();
    socket.write(adu(1, 1, [3, ...u16(0), ...u16(1)]));
    socket.write(adu(2, 1, [6, ...u16(0), ...u16(7)]));
    socket.write(adu(3, 1, [3, ...u16(0), ...u16(1)]));
    expect(await next()).toEqual(adu(2, 1, [0x86, 4]));
    expect(await next()).toEqual(adu(3, 1, [3, 2, ...u16(42)]));
    expect(device.holding.get(0)).toBe(42);
  });

  it('answers a frame split across TCP writes, and two frames in one write', async () => {
    device.holding.set(5, 0x0a0b);
    const { socket, next } = await rawClient();
    const request = adu(0x7001, 1, [3, ...u16(5), ...u16(1)]);
    // Cut inside the MBAP header, then inside the PDU.
    await writeApart(socket, [request.subarray(0, 4), request.subarray(4, 9), request.subarray(9)]);
    expect(await next()).toEqual(adu(0x7001, 1, [3, 2, 0x0a, 0x0b]));
    socket.write(Buffer.concat([adu(0x7002, 1, [6, ...u16(5), ...u16(9)]), adu(0x7003, 1, [3, ...u16(5), ...u16(1)])]));
    expect(await next()).toEqual(adu(0x7002, 1, [6, ...u16(5), ...u16(9)]));
    expect(await next()).toEqual(adu(0x7003, 1, [3, 2, ...u16(9)]));
  });

  it('drops a connection that sends a protocol id other than 0', async () => {
    const { socket } = await rawClient();
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(adu(1, 1, [3, ...u16(0), ...u16(1)], 1));
    await closed;
    expect(socket.bytesRead).toBe(0);
  });

  it('drops a connection whose MBAP length no PDU has', async () => {
    const { socket } = await rawClient();
    const closed = new Promise((resolve) => socket.once('close', resolve));
    const frame = adu(1, 1, [3, ...u16(0), ...u16(1)]);
    frame.writeUInt16BE(1, 4);
    socket.write(frame);
    await closed;
    expect(socket.bytesRead).toBe(0);
  });

  it('stops, dropping its connections, and starts again on the same port', async () => {
    device.holding.set(0, 42);
    const port = server.port;
    const first = await rawClient();
    expect(await first.ask(1, [3, ...u16(0), ...u16(1)])).toEqual(adu(1, 1, [3, 2, ...u16(42)]));
    const dropped = new Promise((resolve) => first.socket.once('close', resolve));
    await server.stop();
    await dropped;
    await server.start();
    expect(server.port).toBe(port);
    const again = await rawClient();
    expect(await again.ask(2, [3, ...u16(0), ...u16(1)])).toEqual(adu(2, 1, [3, 2, ...u16(42)]));
  });
});

describe('Modbus TCP server, modbus-serial client', () => {
  it('serves reads, writes and an exception', async () => {
    device.holding.set(0, 1234);
    device.inputs.set(3, 77);
    device.coils.set(1, true);
    const ModbusClient = await loadModbusClient();
    const client = new ModbusClient();
    client.setTimeout(5000);
    await client.connectTCP('127.0.0.1', { port: server.port });
    try {
      client.setID(1);
      expect((await client.readHoldingRegisters(0, 2)).data).toEqual([1234, 0]);
      expect((await client.readInputRegisters(3, 1)).data).toEqual([77]);
      expect((await client.readCoils(0, 3)).data.slice(0, 3)).toEqual([false, true, false]);
      await client.writeCoil(2, true);
      await client.writeRegister(4, 4321);
      await client.writeRegisters(5, [6, 7]);
      await client.writeCoils(8, [true, false, true]);
      expect([device.coils.get(2), device.holding.get(4), device.holding.get(5), device.holding.get(6)]).toEqual([true, 4321, 6, 7]);
      expect([8, 9, 10].map((a) => device.coils.get(a))).toEqual([true, false, true]);
      await expect(client.readHoldingRegisters(500, 1)).rejects.toMatchObject({ modbusCode: 4 });
    } finally {
      await new Promise<void>((resolve) => client.close(() => resolve()));
    }
  });
});
