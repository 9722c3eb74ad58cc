/**
 * The links devices are reached through: the home-automation MQTT connection (shared with the Home
 * Assistant bridge), the Modbus buses and the OCPP central system chargers connect to.
 */
import type { Module } from '../lifecycle.js';
import { createMqttConnection } from '../devices/mqtt/index.js';
import { createModbusBuses } from '../devices/modbus/bus.js';
import { startCentralSystem } from '../devices/ocpp/start.js';
import { haWill } from '../ha/publisher.js';
import type { AppContext } from './context.js';

/** Connects in the background: the devices module waits for it. */
export function mqttModule(ctx: AppContext): Module {
  const { config, deps, counters } = ctx;
  return {
    name: 'mqtt',
    async start() {
      ctx.parts.mqtt = null;
      if (!config.mqtt) return;
      const m = config.mqtt;
      ctx.parts.mqtt = createMqttConnection(
        {
          url: m.url,
          clientId: m.clientId,
          rejectUnauthorized: m.rejectUnauthorized,
          will: haWill(m.baseTopic),
          maxPacketBytes: m.maxPacketBytes,
          onOversized: (p) => {
            counters.refused('mqtt', 'MQTT_MESSAGE_TOO_LARGE');
            if (p.topic !== undefined) ctx.parts.ha?.clearOversizedCommand(p.topic);
          },
          ...(m.username ? { username: m.username } : {}),
          ...(m.password ? { password: m.password } : {}),
          ...(m.ca ? { caFile: m.ca } : {}),
          ...(m.cert ? { certFile: m.cert } : {}),
          ...(m.key ? { keyFile: m.key } : {}),
        },
        { logger: deps.logger },
      );
    },
    stop: async () => {
      await ctx.parts.mqtt?.close().catch(() => undefined);
    },
  };
}

export function modbusModule(ctx: AppContext): Module {
  const { config, deps, clock } = ctx;
  return {
    name: 'modbus',
    async start() {
      ctx.parts.buses = createModbusBuses(config.modbus, { clock, logger: deps.logger });
    },
    stop: async () => {
      for (const b of ctx.parts.buses?.values() ?? []) await b.close().catch(() => undefined);
    },
  };
}

export function ocppModule(ctx: AppContext): Module {
  const { config, deps, clock } = ctx;
  return {
    name: 'ocpp',
    async start() {
      ctx.parts.ocpp = config.ocpp
        ? await startCentralSystem(config, {
            clock,
            logger: deps.logger,
            ...(deps.deviceTimeoutMs !== undefined ? { requestTimeoutMs: deps.deviceTimeoutMs } : {}),
          })
        : null;
    },
    stop: async () => {
      await ctx.parts.ocpp?.close().catch(() => undefined);
    },
  };
}
