/**
 * What the simulated devices on a Modbus TCP bus share: the simulated hot water tank
 * (`modbus-tank.ts`) and the SG Ready heat pump (`sg-ready-heat-pump.ts`), whose meter and tank
 * sensor sit at the tank's addresses. A server that can stop and listen again on its port, the
 * register map, the meter's input words, and the server handlers that bring the device up to its
 * clock before it answers each request (or answers with an injected fault), served by our own
 * Modbus TCP server (`modbus-tcp-server.ts`).
 */
import { createServer } from 'node:net';
import { modbusTcpServer, type RegisterHandlers } from './modbus-tcp-server.js';
import { encodeRaw } from '../../devices/modbus/codec.js';

/** The register map of the built-in profile `wattshift-sim-tank` (the heat pump's relays start at the same addresses). */
export const simTankRegisters = {
  relayCoil: 0,
  leaseHolding: 0x0200,
  powerInput: 0x000c,
  energyInput: 0x0048,
  temperatureInput: 0x0100,
} as const;

/** A free TCP port on `host`, for a simulator that must name its port before it listens. */
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

/** An error the server answers as the exception `code` (2: illegal data address, 4: device failure). */
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

/** The server's handlers of a simulated device: every request answered against fresh physics. */
export function simRegisterHandlers(device: SimRegisters): RegisterHandlers {
  return {
    sync: () => device.sync(),
    ...(device.fault ? { fault: () => device.fault!() } : {}),
    inputs: (addr, length) => {
      const words = device.inputWords();
      return Array.from({ length }, (_, i) => {
        const w = words.get(addr + i);
        if (w === undefined) throw modbusError(2, `no input register ${addr + i}`);
        return w;
      });
    },
    holding: (addr, length) => device.holding(addr, length),
    coil: (addr) => device.coil(addr),
    setCoil: (addr, value) => device.setCoil(addr, value),
    setRegister: (addr, value) => device.setRegister(addr, value),
  };
}

/** float32 words as the wire carries any value: NaN and ±Inf as their IEEE 754 single bit patterns (which the encoder refuses to produce), others clamped to its range. */
const f32 = (v: number): number[] =>
  Number.isNaN(v)
    ? [0x7fc0, 0]
    : v === Number.POSITIVE_INFINITY
      ? [0x7f80, 0]
      : v === Number.NEGATIVE_INFINITY
        ? [0xff80, 0]
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

/** Starts serving `handlers` and returns `device` with its server's address and controls. */
export async function serveModbusSim<T extends object>(
  handlers: RegisterHandlers,
  options: SimServerOptions,
  device: T,
): Promise<T & ModbusSimServer> {
  const host = options.host ?? '127.0.0.1';
  const unitId = options.unitId ?? 1;
  const server = modbusTcpServer(handlers, { host, unitId, ...(options.port !== undefined ? { port: options.port } : {}) });
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
