/**
 * A simulated Shelly Plus 1PM switching a hot water heater, speaking Shelly Gen2 MQTT RPC to a
 * real broker: `Switch.Set` (with `toggle_after`), `Switch.GetStatus`, `Shelly.GetStatus`,
 * `Temperature.GetStatus`; `<prefix>/online` with a last will. Time moves only through
 * `advance(ms)` (or `run(clock)`), so tests are exact: the energy the simulated element drew per
 * UTC hour is the ground truth for metering tests.
 *
 * It reports as the Shelly Gen2 API documentation says a device does (shelly-api-docs.shelly.cloud/
 * gen2: "MQTT" component, "Notifications", "Switch", "Temperature"): only on change, never on a
 * timer of its own. A component is reported when its status changes: the switch when `output` or
 * `apower` changes and when `aenergy` takes its next minute record (`by_minute`, `minute_ts`), the
 * Plus Add-On's temperature when it has moved by `report_thr_C` (0.5 °C here) since the last
 * report. With `rpc_ntf` (on by default on the device) the change goes out as `NotifyStatus` on
 * `<prefix>/events/rpc` carrying the changed keys only; with `status_ntf` (off by default) the
 * component's whole status also goes to `<prefix>/status/<component>`. A Shelly 1 without a meter
 * (`metered: false`) has no `apower`/`aenergy`, so an idle one says nothing at all.
 */
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { clientEnds, followClock, publishOnline, type MqttSimulator } from './mqtt-simulator.js';
import { brokerUrlOptions } from '../../devices/mqtt/transport.js';

const hourMs = 3_600_000;
const minuteMs = 60_000;
/** The Temperature component's `report_thr_C` (its documented range starts at 0.5 °C). */
const reportThresholdC = 0.5;

/** What the relay switches in place of the built-in tank element (a room's panel heater, `room-sim.ts`). */
export interface SwitchedLoad {
  /** Power drawn now with the relay on (true) or off, W. */
  powerW(relayOn: boolean): number;
  /** Runs the load's own physics to `toMs` with the relay held as given; the energy it drew meanwhile, Wh. */
  advanceTo(toMs: number, relayOn: boolean): number;
}

export interface ShellySimOptions {
  url: string;
  topicPrefix: string;
  startMs: number;
  switchId?: number;
  /** Element power when the relay and the tank thermostat are closed, W (default 2000). */
  heaterW?: number;
  /** Relay state at power-up (Shelly `initial_state`; default on = heating allowed). */
  initialOn?: boolean;
  /** Plus Add-On DS18B20 component id (e.g. 100); omit for no add-on. */
  temperatureSensorId?: number;
  tank?: { volumeL?: number; initialC?: number; ambientC?: number; lossWPerK?: number; thermostatC?: number };
  /** The MQTT component's `rpc_ntf` (default true, as the device ships): NotifyStatus on `<prefix>/events/rpc`. */
  rpcNtf?: boolean;
  /** The MQTT component's `status_ntf` (default false, as the device ships): whole statuses on `<prefix>/status/<component>`. */
  statusNtf?: boolean;
  /** Whether the switch meters (a Plus 1PM; default true) or not (a Plus 1). */
  metered?: boolean;
  /** Extra mqtt.js options (credentials, TLS). */
  clientOptions?: IClientOptions;
  /** The load on the relay instead of the tank element (`heaterW` and `tank` are then unused). */
  load?: SwitchedLoad;
}

export interface ShellySim extends MqttSimulator {
  readonly output: boolean;
  readonly powerW: number;
  /** Cumulative energy, Wh (what `aenergy.total` reports). */
  readonly energyWh: number;
  readonly temperatureC: number;
  /** When a pending `toggle_after` flips the relay (sim ms), if any. */
  readonly toggleAtMs: number | undefined;
  /** Drops the connection without a clean disconnect, so the broker publishes the last will. */
  crash(): Promise<void>;
  /** Messages the device published (status topics and notifications), for "on change only" checks. */
  readonly published: number;
  /** RPC requests the device answered, by method. */
  readonly requests: ReadonlyMap<string, number>;
}

interface RpcRequest {
  id?: unknown;
  src?: unknown;
  method?: unknown;
  params?: Record<string, unknown>;
}

