/**
 * The Modbus TCP server of the simulated devices, written from the specification (Modbus
 * Application Protocol V1.1b3 and Modbus Messaging on TCP/IP Implementation Guide V1.0b): MBAP
 * framing and function codes 1, 3, 4, 5, 6, 15 and 16, with exceptions 1 (illegal function),
 * 2 (illegal data address), 3 (illegal data value) and 4 (server device failure). It is not the
 * library the daemon's client uses, so the two check each other on the wire; and it answers each
 * request as soon as it is read, with no timer between, so a simulated home on the virtual clock
 * sees every answer before time moves.
 */
import { createServer, type Server, type Socket } from 'node:net';

/** What the server reads and writes; a handler throws an error with `modbusErrorCode` for an exception. */
export interface RegisterHandlers {
  /** Runs before every request is answered (brings the device up to its clock). */
  sync(): void;
  /** An injected fault: never answer (`silent`), or answer with exception 4 (`exception`). */
  fault?(): 'silent' | 'exception' | null;
  inputs(addr: number, length: number): number[];
  holding(addr: number, length: number): number[];
  coil(addr: number): boolean;
  setCoil(addr: number, value: boolean): void;
  setRegister(addr: number, value: number): void;
}

/** MBAP header: transaction id, protocol id (0), length (unit id and PDU), unit id. */
const mbapBytes = 7;
/** Most registers one read may ask for (the specification's 125) and coils (2000). */
const maxReadWords = 125;
const maxReadCoils = 2000;

class ModbusException extends Error {
  constructor(readonly code: number) {
    super(`Modbus exception ${code}`);
  }
}

const exceptionOf = (err: unknown): number => {
  if (err instanceof ModbusException) return err.code;
  const code = (err as { modbusErrorCode?: unknown })?.modbusErrorCode;
  return typeof code === 'number' && Number.isInteger(code) && code >= 1 && code <= 0xff ? code : 4;
};

const words = (values: readonly number[]): Buffer => {
  const b = Buffer.alloc(values.length * 2);
  values.forEach((v, i) => b.writeUInt16BE(v & 0xffff, i * 2));
  return b;
};

/** Answers one PDU (function code first); throws ModbusException or a handler's error. */
function answer(pdu: Buffer, h: RegisterHandlers): Buffer {
  const fc = pdu[0]!;
  const need = (bytes: number): void => {
    if (pdu.length < bytes) throw new ModbusException(3);
  };
  const addr = (): number => pdu.readUInt16BE(1);
  /** A range past the last address (65535) is an illegal data address. */
  const inRange = (qty: number): void => {
    if (addr() + qty > 0x10000) throw new ModbusException(2);
  };
  switch (fc) {
    case 1: {
      need(5);
      const qty = pdu.readUInt16BE(3);
      if (qty < 1 || qty > maxReadCoils) throw new ModbusException(3);
      inRange(qty);
      const bits = Buffer.alloc(Math.ceil(qty / 8));
      for (let i = 0; i < qty; i++) if (h.coil(addr() + i)) bits[i >> 3]! |= 1 << (i & 7);
      return Buffer.concat([Buffer.from([fc, bits.length]), bits]);
    }
    case 3:
    case 4: {
      need(5);
      const qty = pdu.readUInt16BE(3);
      if (qty < 1 || qty > maxReadWords) throw new ModbusException(3);
      inRange(qty);
      const values = fc === 3 ? h.holding(addr(), qty) : h.inputs(addr(), qty);
      if (values.length !== qty) throw new ModbusException(4);
      return Buffer.concat([Buffer.from([fc, qty * 2]), words(values)]);
    }
    case 5: {
      need(5);
      const v = pdu.readUInt16BE(3);
      if (v !== 0xff00 && v !== 0x0000) throw new ModbusException(3);
      h.setCoil(addr(), v === 0xff00);
      return Buffer.from(pdu.subarray(0, 5));
    }
    case 6: {
      need(5);
      h.setRegister(addr(), pdu.readUInt16BE(3));
      return Buffer.from(pdu.subarray(0, 5));
    }
    case 15:
    case 16: {
      need(6);
      const qty = pdu.readUInt16BE(3);
      const byteCount = pdu[5]!;
      const expected = fc === 15 ? Math.ceil(qty / 8) : qty * 2;
      if (qty < 1 || byteCount !== expected) throw new ModbusException(3);
      inRange(qty);
      need(6 + byteCount);
      for (let i = 0; i < qty; i++) {
        if (fc === 15) h.setCoil(addr() + i, ((pdu[6 + (i >> 3)]! >> (i & 7)) & 1) === 1);
        else h.setRegister(addr() + i, pdu.readUInt16BE(6 + i * 2));
      }
      return Buffer.from(pdu.subarray(0, 5));
    }
    default:
      throw new ModbusException(1);
  }
}

/** Serves one connection: frames by the MBAP length, answers each in order. */
function serveConnection(socket: Socket, h: RegisterHandlers, unitId: number): void {
  let pending: Buffer = Buffer.alloc(0);
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= mbapBytes) {
      const length = pending.readUInt16BE(4);
      // Not Modbus (protocol id other than 0, or a length no PDU has): drop the connection, as devices do.
      if (pending.readUInt16BE(2) !== 0 || length < 2 || length > 254) {
        socket.destroy();
        return;
      }
      if (pending.length < 6 + length) return;
      const frame = pending.subarray(0, 6 + length);
      pending = pending.subarray(6 + length);
      const unit = frame[6]!;
      if (unitId !== 255 && unit !== unitId) continue;
      const pdu = frame.subarray(mbapBytes);
      let reply: Buffer;
      try {
        const fault = h.fault?.() ?? null;
        if (fault === 'silent') continue;
        if (fault === 'exception') throw new ModbusException(4);
        h.sync();
        reply = answer(pdu, h);
      } catch (err) {
        reply = Buffer.from([pdu[0]! | 0x80, exceptionOf(err)]);
      }
      const header = Buffer.alloc(mbapBytes);
      header.writeUInt16BE(frame.readUInt16BE(0), 0);
      header.writeUInt16BE(0, 2);
      header.writeUInt16BE(reply.length + 1, 4);
      header[6] = unit;
      socket.write(Buffer.concat([header, reply]));
    }
  });
}

export interface ModbusTcpServer {
  readonly port: number;
  /** Listens (again) on its port; the first start picks a free one when none was given. */
  start(): Promise<void>;
  /** Stops listening and drops every connection. */
  stop(): Promise<void>;
}

/** A Modbus TCP server for `handlers` on `host`, answering `unitId` (255: every unit). */
export function modbusTcpServer(handlers: RegisterHandlers, options: { host: string; unitId: number; port?: number }): ModbusTcpServer {
  let server: Server | null = null;
  let port = options.port ?? 0;
  const sockets = new Set<Socket>();
  return {
    get port() {
      return port;
    },
    async start() {
      if (server) return;
      const s = createServer((socket) => {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
        serveConnection(socket, handlers, options.unitId);
      });
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(port, options.host, () => {
          s.off('error', reject);
          resolve();
        });
      });
      const address = s.address();
      if (address && typeof address === 'object') port = address.port;
      server = s;
    },
    async stop() {
      const s = server;
      server = null;
      if (!s) return;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
}
