/**
 * The meter at the grid connection for tests: a Modbus TCP server with the Eastron SDM120 input
 * registers (power 0x000C, import energy 0x0048, float32 high word first, as the shipped
 * `eastron-sdm120` profile reads them), measuring a base load plus whatever the simulated devices
 * draw. Energy is integrated on the clock at every request (the load seen at one request holds
 * until the next), and kept per UTC hour as the ground truth the grid company would bill.
 */
import { ServerTCP, type IServiceVector } from 'modbus-serial';
import type { Clock } from '../../src/ports.js';
import { encodeRaw } from '../../src/devices/modbus/codec.js';
import { findFreePort } from '../../src/sandbox/devices/modbus-tank.js';

const HOUR_MS = 3_600_000;
type Cb<T> = (err: Error | null, value: T) => void;

export interface GridMeter {
  readonly port: number;
  /** Energy through the meter per UTC hour start, kWh. */
  energyKwhByHour(): Map<number, number>;
  close(): Promise<void>;
}

export async function startGridMeter(options: { clock: Clock; baseLoadW: number; loadsW: () => number }): Promise<GridMeter> {
  const { clock } = options;
  let lastMs = clock.nowMs();
  let powerW = options.baseLoadW + options.loadsW();
  let totalKwh = 0;
  const hours = new Map<number, number>();

  function sync(): void {
    const now = clock.nowMs();
    for (let t = lastMs; t < now;) {
      const end = Math.min(now, (Math.floor(t / HOUR_MS) + 1) * HOUR_MS);
      const kwh = (powerW / 1000) * ((end - t) / HOUR_MS);
      const hour = Math.floor(t / HOUR_MS) * HOUR_MS;
      hours.set(hour, (hours.get(hour) ?? 0) + kwh);
      totalKwh += kwh;
      t = end;
    }
    lastMs = Math.max(lastMs, now);
    powerW = options.baseLoadW + options.loadsW();
  }

  const words = (): Map<number, number> => {
    const out = new Map<number, number>();
    encodeRaw(powerW, { type: 'float32' }).forEach((w, i) => out.set(0x000c + i, w));
    encodeRaw(totalKwh, { type: 'float32' }).forEach((w, i) => out.set(0x0048 + i, w));
    return out;
  };
  const read = (addr: number, length: number): number[] => {
    sync();
    const w = words();
    return Array.from({ length }, (_, i) => w.get(addr + i) ?? 0);
  };
  const vector: IServiceVector = {
    getInputRegister: (addr: number, _unit: number, cb: Cb<number>) => cb(null, read(addr, 1)[0]!),
    getMultipleInputRegisters: (addr: number, length: number, _unit: number, cb: Cb<number[]>) => cb(null, read(addr, length)),
  };
  const port = await findFreePort();
  const server = await new Promise<ServerTCP>((resolve, reject) => {
    const s = new ServerTCP(vector, { host: '127.0.0.1', port, unitID: 1 });
    s.once('initialized', () => resolve(s));
    s.once('serverError', (err) => reject(err));
  });
  server.on('socketError', () => undefined);
  return {
    port,
    energyKwhByHour: () => {
      sync();
      return new Map(hours);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
