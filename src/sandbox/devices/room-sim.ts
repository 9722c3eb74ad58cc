/**
 * A simulated heated room for the tests and the demo: a first-order room (one heat capacity, a heat
 * loss to the outdoors of the sandbox's weather, `outdoor-model.ts`, and free heat from a seeded
 * occupancy profile), a panel heater with its own thermostat switched by a simulated Shelly relay
 * (`shelly-sim.ts`, its `load`), and a room sensor publishing as a zigbee2mqtt temperature sensor.
 *
 * Room: C·dT/dt = P_heater + P_gains − UA·(T − T_outdoor), solved exactly over steps of at most 10 s
 * with the inputs of the step's start. The heater heats only while the relay is on AND its own
 * thermostat calls: it calls once the room is `hysteresisK` below `setpointC` and stops at
 * `setpointC` (a panel heater's electronic thermostat, which sees the room air).
 *
 * Sensor: zigbee2mqtt publishes a device's state as JSON on `zigbee2mqtt/<friendly name>`
 * (zigbee2mqtt.io, "MQTT topics and messages"), here `{"battery":…,"humidity":…,"linkquality":…,
 * "temperature":21.3,"voltage":…}`, the temperature at 0.1 °C. A Zigbee sensor reports under its
 * reporting configuration (ZCL attribute reporting: a minimum interval, a maximum interval and a
 * reportable change); the defaults are those zigbee-herdsman-converters configures for the Sonoff
 * SNZB-02 (Koenkk/zigbee-herdsman-converters#7013: at a change of 0.2 °C, at most every 30 s, and
 * at least every 5 minutes).
 *
 * Occupancy (free heat of people, lights and appliances in a living room, of the order of EN ISO
 * 13790's residential internal gains of a few W/m² over the day, an adult at rest giving about
 * 80–100 W): 30 W while everyone sleeps or is out (standby), 200 W on weekday mornings 06–08,
 * 250 W in the evening 16–23, 150 W in the day when someone is home (weekends, and a seeded one
 * weekday in seven); each day's leaving and coming home move by up to an hour, seeded.
 */
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { brokerUrlOptions } from '../../devices/mqtt/transport.js';
import type { Clock } from '../../ports.js';
import { localParts } from '../../core/zoned-time.js';
import { outdoorTempC, type Place } from '../outdoor-model.js';
import { hashUnit } from '../spot-prices.js';
import { clientEnds, followClock, publishOnline, type MqttSimulator } from './mqtt-simulator.js';
import { createShellySim, type ShellySim, type SwitchedLoad } from './shelly-sim.js';

const hourMs = 3_600_000;
const dayMs = 86_400_000;
const maxStepMs = 10_000;

export interface RoomParams {
  /** Heat capacity of the room's air, furniture and inner surfaces, kWh/K. */
  heatCapacityKwhPerK: number;
  /** Heat loss to outdoors (UA), kW/K. */
  heatLossKwPerK: number;
  initialC: number;
}

/**
 * A 20 m² living room: EN ISO 13790's "medium" construction (165 kJ/(m²·K), 0.92 kWh/K) and a loss
 * that a 1 kW heater holds at 21 °C when it is −20 °C outdoors (1 kW / 41 K ≈ 0.025 kW/K).
 */
export const defaultRoom: RoomParams = { heatCapacityKwhPerK: 0.92, heatLossKwPerK: 0.025, initialC: 20 };

export interface PanelHeaterParams {
  powerW: number;
  /** The heater's own thermostat setpoint, °C. */
  setpointC: number;
  /** It calls again this far below the setpoint, K. */
  hysteresisK: number;
}

export const defaultHeater: PanelHeaterParams = { powerW: 1000, setpointC: 22, hysteresisK: 0.5 };

export interface SensorReporting {
  /** The reportable change, °C. */
  changeC: number;
  minIntervalS: number;
  maxIntervalS: number;
}

export const defaultReporting: SensorReporting = { changeC: 0.2, minIntervalS: 30, maxIntervalS: 300 };

export interface RoomSimOptions {
  url: string;
  startMs: number;
  /** Seeds the weather and the occupancy. */
  seed: number;
  /** Where the room is: its outdoors is the sandbox's weather there. */
  place: Place;
  /** The Shelly relay's topic prefix. */
  relayPrefix: string;
  /** The sensor's zigbee2mqtt friendly name. */
  sensorName: string;
  /** zigbee2mqtt's base topic (default `zigbee2mqtt`). */
  baseTopic?: string;
  room?: Partial<RoomParams>;
  heater?: Partial<PanelHeaterParams>;
  reporting?: Partial<SensorReporting>;
  /** Free heat: the seeded occupancy profile (default), or none. */
  gains?: 'occupancy' | 'none';
  /** Local time of the occupancy profile (default Europe/Oslo). */
  timeZone?: string;
  /** The relay's state at power-up (default on: the heater's thermostat rules alone). */
  relayInitialOn?: boolean;
  clientOptions?: IClientOptions;
}

export interface RoomSim extends MqttSimulator {
  readonly relay: ShellySim;
  /** The room air temperature now, °C. */
  readonly tempC: number;
  /** Whether the heater draws power now (relay on and its thermostat calling). */
  readonly heating: boolean;
  /** The outdoor temperature the room loses heat to now, °C. */
  readonly outdoorC: number;
  /** Free heat now, W. */
  readonly gainsW: number;
  /** Sensor reports published so far. */
  readonly reports: number;
  readonly params: { room: RoomParams; heater: PanelHeaterParams; reporting: SensorReporting };
}

