/**
 * A simulated hot water heater speaking real Modbus TCP (our own server, `modbus-tcp-server.ts`), with the
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
import type { Clock } from '../../ports.js';
import {
  meterInputWords,
  modbusError,
  serveModbusSim,
  simRegisterHandlers,
  simTankRegisters,
  type ModbusSimServer,
  type SimServerOptions,
} from './modbus-sim.js';
import { TankPhysics, type TankPhysicsOptions } from './tank-physics.js';

// Where the tests and the demo have long taken it from.
export { findFreePort } from './modbus-sim.js';

export type TankFault = 'nan' | 'inf' | 'out-of-range' | 'counter-low' | 'counter-high' | 'silent' | 'exception' | null;

/** How far off the counter reads under the `counter-low` / `counter-high` faults, kWh. */
export const counterGlitchKwh = 40;

export interface SimulatedTankOptions extends Partial<TankPhysicsOptions>, SimServerOptions {
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

export interface SimulatedTank extends ModbusSimServer {
  readonly physics: TankPhysics;
  state(): TankSnapshot;
  /** Moves simulated time forward by `ms` (in addition to any clock). */
  advance(ms: number): void;
  /** Brings physics up to the clock (no-op without one). */
  sync(): void;
  setFault(fault: TankFault): void;
  /** Writes received: to the relay coil (and how many changed it), and to the release timer. */
  writes(): { coil: number; coilChanges: number; timer: number };
}

export async function startSimulatedTank(options: SimulatedTankOptions = {}): Promise<SimulatedTank> {
  const clock = options.clock;
  const physics = new TankPhysics({ ...options, startMs: options.startMs ?? clock?.nowMs() ?? Date.UTC(2026, 0, 1) });
  let fault: TankFault = null;
  const timer = options.releaseTimer ?? true;
  const writes = { coil: 0, coilChanges: 0, timer: 0 };

  const sync = (): void => {
    if (clock) physics.advanceTo(clock.nowMs());
  };

  const inputWords = (): Map<number, number> => {
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
    return meterInputWords({ powerW: power, energyKwh: energy, tempTenthsC: temp });
  };

  const handlers = simRegisterHandlers({
    sync,
    fault: () => (fault === 'silent' || fault === 'exception' ? fault : null),
    inputWords,
    holding: (addr, length) =>
      Array.from({ length }, (_, i) => {
        if (!timer || addr + i !== simTankRegisters.leaseHolding) throw modbusError(2, `no holding register ${addr + i}`);
        return Math.min(0xffff, physics.leaseRemainingS);
      }),
    coil: (addr) => {
      if (addr !== simTankRegisters.relayCoil) throw modbusError(2, `no coil ${addr}`);
      return physics.blocked;
    },
    setCoil: (addr, value) => {
      if (addr !== simTankRegisters.relayCoil) throw modbusError(2, `no coil ${addr}`);
      writes.coil++;
      if (physics.blocked !== value) writes.coilChanges++;
      physics.setBlocked(value);
    },
    setRegister: (addr, value) => {
      if (!timer || addr !== simTankRegisters.leaseHolding) throw modbusError(2, `no holding register ${addr}`);
      writes.timer++;
      physics.setLeaseS(value);
    },
  });

  return serveModbusSim(handlers, options, {
    physics,
    state: (): TankSnapshot => {
      sync();
      return {
        nowMs: physics.nowMs,
        tempC: physics.tempC,
        blocked: physics.blocked,
        heating: physics.heating,
        powerW: physics.powerW,
        counterKwh: physics.counterKwh,
        trueEnergyKwh: physics.trueEnergyKwh,
        drawnKwh: physics.drawnKwh,
        leaseRemainingS: physics.leaseRemainingS,
      };
    },
    advance: (ms: number) => physics.advanceTo(physics.nowMs + ms),
    sync,
    setFault: (f: TankFault) => {
      fault = f;
    },
    writes: () => ({ ...writes }),
  });
}
