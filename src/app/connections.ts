/**
 * The links devices are reached through: the home-automation MQTT connection (shared with the Home
 * Assistant bridge), the Modbus buses and the OCPP central system chargers connect to.
 */
import type { Part } from '../lifecycle.js';
import { createMqttConnection, type MqttConnection } from '../devices/mqtt/index.js';
import { createModbusBuses, type ModbusBus } from '../devices/modbus/bus.js';
import { startCentralSystem } from '../devices/ocpp/start.js';
import type { CentralSystem } from '../devices/ocpp/central-system.js';
import { haWill } from '../ha/publisher.js';
import type { AppContext } from './context.js';

/** Connects in the background: the devices module waits for it. None without an mqtt section. */
export function mqttModule(ctx: AppContext): Part<MqttConnection | null> {
  const { config, deps, counters, bus } = ctx;
  let made: MqttConnection | null = null;
  return {
    name: 'mqtt',
    async start() {
      if (!config.mqtt) return null;
      const m = config.mqtt;
      made = createMqttConnection(
        {
          url: m.url,
          clientId: m.clientId,
          rejectUnauthorized: m.rejectUnauthorized,
          will: haWill(m.baseTopic),
          maxPacketBytes: m.maxPacketBytes,
          onOversized: (p) => {
            counters.refused('mqtt', 'MQTT_MESSAGE_TOO_LARGE');
            if (p.topic !== undefined) bus.emit('mqttOversized', { topic: p.topic });
          },
          ...(m.username ? { username: m.username } : {}),
          ...(m.password ? { password: m.password } : {}),
          ...(m.ca ? { caFile: m.ca } : {}),
          ...(m.cert ? { certFile: m.cert } : {}),
          ...(m.key ? { keyFile: m.key } : {}),
        },
        { logger: deps.logger },
      );
      return made;
    },
    stop: async () => {
      await made?.close().catch(() => undefined);
    },
  };
}

export function modbusModule(ctx: AppContext): Part<Map<string, ModbusBus>> {
  const { config, deps, clock } = ctx;
  let made = new Map<string, ModbusBus>();
  return {
    name: 'modbus',
    async start() {
      made = createModbusBuses(config.modbus, { clock, logger: deps.logger });
      return made;
    },
    stop: async () => {
      for (const b of made.values()) await b.close().catch(() => undefined);
    },
  };
}

/** The OCPP central system chargers connect to; none without an ocpp section. */
export function ocppModule(ctx: AppContext): Part<CentralSystem | null> {
  const { config, deps, clock } = ctx;
  let made: CentralSystem | null = null;
  return {
    name: 'ocpp',
    async start() {
      made = config.ocpp
        ? await startCentralSystem(config, {
            clock,
            logger: deps.logger,
            ...(deps.deviceTimeoutMs !== undefined ? { requestTimeoutMs: deps.deviceTimeoutMs } : {}),
          })
        : null;
      return made;
    },
    stop: async () => {
      await made?.close().catch(() => undefined);
    },
  };
}
