/**
 * What the simulated devices on a Modbus TCP bus share: the simulated hot water tank
 * (`modbus-tank.ts`) and the SG Ready heat pump (`sg-ready-heat-pump.ts`), whose meter and tank
 * sensor sit at the tank's addresses. A server that can stop and listen again on its port, the
 * register map, the meter's input words, and a service vector that brings the device up to its
 * clock before it answers each request (or answers with an injected fault).
 */
import { createServer } from 'node:net';
import { ServerTCP, type IServiceVector } from 'modbus-serial';
import { encodeRaw } from '../../devices/modbus/codec.js';

/** The register map of the built-in profile `wattshift-sim-tank` (the heat pump's relays start at the same addresses). */
export const simTankRegisters = {
  relayCoil: 0,
  leaseHolding: 0x0200,
  powerInput: 0x000c,
  energyInput: 0x0048,
  temperatureInput: 0x0100,
} as const;

/** A free TCP port on `host` (ServerTCP maps port 0 to 502, so we pick one ourselves). */
export function findFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** A Modbus TCP server for a simulator's service vector that can stop and listen again on its port. */
export function modbusTcpServer(vector: IServiceVector, options: { host: string; unitId: number; port?: number }): { readonly port: number; start(): Promise<void>; stop(): Promise<void> } {
  let server: ServerTCP | null = null;
  let port = options.port ?? 0;
  const listen = async (): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      if (port === 0 || (attempt > 0 && options.port === undefined)) port = await findFreePort(options.host);
      try {
        server = await new Promise<ServerTCP>((resolve, reject) => {
          const s = new ServerTCP(vector, { host: options.host, port, unitID: options.unitId });
          s.once('initialized', () => resolve(s));
          s.once('serverError', (err) => reject(err));
        });
        server.on('socketError', () => undefined);
        return;
      } catch (err) {
        if (attempt >= 4 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
        await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
      }
    }
  };
  return {
    get port() {
      return port;
    },
    start: async () => {
      if (!server) await listen();
    },
    stop: async () => {
      const s = server;
      server = null;
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
}

/** An error modbus-serial answers as the exception `code` (2: illegal data address, 4: device failure). */
export function modbusError(code: number, message: string): Error {
  return Object.assign(new Error(message), { modbusErrorCode: code });
}

/** A simulated device's registers, for `simServiceVector`. Each handler throws `modbusError` where there is no such address. */
export interface SimRegisters {
  /** Brings the device up to its clock; runs before every request is answered. */
  sync(): void;
  /** An injected fault: never answer (`silent`), or answer with exception 4 (`exception`). */
  fault?(): 'silent' | 'exception' | null;
  /** The input registers now, by address. */
  inputWords(): Map<number, number>;
  holding(addr: number, length: number): number[];
  coil(addr: number): boolean;
  setCoil(addr: number, value: boolean): void;
  setRegister(addr: number, value: number): void;
}

type Cb<T> = (err: Error | null, value: T) => void;

/** The service vector of a simulated device: every request answered against fresh physics. */
export function simServiceVector(device: SimRegisters): IServiceVector {
  const answer = <T>(cb: Cb<T>, produce: () => T): void => {
    const fault = device.fault?.() ?? null;
    if (fault === 'silent') return;
    if (fault === 'exception') return cb(modbusError(4, 'simulated device failure'), undefined as T);
    device.sync();
    let value: T;
    try {
      value = produce();
    } catch (err) {
      return cb(err as Error, undefined as T);
    }
    cb(null, value);
  };
  const inputs = (addr: number, length: number): number[] => {
    const words = device.inputWords();
    return Array.from({ length }, (_, i) => {
      const w = words.get(addr + i);
      if (w === undefined) throw modbusError(2, `no input register ${addr + i}`);
      return w;
    });
  };
  // Callback-style handlers (modbus-serial picks the style by arity).
  return {
    getInputRegister: (addr: number, _unit: number, cb: Cb<number>) => answer(cb, () => inputs(addr, 1)[0]!),
    getMultipleInputRegisters: (addr: number, length: number, _unit: number, cb: Cb<number[]>) => answer(cb, () => inputs(addr, length)),
    getHoldingRegister: (addr: number, _unit: number, cb: Cb<number>) => answer(cb, () => device.holding(addr, 1)[0]!),
    getMultipleHoldingRegisters: (addr: number, length: number, _unit: number, cb: Cb<number[]>) => answer(cb, () => device.holding(addr, length)),
    getCoil: (addr: number, _unit: number, cb: Cb<boolean>) => answer(cb, () => device.coil(addr)),
    setCoil: (addr: number, value: boolean, _unit: number, cb: (err: Error | null) => void) => answer<void>(cb, () => device.setCoil(addr, value)),
    setRegister: (addr: number, value: number, _unit: number, cb: (err: Error | null) => void) => answer<void>(cb, () => device.setRegister(addr, value)),
  };
}

/** float32 words as the wire carries any value: NaN and ±Inf as their IEEE 754 single bit patterns (which the encoder refuses to produce), others clamped to its range. */
const f32 = (v: number): number[] =>
  Number.isNaN(v) ? [0x7fc0, 0]
  : v === Number.POSITIVE_INFINITY ? [0x7f80, 0]
  : v === Number.NEGATIVE_INFINITY ? [0xff80, 0]
  : encodeRaw(Math.max(-3.4e38, Math.min(3.4e38, v)), { type: 'float32' });

/** The meter's input words (power W and energy kWh in the SDM120 float32 layout) and the tank sensor's (0.1 °C, int16, clamped). */
export function meterInputWords(v: { powerW: number; energyKwh: number; tempTenthsC: number }): Map<number, number> {
  const words = new Map<number, number>();
  f32(v.powerW).forEach((w, i) => words.set(simTankRegisters.powerInput + i, w));
  f32(v.energyKwh).forEach((w, i) => words.set(simTankRegisters.energyInput + i, w));
  words.set(simTankRegisters.temperatureInput, encodeRaw(Math.max(-32768, Math.min(32767, v.tempTenthsC)), { type: 'int16' })[0]!);
  return words;
}

export interface SimServerOptions {
  /** TCP port; 0 or absent picks a free one. */
  port?: number;
  host?: string;
  /** Answer only this unit id (default 1); 255 answers all. */
  unitId?: number;
}

/** The server side of a simulated device. */
export interface ModbusSimServer {
  readonly host: string;
  /** The port it listens on (a restart without a fixed port may move it). */
  readonly port: number;
  readonly unitId: number;
  /** Closes the server (connections drop) but keeps the physics. */
  stopServer(): Promise<void>;
  /** Listens again on the same port. */
  startServer(): Promise<void>;
  close(): Promise<void>;
}

/** Starts serving `vector` and returns `device` with its server's address and controls. */
export async function serveModbusSim<T extends object>(vector: IServiceVector, options: SimServerOptions, device: T): Promise<T & ModbusSimServer> {
  const host = options.host ?? '127.0.0.1';
  const unitId = options.unitId ?? 1;
  const server = modbusTcpServer(vector, { host, unitId, ...(options.port !== undefined ? { port: options.port } : {}) });
  await server.start();
  const served: ModbusSimServer = {
    host,
    get port() {
      return server.port;
    },
    unitId,
    stopServer: server.stop,
    startServer: server.start,
    close: server.stop,
  };
  // Descriptors, not a spread: `port` stays a getter.
  return Object.defineProperties(device, Object.getOwnPropertyDescriptors(served)) as T & ModbusSimServer;
}
