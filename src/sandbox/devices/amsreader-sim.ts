/**
 * A simulated AMS reader (github.com/UtilitechAS/amsreader-firmware) on a Nordic smart meter's HAN
 * port, publishing as the firmware does with the MQTT payload "JSON (classic)" (wiki pages "MQTT
 * configuration" and "Message formats"): one JSON object per meter list on its publish topic.
 * The meter, not the reader, sets the pace:
 *
 * - list 2 every `list2IntervalS` (10 s on Nordic meters): `P`, `Q`, `PO`, `QO`, `I1..I3`,
 *   `U1..U3`, the meter `id` and `type`;
 * - list 3 once an hour, 10 s past the hour: list 2 plus the cumulative registers `tPI`, `tPO`,
 *   `tQI`, `tQO` (kWh) as of the hour and `rtc`, the meter's clock for them (Unix seconds).
 *
 * List 1 (power only, every 2–2.5 s) is left out: it adds nothing list 2 does not have and would
 * multiply the traffic of long simulations. The home's draw is a function of time (import and
 * export W, split evenly over the phases at the phase voltage unless per-phase currents are given); energy is integrated exactly and
 * `energyKwhByHour` is the ground truth of import per UTC hour.
 *
 * With `chargers`, the meter also sees the go-e chargers publishing on the same broker, as a HAN
 * meter sees every load behind it: each charger's latest `nrg` (go-e API v2: currents L1..L3 at
 * indexes 4..6, A; the total power at index 11, W) adds to the home's draw, until the charger's
 * Last Will (`mcc` false) says it has gone.
 */
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { z } from 'zod';
import { followClock, publishOnline, type MqttSimulator } from './mqtt-simulator.js';
import { brokerUrlOptions } from '../../devices/mqtt/transport.js';

const hourMs = 3_600_000;

export interface AmsReaderSimOptions {
  url: string;
  topic: string;
  startMs: number;
  /**
   * The home's draw at a time: import (and export) active power, W, and, for an unbalanced home,
   * the current per phase, A (by default the power split evenly over the phases).
   */
  load: (atMs: number) => { importW: number; exportW?: number; currentsA?: number[] };
  phases?: 1 | 3;
  voltageV?: number;
  list2IntervalS?: number;
  /**
   * Lines (1..3) whose current the meter does not measure: their `I` key is left out of the lists.
   * Some 3-phase meters on 3-wire IT supplies measure only L1 and L3 (Aron connection) and send no I2.
   */
  unmeasuredLines?: readonly number[];
  /** An MQTT filter of go-e chargers' topic prefixes (`go-eCharger/+`) whose draw the meter sees too. */
  chargers?: string;
  /** Cumulative registers at start, kWh. */
  importKwh?: number;
  exportKwh?: number;
  clientOptions?: IClientOptions;
}

export interface AmsReaderSim extends MqttSimulator {
  readonly importKwh: number;
  readonly exportKwh: number;
  /** How many lists of each kind were published. */
  readonly published: { list2: number; list3: number };
}

/** go-e's `nrg`: at least the voltages, currents and powers up to the total at index 11. */
const nrgSchema = z.array(z.number().nullable()).min(12);
type Draw = { importW: number; exportW?: number; currentsA?: number[] };

