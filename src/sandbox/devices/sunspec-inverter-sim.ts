/**
 * A simulated PV inverter speaking SunSpec over real Modbus TCP (our own server,
 * `modbus-tcp-server.ts`), written from the SunSpec Information Model as the SunSpec Alliance
 * publishes it in machine-readable form (https://github.com/sunspec/models, `json/model_1.json`,
 * `json/model_101.json`, `json/model_103.json`, `json/model_111.json`, `json/model_113.json`) and
 * from the SunSpec Modbus specification's rules:
 *
 *   base        "SunS" (0x5375 0x6E53) at holding register 40000 (or 0, or 50000)
 *   base + 2    model 1, Common: ID 1, L 66: Mn (16 registers), Md (16), Opt (8), Vr (8), SN (16),
 *               DA (uint16), Pad; strings two ASCII characters a register, NUL-padded
 *   base + 70   model 103 (three-phase; 101 single-phase has the same layout), ID, L 50:
 *                 +2 A, +3..+5 AphA..AphC (uint16), +6 A_SF; +7..+9 PPVphAB..CA, +10..+12
 *                 PhVphA..C (uint16), +13 V_SF; +14 W (int16), +15 W_SF; +16 Hz, +17 Hz_SF;
 *                 +18 VA, +19 VA_SF; +20 VAr, +21 VAr_SF; +22 PF, +23 PF_SF; +24..+25 WH (acc32,
 *                 Wh), +26 WH_SF; +27 DCA, +28 DCA_SF; +29 DCV, +30 DCV_SF; +31 DCW, +32 DCW_SF;
 *                 +33..+36 TmpCab, TmpSnk, TmpTrns, TmpOt (int16), +37 Tmp_SF; +38 St (enum16:
 *                 1 OFF, 2 SLEEPING, 3 STARTING, 4 MPPT, 5 THROTTLED, 6 SHUTTING_DOWN, 7 FAULT,
 *                 8 STANDBY), +39 StVnd, +40..+51 Evt1, Evt2, EvtVnd1..4 (bitfield32)
 *   base + 122  end model: ID 0xFFFF, L 0
 *
 * With `model: 113` (or 111 single-phase) the inverter model is the FLOAT one instead, L 60: the
 * same points as float32 (two registers, high word first) without scale factors: +2 A, +4..+8
 * AphA..C, +10..+14 PPVphAB..CA, +16..+20 PhVphA..C, +22 W, +24 Hz, +26 VA, +28 VAr, +30 PF,
 * +32 WH, +34 DCA, +36 DCV, +38 DCW, +40..+46 TmpCab..TmpOt, +48 St, +49 StVnd, +50..+61 the
 * events; the end model follows at base + 132.
 *
 * A value is its register times 10 to the power of its scale factor (a sunssf, int16 −10..10).
 * Not-implemented values are the specification's: int16 and sunssf 0x8000, uint16 and enum16
 * 0xFFFF, acc32 0, bitfield32 0xFFFFFFFF, float32 NaN.
 *
 * The awkward parts a real inverter has, on purpose:
 * - At night (the sun below about 1°) St is SLEEPING and the measurement registers stop updating:
 *   W keeps the small value it had at dusk, WH the day's total. Only St tells the truth.
 * - W_SF follows the power (−1 below 3000 W, 0 below 30 kW, else 1, so W fits an int16) while WH_SF stays at its
 *   own value: the two differ, and W is only meaningful read together with the W_SF beside it.
 * - Points this simulator does not have are not-implemented: VA, VAr, PF and their scale factors,
 *   the DC values, every temperature but the cabinet's (TmpSnk 0x8000), the vendor state and
 *   events; a single-phase model 101 also has AphB/AphC and PhVphB/PhVphC 0xFFFF.
 *
 * Production follows a clear sky (the sun's elevation from the latitude, longitude and day of
 * year) under clouds that change every 15 minutes, drawn from `seed`: the same seed and times give
 * the same counter. Time follows `clock` on every request, or `advance(ms)`.
 */
