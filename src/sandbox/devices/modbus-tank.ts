/**
 * A simulated hot water heater speaking real Modbus TCP (modbus-serial `ServerTCP`), with the
 * register map of the built-in profile `wattshift-sim-tank`:
 *
 *   coil 0            relay, energised = heating blocked (FC01/FC05)
 *   holding 0x0200    release timer, s (uint16): the relay is released when it runs out; 0 = none
 *   input 0x000C      active power, W (float32, SDM120 layout)
 *   input 0x0048      import energy counter, kWh (float32, SDM120 layout)
 *   input 0x0100      temperature, 0.1 °C (int16)
 *
 * The power and energy registers are those of Eastron's SDM120/SDM230 "Modbus Protocol Input
 * Registers" table (30013 active power, 30073 import active energy; see profiles/eastron-sdm120.yaml
 * for the document), so the eastron-sdm120 profile reads the simulator as it reads the meter.
 *
 * With `releaseTimer: false` it is a plain relay board as Waveshare documents its "Modbus RTU
 * Relay" (https://www.waveshare.com/wiki/Modbus_RTU_Relay): relay n is coil n−1, FC05 writes
 * 0xFF00/0x0000, FC01 reads, and nothing releases an energised coil but a write or a power cut;
 * holding 0x0200 then does not exist (exception 2). The board's vendor-specific flash commands are
 * not modelled. `writes()` counts the writes the device received (relay wear, tests).
 *
 * Physics advance to `clock.nowMs()` on every request when a Clock is given, and by `advance(ms)`.
 * Faults can be injected for tests: NaN, ±Inf or out-of-range values, a counter that reads
 * `counterGlitchKwh` low (not below zero) or high (a garbled read), silence (never answers), Modbus exceptions,
 * and the server going away and coming back on the same port.
 */
import { createServer } from 'node:net';
import { ServerTCP, type IServiceVector } from 'modbus-serial';
import type { Clock } from '../../ports.js';
import { encodeRaw } from '../../devices/modbus/codec.js';
import { TankPhysics, type TankPhysicsOptions } from './tank-physics.js';

export const simTankRegisters = {
  relayCoil: 0,
  leaseHolding: 0x0200,
  powerInput: 0x000c,
  energyInput: 0x0048,
  temperatureInput: 0x0100,
} as const;

export type TankFault = 'nan' | 'inf' | 'out-of-range' | 'counter-low' | 'counter-high' | 'silent' | 'exception' | null;

/** How far off the counter reads under the `counter-low` / `counter-high` faults, kWh. */
export const counterGlitchKwh = 40;

export interface SimulatedTankOptions extends Partial<TankPhysicsOptions> {
  /** TCP port; 0 or absent picks a free one. */
  port?: number;
  host?: string;
  /** Answer only this unit id (default 1); 255 answers all. */
  unitId?: number;
  /** When given, physics follow this clock on every request and `sync()`. */
  clock?: Clock;
  /** Whether the board has the release-timer register (default true). */
  releaseTimer?: boolean;
}

export interface TankSnapshot {
  nowMs: number;
  tempC: number;
  blocked: boolean;
  heating: boolean;
  powerW: number;
  counterKwh: number;
  trueEnergyKwh: number;
  drawnKwh: number;
  leaseRemainingS: number;
}

export interface SimulatedTank {
  readonly host: string;
  readonly port: number;
  readonly unitId: number;
  readonly physics: TankPhysics;
  state(): TankSnapshot;
  /** Moves simulated time forward by `ms` (in addition to any clock). */
  advance(ms: number): void;
  /** Brings physics up to the clock (no-op without one). */
  sync(): void;
  setFault(fault: TankFault): void;
  /** Writes received: to the relay coil (and how many changed it), and to the release timer. */
  writes(): { coil: number; coilChanges: number; timer: number };
  /** Closes the server (connections drop) but keeps the physics. */
  stopServer(): Promise<void>;
  /** Listens again on the same port. */
  startServer(): Promise<void>;
  close(): Promise<void>;
}

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

type Cb<T> = (err: Error | null, value: T) => void;

function modbusError(code: number, message: string): Error {
  return Object.assign(new Error(message), { modbusErrorCode: code });
}