/** The occupancy profile's free heat at an instant, W. */
export function occupancyGainsW(seed: number, ms: number, timeZone: string): number {
  const p = localParts(ms, timeZone);
  const hour = p.hour + p.minute / 60;
  const localDateMs = Date.UTC(p.year, p.month - 1, p.day);
  const day = localDateMs / dayMs;
  const weekday = new Date(localDateMs).getUTCDay();
  const weekend = weekday === 0 || weekday === 6;
  const homeAllDay = weekend || hashUnit(seed, 'home-day', day) < 1 / 7;
  const leave = 8 + (hashUnit(seed, 'leave', day) - 0.5) * 2;
  const back = 16 + (hashUnit(seed, 'back', day) - 0.5) * 2;
  if (hour < 6 || hour >= 23) return 30;
  if (hour >= back) return 250;
  if (homeAllDay) return hour < 8 ? 200 : 150;
  return hour < leave ? 200 : 30;
}

export function createRoomSim(options: RoomSimOptions): RoomSim {
  const room = { ...defaultRoom, ...options.room };
  const heater = { ...defaultHeater, ...options.heater };
  const reporting = { ...defaultReporting, ...options.reporting };
  const timeZone = options.timeZone ?? 'Europe/Oslo';
  const topic = `${options.baseTopic ?? 'zigbee2mqtt'}/${options.sensorName}`;
  let tempC = room.initialC;
  let calling = tempC < heater.setpointC;
  let physicsMs = options.startMs;

  const gainsAt = (ms: number): number => (options.gains === 'none' ? 0 : occupancyGainsW(options.seed, ms, timeZone));
  const outdoorAt = (ms: number): number => outdoorTempC(options.seed, options.place, ms);
  const updateThermostat = (): void => {
    if (calling && tempC >= heater.setpointC) calling = false;
    else if (!calling && tempC <= heater.setpointC - heater.hysteresisK) calling = true;
  };

  const load: SwitchedLoad = {
    powerW: (relayOn) => (relayOn && calling ? heater.powerW : 0),
    advanceTo(toMs, relayOn) {
      let wh = 0;
      while (physicsMs < toMs) {
        const end = Math.min(toMs, physicsMs + maxStepMs);
        const hours = (end - physicsMs) / hourMs;
        const heatW = relayOn && calling ? heater.powerW : 0;
        const steadyC = outdoorAt(physicsMs) + (heatW + gainsAt(physicsMs)) / 1000 / room.heatLossKwPerK;
        tempC = steadyC + (tempC - steadyC) * Math.exp((-hours * room.heatLossKwPerK) / room.heatCapacityKwhPerK);
        wh += heatW * hours;
        physicsMs = end;
        updateThermostat();
      }
      return wh;
    },
  };

  const relay = createShellySim({
    url: options.url,
    topicPrefix: options.relayPrefix,
    startMs: options.startMs,
    initialOn: options.relayInitialOn ?? true,
    load,
    ...(options.clientOptions ? { clientOptions: options.clientOptions } : {}),
  });

  let client: MqttClient | undefined;
  let silent = false;
  let reports = 0;
  let reported: { tempC: number; atMs: number } | undefined;
  const reading = (): number => Math.round(tempC * 10) / 10;

  /** Publishes when the reading moved by the reportable change (no sooner than the minimum interval) or the maximum interval passed. */
  const report = async (force = false): Promise<void> => {
    if (silent || !client?.connected) return;
    const value = reading();
    const since = reported === undefined ? Infinity : physicsMs - reported.atMs;
    const moved = reported === undefined || Math.abs(value - reported.tempC) >= reporting.changeC - 1e-9;
    if (!force && !(moved && since >= reporting.minIntervalS * 1000) && since < reporting.maxIntervalS * 1000) return;
    reported = { tempC: value, atMs: physicsMs };
    reports++;
    const state = { battery: 100, humidity: 38.5, linkquality: 120, temperature: value, voltage: 3000 };
    await publishOnline(client, topic, JSON.stringify(state), { qos: 0 });
  };

  return {
    relay,
    params: { room, heater, reporting },
    get nowMs() {
      return relay.nowMs;
    },
    get connected() {
      return (client?.connected ?? false) && relay.connected;
    },
    get tempC() {
      return tempC;
    },
    get heating() {
      return relay.output && calling;
    },
    get outdoorC() {
      return outdoorAt(physicsMs);
    },
    get gainsW() {
      return gainsAt(physicsMs);
    },
    get reports() {
      return reports;
    },
    async start() {
      await relay.start();
      client = await mqtt.connectAsync({
        ...brokerUrlOptions(options.url),
        clientId: `z2m-sim-${options.sensorName}-${Math.random().toString(16).slice(2, 8)}`,
        reconnectPeriod: 500,
        ...options.clientOptions,
      });
      await report(true);
    },
    async advance(ms) {
      await relay.advance(ms);
      await report().catch(() => undefined);
    },
    energyKwhByHour: () => relay.energyKwhByHour(),
    setSilent(value) {
      silent = value;
      relay.setSilent(value);
    },
    publishRaw: (subtopic, payload) =>
      client ? client.publishAsync(`${topic}/${subtopic}`, payload, { qos: 0 }).then(() => undefined) : Promise.resolve(),
    run(clock: Clock, stepMs: number, signal: AbortSignal) {
      return followClock(this, clock, stepMs, signal);
    },
    ...(() => {
      const sensor = clientEnds(
        () => client,
        () => (client = undefined),
      );
      return {
        async crash() {
          await sensor.crash();
          await relay.crash();
        },
        async close() {
          await sensor.close();
          await relay.close();
        },
      };
    })(),
  };
}