import type { Clock } from '../../ports.js';
import { modbusError, serveModbusSim, simRegisterHandlers, type ModbusSimServer, type SimServerOptions } from './modbus-sim.js';

export const sunspecMarker = [0x5375, 0x6e53] as const;
export const sunspecState = { off: 1, sleeping: 2, starting: 3, mppt: 4, throttled: 5, shuttingDown: 6, fault: 7, standby: 8 } as const;
const commonLength = 66;
const inverterLength = 50;
const int16NotImplemented = 0x8000;
const uint16NotImplemented = 0xffff;

export interface SunSpecInverterOptions extends SimServerOptions {
  clock?: Clock;
  /** Where the map starts: 40000 (the usual), 0 or 50000. */
  baseAddress?: 0 | 40000 | 50000;
  /** 103 three-phase (default) or 101 single-phase; 113 and 111 are their float32 models. */
  model?: 101 | 103 | 111 | 113;
  /** Array peak, W (default 6000). */
  peakW?: number;
  latitude?: number;
  longitude?: number;
  /** Seeds the clouds. */
  seed?: number;
  /** 0 (clear all day) .. 1 (overcast), default 0.4. */
  cloudiness?: number;
  /** Scale factor of WH (default 0: Wh). */
  whScaleFactor?: number;
  /** Counter at start, Wh. */
  initialWh?: number;
  startMs?: number;
  manufacturer?: string;
  modelName?: string;
  serial?: string;
}

export interface InverterSnapshot {
  nowMs: number;
  /** What the array produces now, W (0 at night). */
  powerW: number;
  /** Energy produced since the start plus `initialWh`, Wh (not rounded to the register). */
  trueEnergyWh: number;
  /** The WH register as a reader sees it, Wh. */
  counterWh: number;
  state: number;
}

export type InverterFault = 'silent' | 'exception' | 'w-not-implemented' | null;

export interface SimulatedInverter extends ModbusSimServer {
  readonly baseAddress: number;
  state(): InverterSnapshot;
  advance(ms: number): void;
  sync(): void;
  setFault(fault: InverterFault): void;
  /** Production at a time, W (the curve, for tests). */
  powerAtW(ms: number): number;
}

const DAY_MS = 86_400_000;
const deg = Math.PI / 180;
/** Integration step, ms: the curve changes slowly against it. */
const stepMs = 30_000;
const cloudBlockMs = 15 * 60_000;

/** Sine of the sun's elevation (Cooper's declination, the hour angle from UTC and longitude). */
export function sunElevationSin(ms: number, latitude: number, longitude: number): number {
  const dayOfYear = Math.floor((ms - Date.UTC(new Date(ms).getUTCFullYear(), 0, 1)) / DAY_MS) + 1;
  const declination = 23.45 * deg * Math.sin((2 * Math.PI * (284 + dayOfYear)) / 365);
  const solarHours = (((ms % DAY_MS) + DAY_MS) % DAY_MS) / 3_600_000 + longitude / 15;
  const hourAngle = (solarHours - 12) * 15 * deg;
  const lat = latitude * deg;
  return Math.sin(lat) * Math.sin(declination) + Math.cos(lat) * Math.cos(declination) * Math.cos(hourAngle);
}