export async function startSimulatedTank(options: SimulatedTankOptions = {}): Promise<SimulatedTank> {
  const host = options.host ?? '127.0.0.1';
  const unitId = options.unitId ?? 1;
  const clock = options.clock;
  const physics = new TankPhysics({ ...options, startMs: options.startMs ?? clock?.nowMs() ?? Date.UTC(2026, 0, 1) });
  let fault: TankFault = null;
  const timer = options.releaseTimer ?? true;
  const writes = { coil: 0, coilChanges: 0, timer: 0 };

  const sync = (): void => {
    if (clock) physics.advanceTo(clock.nowMs());
  };

  const inputWords = (): Map<number, number> => {
    const words = new Map<number, number>();
    let power = physics.powerW;
    let energy = physics.counterKwh;
    let temp = Math.round(physics.tempC * 10);
    if (fault === 'nan') energy = Number.NaN;
    if (fault === 'inf') {
      energy = Number.POSITIVE_INFINITY;
      power = Number.NEGATIVE_INFINITY;
    }
    if (fault === 'counter-low') energy = Math.max(0, energy - counterGlitchKwh);
    if (fault === 'counter-high') energy += counterGlitchKwh;
    if (fault === 'out-of-range') {
      power = 1e9;
      energy = -5;
      temp = 30000;
    }
    // The IEEE 754 single bit patterns of NaN and ±Inf, which the encoder refuses to produce.
    const f32 = (v: number): number[] =>
      Number.isNaN(v) ? [0x7fc0, 0]
      : v === Number.POSITIVE_INFINITY ? [0x7f80, 0]
      : v === Number.NEGATIVE_INFINITY ? [0xff80, 0]
      : encodeRaw(Math.max(-3.4e38, Math.min(3.4e38, v)), { type: 'float32' });
    f32(power).forEach((w, i) => words.set(simTankRegisters.powerInput + i, w));
    f32(energy).forEach((w, i) => words.set(simTankRegisters.energyInput + i, w));
    words.set(simTankRegisters.temperatureInput, encodeRaw(Math.max(-32768, Math.min(32767, temp)), { type: 'int16' })[0]!);
    return words;
  };

  /** Runs a request against fresh physics, honouring the injected fault. */
  const answer = <T>(cb: Cb<T>, produce: () => T): void => {
    if (fault === 'silent') return;
    if (fault === 'exception') return cb(modbusError(4, 'simulated device failure'), undefined as T);
    sync();
    let value: T;
    try {
      value = produce();
    } catch (err) {
      return cb(err as Error, undefined as T);
    }
    cb(null, value);
  };

  const readInputs = (addr: number, length: number): number[] => {
    const words = inputWords();
    return Array.from({ length }, (_, i) => {
      const w = words.get(addr + i);
      if (w === undefined) throw modbusError(2, `no input register ${addr + i}`);
      return w;
    });
  };

  const readHolding = (addr: number, length: number): number[] =>
    Array.from({ length }, (_, i) => {
      if (!timer || addr + i !== simTankRegisters.leaseHolding) throw modbusError(2, `no holding register ${addr + i}`);
      return Math.min(0xffff, physics.leaseRemainingS);
    });

  // Callback-style handlers (modbus-serial picks the style by arity).
  const vector: IServiceVector = {
    getInputRegister: (addr: number, _unit: number, cb: Cb<number>) => answer(cb, () => readInputs(addr, 1)[0]!),
    getMultipleInputRegisters: (addr: number, length: number, _unit: number, cb: Cb<number[]>) => answer(cb, () => readInputs(addr, length)),
    getHoldingRegister: (addr: number, _unit: number, cb: Cb<number>) => answer(cb, () => readHolding(addr, 1)[0]!),
    getMultipleHoldingRegisters: (addr: number, length: number, _unit: number, cb: Cb<number[]>) => answer(cb, () => readHolding(addr, length)),
    getCoil: (addr: number, _unit: number, cb: Cb<boolean>) =>
      answer(cb, () => {
        if (addr !== simTankRegisters.relayCoil) throw modbusError(2, `no coil ${addr}`);
        return physics.blocked;
      }),
    setCoil: (addr: number, value: boolean, _unit: number, cb: (err: Error | null) => void) =>
      answer<void>(cb, () => {
        if (addr !== simTankRegisters.relayCoil) throw modbusError(2, `no coil ${addr}`);
        writes.coil++;
        if (physics.blocked !== value) writes.coilChanges++;
        physics.setBlocked(value);
      }),
    setRegister: (addr: number, value: number, _unit: number, cb: (err: Error | null) => void) =>
      answer<void>(cb, () => {
        if (!timer || addr !== simTankRegisters.leaseHolding) throw modbusError(2, `no holding register ${addr}`);
        writes.timer++;
        physics.setLeaseS(value);
      }),
  };

  const server = modbusTcpServer(vector, { host, unitId, ...(options.port !== undefined ? { port: options.port } : {}) });
  const stopServer = server.stop;
  await server.start();

  return {
    host,
    get port() {
      return server.port;
    },
    unitId,
    physics,
    state: () => {
      sync();
      return {
        nowMs: physics.nowMs, tempC: physics.tempC, blocked: physics.blocked, heating: physics.heating,
        powerW: physics.powerW, counterKwh: physics.counterKwh, trueEnergyKwh: physics.trueEnergyKwh,
        drawnKwh: physics.drawnKwh, leaseRemainingS: physics.leaseRemainingS,
      };
    },
    advance: (ms) => physics.advanceTo(physics.nowMs + ms),
    sync,
    setFault: (f) => {
      fault = f;
    },
    writes: () => ({ ...writes }),
    stopServer,
    startServer: server.start,
    close: stopServer,
  };
}