export function createShellySim(options: ShellySimOptions): ShellySim {
  const prefix = options.topicPrefix;
  const switchId = options.switchId ?? 0;
  const heaterW = options.heaterW ?? 2000;
  const tank = {
    heatCapacityJPerK: (options.tank?.volumeL ?? 200) * 4186,
    ambientC: options.tank?.ambientC ?? 20,
    lossWPerK: options.tank?.lossWPerK ?? 1.6,
    thermostatC: options.tank?.thermostatC ?? 75,
  };
  let now = options.startMs;
  let output = options.initialOn ?? true;
  let toggleAtMs: number | undefined;
  let energyWh = 0;
  let temperatureC = options.tank?.initialC ?? 50;
  let thermostatClosed = temperatureC < tank.thermostatC;
  let silent = false;
  const hours = new Map<number, number>();
  let client: MqttClient | undefined;

  const load = options.load;
  const powerW = (): number => (load ? load.powerW(output) : output && thermostatClosed ? heaterW : 0);

  const metered = options.metered ?? true;
  const rpcNtf = options.rpcNtf ?? true;
  const statusNtf = options.statusNtf ?? false;
  const switchKey = `switch:${switchId}`;
  const tempKey = options.temperatureSensorId === undefined ? undefined : `temperature:${options.temperatureSensorId}`;
  let published = 0;
  const requests = new Map<string, number>();

  const switchStatus = (): Record<string, unknown> => {
    const timer = toggleAtMs === undefined ? {} : { timer_started_at: 0, timer_duration: (toggleAtMs - now) / 1000 };
    if (!metered) return { id: switchId, source: 'MQTT', output, temperature: { tC: 41.2, tF: 106.2 }, ...timer };
    const p = powerW();
    return {
      id: switchId,
      source: 'MQTT',
      output,
      apower: p,
      voltage: 230.1,
      current: Number((p / 230.1).toFixed(3)),
      aenergy: { total: Number(energyWh.toFixed(3)), by_minute: [0, 0, 0], minute_ts: Math.floor(now / minuteMs) * 60 },
      temperature: { tC: 41.2, tF: 106.2 },
      ...timer,
    };
  };
  const tempStatus = (): Record<string, unknown> => ({
    id: options.temperatureSensorId,
    tC: Number(temperatureC.toFixed(1)),
    tF: Number((temperatureC * 1.8 + 32).toFixed(1)),
  });

  const publish = async (topic: string, payload: string, retain = false): Promise<void> => {
    if (!silent) await publishOnline(client, topic, payload, { qos: 1, retain });
  };

  /** What was last reported, to notify changes only. */
  const reported: { output?: boolean; apower?: number; minute?: number; tC?: number } = {};
  /** The changed keys of each component since the last report (all of them when `full`). */
  const changes = (full: boolean): Record<string, Record<string, unknown>> => {
    const out: Record<string, Record<string, unknown>> = {};
    const sw = switchStatus();
    const changed: Record<string, unknown> = {};
    if (full || sw.output !== reported.output) changed.output = sw.output;
    if (metered && (full || sw.apower !== reported.apower)) Object.assign(changed, { apower: sw.apower, current: sw.current });
    if (metered && (full || Math.floor(now / minuteMs) !== reported.minute)) changed.aenergy = sw.aenergy;
    if (Object.keys(changed).length > 0) out[switchKey] = { id: switchId, ...changed };
    reported.output = output;
    reported.apower = powerW();
    reported.minute = Math.floor(now / minuteMs);
    if (tempKey && (full || reported.tC === undefined || Math.abs(temperatureC - reported.tC) >= reportThresholdC)) {
      out[tempKey] = tempStatus();
      reported.tC = temperatureC;
    }
    return out;
  };
  /** Reports what changed: a NotifyStatus (rpc_ntf) and the whole status of each changed component (status_ntf). */
  const report = async (full = false): Promise<void> => {
    const changed = changes(full);
    const keys = Object.keys(changed);
    if (keys.length === 0 || silent || !client?.connected) return;
    if (rpcNtf) {
      published++;
      const params = { ts: now / 1000, ...changed };
      await publish(`${prefix}/events/rpc`, JSON.stringify({ src: prefix, dst: `${prefix}/events`, method: 'NotifyStatus', params }));
    }
    if (statusNtf) {
      for (const key of keys) {
        published++;
        await publish(`${prefix}/status/${key}`, JSON.stringify(key === switchKey ? switchStatus() : tempStatus()));
      }
    }
  };

  /** Integrates one interval with constant relay state (split further for the thermostat). */
  const integrate = (toMs: number): void => {
    while (now < toMs) {
      const hourEnd = (Math.floor(now / hourMs) + 1) * hourMs;
      const stepEnd = Math.min(toMs, hourEnd, now + 60_000);
      const dtS = (stepEnd - now) / 1000;
      const p = powerW();
      const wh = load ? load.advanceTo(stepEnd, output) : (p * dtS) / 3600;
      energyWh += wh;
      const hour = Math.floor(now / hourMs) * hourMs;
      hours.set(hour, (hours.get(hour) ?? 0) + wh / 1000);
      if (load) {
        now = stepEnd;
        continue;
      }
      temperatureC += ((p - tank.lossWPerK * (temperatureC - tank.ambientC)) * dtS) / tank.heatCapacityJPerK;
      if (temperatureC >= tank.thermostatC) thermostatClosed = false;
      else if (temperatureC <= tank.thermostatC - 5) thermostatClosed = true;
      now = stepEnd;
    }
  };

  const respond = async (req: RpcRequest, body: Record<string, unknown>): Promise<void> => {
    if (typeof req.src !== 'string') return;
    await publish(`${req.src}/rpc`, JSON.stringify({ id: req.id, src: prefix, dst: req.src, ...body }));
  };

  const handleRpc = async (req: RpcRequest): Promise<void> => {
    const params = req.params ?? {};
    if (typeof req.method === 'string') requests.set(req.method, (requests.get(req.method) ?? 0) + 1);
    switch (req.method) {
      case 'Switch.Set': {
        if (params.id !== switchId || typeof params.on !== 'boolean') {
          return respond(req, { error: { code: -103, message: 'Invalid argument' } });
        }
        const wasOn = output;
        output = params.on;
        // "toggle_after: optional flip-back timer in seconds" (shelly-api-docs.shelly.cloud/gen2/
        // ComponentsAndServices/Switch, Switch.Set): kept here, on the device, whatever its MQTT peer does.
        const after = params.toggle_after;
        toggleAtMs = typeof after === 'number' && after > 0 ? now + after * 1000 : undefined;
        await respond(req, { result: { was_on: wasOn } });
        return report();
      }
      case 'Switch.GetStatus':
        return respond(req, { result: switchStatus() });
      case 'Temperature.GetStatus':
        return respond(req, { result: tempStatus() });
      case 'Shelly.GetStatus':
        return respond(req, { result: { [switchKey]: switchStatus(), ...(tempKey ? { [tempKey]: tempStatus() } : {}) } });
      default:
        return respond(req, { error: { code: 404, message: `No handler for ${String(req.method)}` } });
    }
  };

  return {
    get nowMs() {
      return now;
    },
    get connected() {
      return client?.connected ?? false;
    },
    get output() {
      return output;
    },
    get powerW() {
      return powerW();
    },
    get energyWh() {
      return energyWh;
    },
    get temperatureC() {
      return temperatureC;
    },
    get toggleAtMs() {
      return toggleAtMs;
    },
    get published() {
      return published;
    },
    get requests() {
      return requests;
    },
    async start() {
      client = await mqtt.connectAsync({
        ...brokerUrlOptions(options.url),
        clientId: `shelly-sim-${prefix}-${Math.random().toString(16).slice(2, 8)}`,
        reconnectPeriod: 500,
        will: { topic: `${prefix}/online`, payload: Buffer.from('false'), qos: 1, retain: true },
        ...options.clientOptions,
      });
      client.on('connect', () => {
        // On (re)connect the whole status goes out once, as after a boot.
        void publish(`${prefix}/online`, 'true', true)
          .then(() => report(true))
          .catch(() => undefined);
      });
      client.on('message', (_topic, payload) => {
        if (silent) return;
        let req: RpcRequest;
        try {
          req = JSON.parse(payload.toString()) as RpcRequest;
        } catch {
          return; // a real Shelly ignores what it cannot parse
        }
        void handleRpc(req).catch(() => undefined);
      });
      await client.subscribeAsync(`${prefix}/rpc`, { qos: 1 });
      await publish(`${prefix}/online`, 'true', true);
      await report(true);
    },
    async advance(ms) {
      const target = now + ms;
      while (toggleAtMs !== undefined && toggleAtMs <= target) {
        integrate(toggleAtMs);
        output = !output;
        toggleAtMs = undefined;
      }
      integrate(target);
      await report().catch(() => undefined);
    },
    energyKwhByHour: () => new Map(hours),
    setSilent(value) {
      silent = value;
    },
    publishRaw: (subtopic, payload) =>
      client ? client.publishAsync(`${prefix}/${subtopic}`, payload, { qos: 1 }).then(() => undefined) : Promise.resolve(),
    run(clock, stepMs, signal) {
      return followClock(this, clock, stepMs, signal);
    },
    ...clientEnds(
      () => client,
      () => (client = undefined),
    ),
  };
}
