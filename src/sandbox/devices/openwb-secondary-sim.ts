/**
 * An openWB series 2 wallbox in "secondary" mode over Modbus TCP, connector 1, as openWB's own
 * software 2.x behaves (openWB/core: packages/helpermodules/modbusserver.py and
 * packages/modules/internal_chargepoint_handler/internal_chargepoint_handler.py; the register map
 * is profiles/openwb-secondary.yaml):
 * - input registers (FC04; FC03 reads the same values) 10100 power W and 10102 imported energy Wh,
 *   both int32 big-endian; 10114 plug state and 10115 charge state (1 = yes);
 * - holding register 10171, written with FC06: the charging current in 0.01 A (0: no charging);
 * - its watchdog: every read of an address from 10100 up is a heartbeat; with none for 80 s it sets
 *   the current to 0 and stops charging, and stays there until the current is written again.
 *   There is no other timer on the device.
 * The energy register counts whole Wh, as the device's own does. The car draws the set current on
 * three phases at 230 V while plugged in and not full.
 */
import type { Clock } from '../../ports.js';
import { pluggedBattery, type EvBattery, type EvBatteryOptions } from './ev-battery.js';
import { modbusTcpServer, type ModbusTcpServer } from './modbus-tcp-server.js';

/** openWB's heartbeat timeout: "no read for 80 s" stops the charge. */
export const openWbWatchdogMs = 80_000;
const voltageV = 230;
const phases = 3;
const connectorBase = 10100;

export interface OpenWbPlug {
  atMs: number;
  untilMs: number;
  battery: EvBatteryOptions | EvBattery;
}

export interface OpenWbSecondarySim {
  readonly port: number;
  start(): Promise<void>;
  close(): Promise<void>;
  /** Brings the device up to the clock (reads do this too) and says what it does now. */
  state(): { setA: number; charging: boolean; powerW: number; totalWh: number; watchdogTripped: boolean };
}

const illegalAddress = (): Error => Object.assign(new Error('illegal data address'), { modbusErrorCode: 2 });

export function createOpenWbSecondarySim(options: {
  clock: Clock;
  host?: string;
  port?: number;
  plugs: OpenWbPlug[];
  startWh?: number;
}): OpenWbSecondarySim {
  const { clock } = options;
  let atMs = clock.nowMs();
  let setA = 0;
  let totalWh = options.startWh ?? 1_000_000;
  /** Energy below one Wh not yet on the integer counter. */
  let pendingWh = 0;
  let lastHeartbeatMs = atMs;
  let tripped = false;
  const plugs = options.plugs.map((p) => ({ ...p, car: pluggedBattery(p.battery) }));
  const plugAt = (ms: number) => plugs.find((p) => p.atMs <= ms && ms < p.untilMs);
  const drawW = (ms: number): number => {
    const car = plugAt(ms)?.car;
    return car && !car.full ? setA * phases * voltageV : 0;
  };

  /** Runs the device from `atMs` to `toMs` at the current set, in steps that end at the watchdog and plug edges. */
  function runTo(toMs: number): void {
    while (atMs < toMs) {
      const edges = [toMs, ...plugs.flatMap((p) => [p.atMs, p.untilMs]).filter((e) => e > atMs)];
      if (!tripped) edges.push(lastHeartbeatMs + openWbWatchdogMs);
      const car = plugAt(atMs)?.car;
      const w = drawW(atMs);
      if (car && w > 0) edges.push(atMs + Math.ceil(car.msToFull(w)));
      const stepEnd = Math.max(atMs + 1, Math.min(...edges.filter((e) => e > atMs)));
      const wh = (w * (stepEnd - atMs)) / 3_600_000;
      if (car && wh > 0) car.charge(Math.min(wh / 1000, car.acKwhToFull()));
      pendingWh += wh;
      const whole = Math.floor(pendingWh);
      totalWh += whole;
      pendingWh -= whole;
      atMs = stepEnd;
      if (!tripped && atMs >= lastHeartbeatMs + openWbWatchdogMs) {
        tripped = true;
        setA = 0;
      }
    }
  }
  const sync = (): void => runTo(Math.max(atMs, clock.nowMs()));

  const int32 = (v: number): number[] => [(v >>> 16) & 0xffff, v & 0xffff];
  const valueAt = (addr: number): number[] => {
    const p = plugAt(atMs);
    switch (addr - connectorBase) {
      case 0:
        return int32(Math.round(drawW(atMs)));
      case 2:
        return int32(totalWh);
      case 14:
        return [p ? 1 : 0];
      case 15:
        return [drawW(atMs) > 0 ? 1 : 0];
      default:
        return [0];
    }
  };
  const read = (addr: number, length: number): number[] => {
    if (addr >= connectorBase) {
      lastHeartbeatMs = atMs;
      tripped = false;
    }
    const out: number[] = [];
    while (out.length < length) {
      const a = addr + out.length;
      const words = valueAt(a);
      // A read starting in the middle of a 32-bit value gets its low word.
      out.push(...(a - connectorBase === 1 || a - connectorBase === 3 ? [valueAt(a - 1)[1]!] : words));
    }
    return out.slice(0, length);
  };

  const server: ModbusTcpServer = modbusTcpServer(
    {
      sync,
      inputs: read,
      holding: read,
      coil: () => {
        throw illegalAddress();
      },
      setCoil: () => {
        throw illegalAddress();
      },
      setRegister: (addr, value) => {
        if (addr !== connectorBase + 71) throw illegalAddress();
        setA = value / 100;
      },
    },
    { host: options.host ?? '127.0.0.1', unitId: 1, ...(options.port !== undefined ? { port: options.port } : {}) },
  );

  return {
    get port() {
      return server.port;
    },
    start: () => server.start(),
    close: () => server.stop(),
    state() {
      sync();
      return { setA, charging: drawW(atMs) > 0, powerW: drawW(atMs), totalWh, watchdogTripped: tripped };
    },
  };
}
