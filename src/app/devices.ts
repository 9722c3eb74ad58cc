/**
 * The configured devices, each built on its link and watched by the fail-safe supervisor, and the
 * heartbeats of chargers whose watchdog wants a register written.
 */
import { codeOf, isWattshiftError } from '../errors.js';
import { moduleOf, type Module, type Part } from '../lifecycle.js';
import { buildDevice, type BuiltDevice } from '../devices/factory.js';
import { superviseDevice, type SupervisedDevice } from '../devices/supervisor.js';
import { startHeartbeats } from '../jobs/heartbeats.js';
import { zoneComfortSetpointC } from '../jobs/zone-control.js';
import { createSocTopic, type SocTopic } from '../devices/mqtt/soc-topic.js';
import type { MqttConnection } from '../devices/mqtt/index.js';
import type { ModbusBus } from '../devices/modbus/bus.js';
import type { CentralSystem } from '../devices/ocpp/central-system.js';
import type { Store } from '../store/types.js';
import type { AppContext } from './context.js';

const leaseMs = 10 * 60_000;

export interface DeviceParts {
  built: Map<string, BuiltDevice>;
  supervised: Map<string, SupervisedDevice>;
  /** Each vehicle's own SoC topic, by vehicle id. */
  vehicleSoc: Map<string, SocTopic>;
}

/** The links the devices are reached through, and the store their kept state lives in. */
export interface DeviceNeeds {
  store: Store;
  mqtt: MqttConnection | null;
  buses: Map<string, ModbusBus>;
  ocpp: CentralSystem | null;
}

export function devicesModule(ctx: AppContext, needs: DeviceNeeds): Part<DeviceParts> {
  const { config, deps, clock, log } = ctx;
  const built = new Map<string, BuiltDevice>();
  const supervised = new Map<string, SupervisedDevice>();
  const vehicleSoc = new Map<string, SocTopic>();
  return {
    name: 'devices',
    async start() {
      const { mqtt } = needs;
      // Devices on MQTT would start in their safe state if the first tick ran before the broker answered.
      await mqtt?.waitConnected(AbortSignal.timeout(5_000)).catch((err: unknown) => {
        if (isWattshiftError(err, 'MQTT_AUTH_REJECTED')) throw err;
        log.warn({ code: codeOf(err, 'MQTT_UNAVAILABLE') }, 'MQTT broker not reachable at start; retrying in the background');
      });

      // The cross-check makes a SoC topic need the mqtt section.
      for (const v of config.vehicles) {
        if (v.soc && mqtt) vehicleSoc.set(v.id, createSocTopic(v.soc, { connection: mqtt, clock, logger: deps.logger, device: v.id }));
      }
      for (const d of config.devices) {
        const b = buildDevice(d, {
          buses: needs.buses,
          mqtt,
          ocpp: needs.ocpp,
          clock,
          logger: deps.logger,
          state: needs.store,
          requestTimeoutMs: deps.deviceTimeoutMs ?? 5_000,
          ...(deps.configDir ? { baseDir: deps.configDir } : {}),
        });
        built.set(d.id, b);
        supervised.set(
          d.id,
          superviseDevice(
            {
              id: d.id,
              kind: d.kind,
              capabilities: b.capabilities,
              leaseMs,
              readTimeoutMs: deps.deviceTimeoutMs ?? 5_000,
              ...(d.kind === 'evCharger' ? { safeCurrentA: d.safeCurrentA } : {}),
              ...(d.kind === 'zone' && d.thermostat
                ? { safeSetpointC: () => zoneComfortSetpointC(d, 'comfort', clock.nowMs(), config.site.timezone)! }
                : {}),
            },
            { clock, logger: deps.logger },
          ),
        );
      }
      return { built, supervised, vehicleSoc };
    },
    async stop() {
      // Blocks are released before the links close: a lease the device cannot end by itself ends here.
      for (const d of supervised.values()) await d.stop().catch(() => undefined);
      for (const b of built.values()) b.close();
      for (const soc of vehicleSoc.values()) soc.close();
    },
    health: () =>
      [...supervised].map(([id, d]) => {
        const h = d.health();
        return { name: `device:${id}`, ok: h.state === 'up', ...(h.lastError ? { lastError: { ...h.lastError, atMs: h.sinceMs } } : {}) };
      }),
  };
}

export function heartbeatsModule(ctx: AppContext, needs: Pick<DeviceParts, 'built'>): Module {
  const { clock, deps } = ctx;
  return moduleOf('heartbeats', () =>
    startHeartbeats(
      [...needs.built].flatMap(([device, b]) => b.heartbeats.map((heartbeat) => ({ device, heartbeat }))),
      { clock, logger: deps.logger },
    ),
  );
}
