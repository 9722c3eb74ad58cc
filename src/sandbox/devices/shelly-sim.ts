/**
 * A simulated Shelly Plus 1PM switching a hot water heater, speaking Shelly Gen2 MQTT RPC to a
 * real broker: `Switch.Set` (with `toggle_after`), `Switch.GetStatus`, `Shelly.GetStatus`,
 * `Temperature.GetStatus`; status on `<prefix>/status/switch:<id>` (apower, aenergy.total in Wh)
 * and, with the Plus Add-On, `<prefix>/status/temperature:<sensorId>`; `<prefix>/online` with a
 * last will. Time moves only through `advance(ms)` (or `run(clock)`), so tests are exact: the
 * energy the simulated element drew per UTC hour is the ground truth for metering tests.
 */
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { followClock, publishOnline, type MqttSimulator } from './mqtt-simulator.js';

const hourMs = 3_600_000;

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
  /** Extra mqtt.js options (credentials, TLS). */
  clientOptions?: IClientOptions;
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

  const powerW = (): number => (output && thermostatClosed ? heaterW : 0);

  const switchStatus = (): Record<string, unknown> => {
    const p = powerW();
    return {
      id: switchId,
      source: 'MQTT',
      output,
      apower: p,
      voltage: 230.1,
      current: Number((p / 230.1).toFixed(3)),
      aenergy: { total: Number(energyWh.toFixed(3)), by_minute: [0, 0, 0], minute_ts: Math.floor(now / 1000) },
      temperature: { tC: 41.2, tF: 106.2 },
      ...(toggleAtMs === undefined ? {} : { timer_started_at: 0, timer_duration: (toggleAtMs - now) / 1000 }),
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
  const publishStatus = async (): Promise<void> => {
    await publish(`${prefix}/status/switch:${switchId}`, JSON.stringify(switchStatus()));
    if (options.temperatureSensorId !== undefined) {
      await publish(`${prefix}/status/temperature:${options.temperatureSensorId}`, JSON.stringify(tempStatus()));
    }
  };

  /** Integrates one interval with constant relay state (split further for the thermostat). */
  const integrate = (toMs: number): void => {
    while (now < toMs) {
      const hourEnd = (Math.floor(now / hourMs) + 1) * hourMs;
      const stepEnd = Math.min(toMs, hourEnd, now + 60_000);
      const dtS = (stepEnd - now) / 1000;
      const p = powerW();
      const wh = (p * dtS) / 3600;
      energyWh += wh;
      const hour = Math.floor(now / hourMs) * hourMs;
      hours.set(hour, (hours.get(hour) ?? 0) + wh / 1000);
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
    switch (req.method) {
      case 'Switch.Set': {
        if (params.id !== switchId || typeof params.on !== 'boolean') {
          return respond(req, { error: { code: -103, message: 'Invalid argument' } });
        }
        const wasOn = output;
        output = params.on;
        const after = params.toggle_after;
        toggleAtMs = typeof after === 'number' && after > 0 ? now + after * 1000 : undefined;
        await respond(req, { result: { was_on: wasOn } });
        return publishStatus();
      }
      case 'Switch.GetStatus':
        return respond(req, { result: switchStatus() });
      case 'Temperature.GetStatus':
        return respond(req, { result: tempStatus() });
      case 'Shelly.GetStatus':
        return respond(req, {
          result: {
            [`switch:${switchId}`]: switchStatus(),
            ...(options.temperatureSensorId === undefined ? {} : { [`temperature:${options.temperatureSensorId}`]: tempStatus() }),
          },
        });
      default:
        return respond(req, { error: { code: 404, message: `No handler for ${String(req.method)}` } });
    }
  };

  return {
    get nowMs() { return now; },
    get connected() { return client?.connected ?? false; },
    get output() { return output; },
    get powerW() { return powerW(); },
    get energyWh() { return energyWh; },
    get temperatureC() { return temperatureC; },
    get toggleAtMs() { return toggleAtMs; },
    async start() {
      client = await mqtt.connectAsync(options.url, {
        clientId: `shelly-sim-${prefix}-${Math.random().toString(16).slice(2, 8)}`,
        reconnectPeriod: 500,
        will: { topic: `${prefix}/online`, payload: Buffer.from('false'), qos: 1, retain: true },
        ...options.clientOptions,
      });
      client.on('connect', () => {
        void publish(`${prefix}/online`, 'true', true).then(publishStatus).catch(() => undefined);
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
      await publishStatus();
    },
    async advance(ms) {
      const target = now + ms;
      while (toggleAtMs !== undefined && toggleAtMs <= target) {
        integrate(toggleAtMs);
        output = !output;
        toggleAtMs = undefined;
      }
      integrate(target);
      await publishStatus().catch(() => undefined);
    },
    energyKwhByHour: () => new Map(hours),
    setSilent(value) { silent = value; },
    publishRaw: (subtopic, payload) => (client ? client.publishAsync(`${prefix}/${subtopic}`, payload, { qos: 1 }).then(() => undefined) : Promise.resolve()),
    run(clock, stepMs, signal) {
      return followClock(this, clock, stepMs, signal);
    },
    async crash() {
      client?.stream.destroy();
      await client?.endAsync(true);
      client = undefined;
    },
    async close() {
      await client?.endAsync();
      client = undefined;
    },
  };
}