export function createAmsReaderSim(options: AmsReaderSimOptions): AmsReaderSim {
  const phases = options.phases ?? 3;
  const voltage = options.voltageV ?? 230;
  const list2Ms = (options.list2IntervalS ?? 10) * 1000;
  let now = options.startMs;
  let importKwh = options.importKwh ?? 0;
  let exportKwh = options.exportKwh ?? 0;
  let next2 = Math.ceil(now / list2Ms) * list2Ms;
  let next3 = Math.floor(now / hourMs) * hourMs + hourMs + 10_000;
  /** The registers as of the last hour boundary (list 3 reports them). */
  let atHour = { importKwh, exportKwh, atMs: Math.floor(now / hourMs) * hourMs };
  const hours = new Map<number, number>();
  const published = { list2: 0, list3: 0 };
  let silent = false;
  let client: MqttClient | undefined;
  const queue: string[] = [];
  /** The draw each followed charger last published, by its topic prefix. */
  const chargerDraw = new Map<string, { powerW: number; currentsA: number[] }>();

  /** The home's draw with the followed chargers' on top, per phase and in total. */
  const load = (atMs: number): Draw => {
    const home = options.load(atMs);
    if (chargerDraw.size === 0) return home;
    const evenA = (home.importW + (home.exportW ?? 0)) / (phases * voltage);
    const currentsA = [0, 1, 2].map((l) => home.currentsA?.[l] ?? (l < phases ? evenA : 0));
    let powerW = 0;
    for (const c of chargerDraw.values()) {
      powerW += c.powerW;
      c.currentsA.forEach((a, l) => (currentsA[l] = currentsA[l]! + a));
    }
    return { ...home, importW: home.importW + powerW, currentsA };
  };

  /** A followed charger's message: its `nrg` sets its draw, its Last Will ends it. */
  const onCharger = (topic: string, payload: Buffer): void => {
    const prefix = topic.slice(0, topic.lastIndexOf('/'));
    if (topic.endsWith('/mcc')) {
      if (payload.toString().trim() === 'false') chargerDraw.delete(prefix);
      return;
    }
    let nrg: (number | null)[];
    try {
      nrg = nrgSchema.parse(JSON.parse(payload.toString()));
    } catch {
      return; // not a go-e power reading: the meter sees nothing new
    }
    chargerDraw.set(prefix, { powerW: Math.max(0, nrg[11] ?? 0), currentsA: [4, 5, 6].map((i) => Math.max(0, nrg[i] ?? 0)) });
  };

  const list2 = (): Record<string, unknown> => {
    const { importW, exportW = 0, currentsA } = load(now);
    const evenA = (importW + exportW) / (phases * voltage);
    // The meter reports currents to two decimals.
    const amps = (n: number): number => Math.round((currentsA?.[n - 1] ?? evenA) * 100) / 100;
    const phase = (n: number, v: number): number => (n <= phases ? v : 0);
    return {
      lv: 'AIDON_V0001',
      id: '7359992890941742',
      type: '6525',
      P: Math.round(importW),
      Q: 0,
      PO: Math.round(exportW),
      QO: 0,
      ...Object.fromEntries([1, 2, 3].filter((n) => !options.unmeasuredLines?.includes(n)).map((n) => [`I${n}`, phase(n, amps(n))])),
      U1: phase(1, voltage),
      U2: phase(2, voltage),
      U3: phase(3, voltage),
    };
  };
  const message = (data: Record<string, unknown>): string =>
    JSON.stringify({
      id: 'a8032ab12345',
      name: 'ams-sim',
      up: Math.floor((now - options.startMs) / 1000),
      t: Math.floor(now / 1000),
      vcc: 3.29,
      rssi: -61,
      temp: 21.5,
      data,
      realtime: { h: 0, d: 0, t: 5, x: 0, he: 0, de: 0 },
    });

  const integrate = (toMs: number): void => {
    while (now < toMs) {
      const stepEnd = Math.min(toMs, next2, next3, Math.floor(now / hourMs) * hourMs + hourMs);
      const { importW, exportW = 0 } = load(now);
      const kwhIn = (importW * (stepEnd - now)) / 3_600_000_000;
      importKwh += kwhIn;
      exportKwh += (exportW * (stepEnd - now)) / 3_600_000_000;
      const hour = Math.floor(now / hourMs) * hourMs;
      hours.set(hour, (hours.get(hour) ?? 0) + kwhIn);
      now = stepEnd;
      if (now % hourMs === 0) atHour = { importKwh, exportKwh, atMs: now };
      if (now >= next3) {
        next3 += hourMs;
        published.list3 += 1;
        queue.push(
          message({
            ...list2(),
            tPI: Math.round(atHour.importKwh * 1000) / 1000,
            tPO: Math.round(atHour.exportKwh * 1000) / 1000,
            tQI: 0,
            tQO: 0,
            rtc: Math.floor(atHour.atMs / 1000),
          }),
        );
        if (next2 === now) next2 += list2Ms; // the hourly list replaces that list 2
      }
      if (now >= next2) {
        next2 += list2Ms;
        published.list2 += 1;
        queue.push(message(list2()));
      }
    }
  };

  const flush = async (): Promise<void> => {
    // Lists pile up only within one advance; a reader that is away or silent loses them, as HAN does.
    const pending = queue.splice(0);
    if (silent) return;
    for (const m of pending) await publishOnline(client, options.topic, m, { qos: 0 });
  };

  return {
    get nowMs() {
      return now;
    },
    get connected() {
      return client?.connected ?? false;
    },
    get importKwh() {
      return importKwh;
    },
    get exportKwh() {
      return exportKwh;
    },
    get published() {
      return { ...published };
    },
    async start() {
      client = await mqtt.connectAsync({
        ...brokerUrlOptions(options.url),
        clientId: `ams-sim-${Math.random().toString(16).slice(2, 8)}`,
        reconnectPeriod: 500,
        ...options.clientOptions,
      });
      if (options.chargers !== undefined) {
        client.on('message', onCharger);
        await client.subscribeAsync([`${options.chargers}/nrg`, `${options.chargers}/mcc`], { qos: 0 });
      }
    },
    async advance(ms) {
      integrate(now + ms);
      await flush();
    },
    energyKwhByHour: () => new Map(hours),
    setSilent(value) {
      silent = value;
    },
    publishRaw: (subtopic, payload) =>
      client
        ? client.publishAsync(`${options.topic}${subtopic ? `/${subtopic}` : ''}`, payload, { qos: 0 }).then(() => undefined)
        : Promise.resolve(),
    run(clock, stepMs, signal) {
      return followClock(this, clock, stepMs, signal);
    },
    async close() {
      await client?.endAsync();
      client = undefined;
    },
  };
}