/** A number in [0, 1) from the seed and a block index (a 32-bit integer hash, no state). */
function unitHash(seed: number, block: number): number {
  let h = (seed ^ Math.imul(block, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return ((h ^ (h >>> 16)) >>> 0) / 2 ** 32;
}

/** Two ASCII characters a register, NUL-padded to `registers`. */
function stringWords(text: string, registers: number): number[] {
  const bytes = Buffer.alloc(registers * 2);
  bytes.write(text.slice(0, registers * 2), 'ascii');
  return Array.from({ length: registers }, (_, i) => bytes.readUInt16BE(i * 2));
}

const int16Word = (v: number): number => (Math.round(v) + 0x10000) & 0xffff;
const floatLength = 60;

/** float32 as two registers, high word first; NaN is the not-implemented value. */
function float32Words(v: number): [number, number] {
  const b = Buffer.alloc(4);
  b.writeFloatBE(v, 0);
  return [b.readUInt16BE(0), b.readUInt16BE(2)];
}

export async function startSunSpecInverter(options: SunSpecInverterOptions = {}): Promise<SimulatedInverter> {
  const clock = options.clock;
  const base = options.baseAddress ?? 40000;
  const model = options.model ?? 103;
  const peakW = options.peakW ?? 6000;
  const latitude = options.latitude ?? 59.91;
  const longitude = options.longitude ?? 10.75;
  const seed = options.seed ?? 1;
  const cloudiness = options.cloudiness ?? 0.4;
  const whSf = options.whScaleFactor ?? 0;
  let nowMs = options.startMs ?? clock?.nowMs() ?? Date.UTC(2026, 5, 21);
  let trueWh = options.initialWh ?? 0;
  let fault: InverterFault = null;

  const powerAtW = (ms: number): number => {
    const sin = sunElevationSin(ms, latitude, longitude);
    if (sin <= 0.02) return 0;
    const block = Math.floor(ms / cloudBlockMs);
    const cloud = unitHash(seed, block) < cloudiness ? 0.15 + 0.5 * unitHash(seed + 1, block) : 1;
    // Air mass thins the clear-sky output near the horizon.
    return peakW * Math.pow(sin, 1.3) * cloud;
  };

  /** The registers the reader sees: frozen while the inverter sleeps. */
  let shown = { w: 0, wh: trueWh, st: sunspecState.sleeping as number };
  const publish = (): void => {
    const w = powerAtW(nowMs);
    if (w > 0) shown = { w, wh: trueWh, st: sunspecState.mppt };
    else shown = { ...shown, st: sunspecState.sleeping };
  };
  /** Each step publishes while the inverter is awake, so the night holds the evening's last values whenever it is read. */
  const advanceTo = (ms: number): void => {
    while (nowMs < ms) {
      const dt = Math.min(stepMs, ms - nowMs);
      trueWh += (powerAtW(nowMs + dt / 2) * dt) / 3_600_000;
      nowMs += dt;
      publish();
    }
    publish();
  };
  publish();
  const sync = (): void => {
    if (clock) advanceTo(clock.nowMs());
  };

  const registers = (): Map<number, number> => {
    const words = new Map<number, number>();
    const put = (addr: number, values: readonly number[]): void => values.forEach((v, i) => words.set(addr + i, v & 0xffff));
    put(base, sunspecMarker);
    const common = base + 2;
    put(common, [1, commonLength]);
    put(common + 2, stringWords(options.manufacturer ?? 'wattshift', 16));
    put(common + 18, stringWords(options.modelName ?? `Sim PV ${Math.round(peakW / 1000)}k`, 16));
    put(common + 34, stringWords('', 8));
    put(common + 42, stringWords('1.0.0', 8));
    put(common + 50, stringWords(options.serial ?? 'SIM0001', 16));
    put(common + 66, [options.unitId ?? 1, 0]);
    const inv = common + 2 + commonLength;
    if (model >= 111) {
      put(inv, [model, floatLength, ...floatBody()]);
      put(inv + 2 + floatLength, [0xffff, 0]);
      return words;
    }
    const body = new Array<number>(inverterLength).fill(uint16NotImplemented);
    const at = (offset: number, value: number): void => {
      body[offset - 2] = value;
    };
    const threePhase = model === 103;
    const sleeping = shown.st === sunspecState.sleeping;
    const w = shown.w;
    const wSf = w < 3000 ? -1 : w < 30_000 ? 0 : 1;
    const phases = threePhase ? 3 : 1;
    const lineA = w / phases / 230;
    // Current in 0.01 A, voltage in 0.1 V, frequency in 0.01 Hz.
    at(2, Math.round(lineA * phases * 100));
    at(3, Math.round(lineA * 100));
    at(4, threePhase ? Math.round(lineA * 100) : uint16NotImplemented);
    at(5, threePhase ? Math.round(lineA * 100) : uint16NotImplemented);
    at(6, int16Word(-2));
    at(10, 2301);
    at(11, threePhase ? 2298 : uint16NotImplemented);
    at(12, threePhase ? 2304 : uint16NotImplemented);
    at(13, int16Word(-1));
    at(14, fault === 'w-not-implemented' ? int16NotImplemented : int16Word(w / 10 ** wSf));
    at(15, int16Word(wSf));
    at(16, 5001);
    at(17, int16Word(-2));
    for (const sfOffset of [19, 21, 23, 28, 30, 32]) at(sfOffset, int16NotImplemented);
    for (const valueOffset of [18, 20, 22, 31]) at(valueOffset, int16NotImplemented);
    const whRegister = Math.floor(shown.wh / 10 ** whSf) >>> 0;
    at(24, whRegister >>> 16);
    at(25, whRegister & 0xffff);
    at(26, int16Word(whSf));
    at(33, int16Word(sleeping ? 80 : 250 + w / 100));
    at(34, int16NotImplemented);
    at(35, int16NotImplemented);
    at(36, int16NotImplemented);
    at(37, int16Word(-1));
    at(38, shown.st);
    // Evt1 and Evt2 are mandatory: no event.
    for (const offset of [40, 41, 42, 43]) at(offset, 0);
    put(inv, [model, inverterLength, ...body]);
    put(inv + 2 + inverterLength, [0xffff, 0]);
    return words;
  };

  /** The FLOAT inverter model's registers after ID and L (model_111.json, model_113.json). */
  const floatBody = (): number[] => {
    const body: number[] = [];
    for (let i = 0; i < floatLength; i += 2) body.push(...float32Words(Number.NaN));
    const at = (offset: number, value: number): void => {
      body.splice(offset - 2, 2, ...float32Words(value));
    };
    const threePhase = model === 113;
    const w = shown.w;
    const lineA = w / (threePhase ? 3 : 1) / 230;
    at(2, lineA * (threePhase ? 3 : 1));
    at(4, lineA);
    if (threePhase) {
      at(6, lineA);
      at(8, lineA);
    }
    at(16, 230.1);
    if (threePhase) {
      at(18, 229.8);
      at(20, 230.4);
    }
    if (fault !== 'w-not-implemented') at(22, w);
    at(24, 50.01);
    at(32, shown.wh);
    at(40, shown.st === sunspecState.sleeping ? 8 : 25 + w / 1000);
    body[48 - 2] = shown.st;
    body[49 - 2] = uint16NotImplemented;
    // Evt1 and Evt2 are mandatory: no event; the vendor events are not implemented.
    body.splice(50 - 2, 4, 0, 0, 0, 0);
    body.splice(54 - 2, 8, ...new Array<number>(8).fill(0xffff));
    return body;
  };

  const handlers = simRegisterHandlers({
    sync,
    fault: () => (fault === 'silent' || fault === 'exception' ? fault : null),
    inputWords: () => new Map(),
    holding: (addr, length) => {
      const words = registers();
      return Array.from({ length }, (_, i) => {
        const w = words.get(addr + i);
        if (w === undefined) throw modbusError(2, `no holding register ${addr + i}`);
        return w;
      });
    },
    coil: (addr) => {
      throw modbusError(2, `no coil ${addr}`);
    },
    setCoil: (addr) => {
      throw modbusError(2, `no coil ${addr}`);
    },
    setRegister: (addr) => {
      throw modbusError(2, `holding register ${addr} is read-only`);
    },
  });

  return serveModbusSim(handlers, options, {
    baseAddress: base,
    state: (): InverterSnapshot => {
      sync();
      return {
        nowMs,
        powerW: powerAtW(nowMs),
        trueEnergyWh: trueWh,
        counterWh: model >= 111 ? Math.fround(shown.wh) : (Math.floor(shown.wh / 10 ** whSf) >>> 0) * 10 ** whSf,
        state: shown.st,
      };
    },
    advance: (ms: number) => advanceTo(nowMs + ms),
    sync,
    setFault: (f: InverterFault) => {
      fault = f;
    },
    powerAtW,
  });
}
