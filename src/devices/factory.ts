/**
 * Builds each configured device's capabilities from its sources (Modbus or MQTT), one physical
 * device shared between the roles that name it (a Shelly that switches, meters and measures).
 */
import type { DeviceConfig, HeatPumpConfig, ModbusSource, OcppSource } from '../config/schema.js';
import type { Clock, HeaterSwitch, SgReadyInput } from '../ports.js';
import { createSgReadyInput } from './sg-ready.js';
import type { Logger } from '../log.js';
import { WattshiftError } from '../errors.js';
import type { DeviceCapabilities } from './supervisor.js';
import type { ModbusBus } from './modbus/bus.js';
import { createModbusDevice, type ModbusDevice, type ModbusHeartbeat, type ModbusRole } from './modbus/modbus-device.js';
import { loadProfile } from './modbus/profiles.js';
import type { CentralSystem } from './ocpp/central-system.js';
import { createSocTopic, withSoc } from './mqtt/soc-topic.js';
import { createMqttThermostat } from './mqtt/thermostat.js';
import { createOcppCharger } from './ocpp/ocpp-charger.js';
import { storedSessionTags } from './ocpp/session-tags.js';
import type { Store } from '../store/types.js';
import { createMqttDevice, type MqttConnection, type MqttDevice, type MqttDeviceSource } from './mqtt/index.js';
import { buildSolarCapabilities } from './solar.js';

export interface DeviceBuildContext {
  buses: ReadonlyMap<string, ModbusBus>;
  mqtt: MqttConnection | null;
  /** The OCPP central system, when the config has the ocpp section. */
  ocpp?: CentralSystem | null;
  clock: Clock;
  logger: Logger;
  /** Relative profile paths resolve against the config file's directory. */
  baseDir?: string;
  /** How long an MQTT command waits for the device's answer, ms of clock time. */
  requestTimeoutMs?: number;
  /** The store's key/value state, for what a device must remember across restarts (an OCPP session's car). */
  state?: Pick<Store, 'getState' | 'setState'>;
}

export interface BuiltDevice {
  capabilities: DeviceCapabilities;
  /** Watchdogs some chargers need fed (openWB, Vestel). */
  heartbeats: ModbusHeartbeat[];
  /** Removes MQTT handlers. */
  close(): void;
}

type Role = ModbusRole;

/** Each source of a device with the role it plays (the role is also its config key). */
export function sourcesOf(
  d: DeviceConfig,
): [Role, NonNullable<Exclude<DeviceConfig, { kind: 'solar' }>['meter']> | NonNullable<Extract<DeviceConfig, { kind: 'evCharger' }>['charger']>][] {
  const out: [Role, never][] = [];
  const push = (role: Role, s: unknown): void => {
    if (s) out.push([role, s as never]);
  };
  if (d.kind === 'hotWaterTank') {
    push('switch', d.switch);
    push('meter', d.meter);
    push('thermometer', d.thermometer);
  } else if (d.kind === 'zone') {
    // A thermostat is built apart (a setpoint, not a capability of the sources).
    push('switch', d.switch);
    push('meter', d.meter);
    push('thermometer', d.thermometer);
  } else if (d.kind === 'evCharger') {
    push('charger', d.charger);
    push('meter', d.meter);
  } else if (d.kind === 'heatPump') {
    // The contacts are built apart (both are switches): see sgReadyOf.
    push('meter', d.meter);
    push('thermometer', d.thermometer);
  } else if (d.kind === 'meter') {
    push('meter', d.meter);
  }
  // A solar device's source is built apart (src/devices/solar.ts).
  return out;
}

/** A heat pump's SG Ready relays by config key (built apart from the roles: both are switches). */
export function contactSourcesOf(d: DeviceConfig): ['relay1' | 'relay2', HeatPumpConfig['contacts']['relay1']][] {
  return d.kind === 'heatPump'
    ? [
        ['relay1', d.contacts.relay1],
        ['relay2', d.contacts.relay2],
      ]
    : [];
}

/** The capabilities a role takes from a device that offers more (an MQTT device offers all it has). */
function pick(role: Role, all: DeviceCapabilities): DeviceCapabilities {
  switch (role) {
    case 'switch':
      return all.heaterSwitch ? { heaterSwitch: all.heaterSwitch } : {};
    case 'thermometer':
      return all.thermometer ? { thermometer: all.thermometer } : {};
    case 'meter':
      return {
        ...(all.energyMeter ? { energyMeter: all.energyMeter } : {}),
        ...(all.powerMeter ? { powerMeter: all.powerMeter } : {}),
        ...(all.phaseMeter ? { phaseMeter: all.phaseMeter } : {}),
      };
    case 'charger':
      return {
        ...(all.chargeCurrentLimit ? { chargeCurrentLimit: all.chargeCurrentLimit } : {}),
        ...(all.phaseSwitch ? { phaseSwitch: all.phaseSwitch } : {}),
        ...(all.evStateReader ? { evStateReader: all.evStateReader } : {}),
        ...(all.energyMeter ? { energyMeter: all.energyMeter } : {}),
        ...(all.powerMeter ? { powerMeter: all.powerMeter } : {}),
        ...(all.chargerHoldsCapMs ? { chargerHoldsCapMs: all.chargerHoldsCapMs } : {}),
      };
  }
}

/** An OCPP connector's capabilities; its close() joins the device's other handlers. */
function ocppCharger(device: DeviceConfig, source: OcppSource, ctx: DeviceBuildContext, closers: Map<string, { close(): void }>): DeviceCapabilities {
  if (!ctx.ocpp) throw new WattshiftError('CONFIG_INVALID', `devices.${device.id}: an ocpp charger needs the ocpp section`);
  if (device.kind !== 'evCharger') throw new WattshiftError('CONFIG_INVALID', `devices.${device.id}: an ocpp source drives a charger`);
  const charger = createOcppCharger(ctx.ocpp.link(source.chargePointId), {
    id: device.id,
    connectorId: source.connectorId,
    idTag: source.idTag,
    leaseS: source.leaseS,
    maxCurrentA: device.model.maxCurrentA,
    safeCurrentA: device.safeCurrentA,
    staleAfterS: device.staleAfterS,
    clock: ctx.clock,
    logger: ctx.logger,
    ...(ctx.state ? { sessionTags: storedSessionTags(ctx.state, device.id, ctx.logger) } : {}),
  });
  closers.set(`ocpp:${source.chargePointId}/${source.connectorId}`, charger);
  return charger;
}

/**
 * A heat pump's SG Ready input from its two relays: each relay switched on (a Shelly or Tasmota
 * relay `on`, a Modbus coil energised, a topic map's blockPayload) closes its contact, with the
 * relay's timer as the lease.
 */
function sgReadyOf(device: HeatPumpConfig, switchOf: (s: ReturnType<typeof sourcesOf>[number][1]) => HeaterSwitch | undefined): SgReadyInput {
  const relay = (s: HeatPumpConfig['contacts']['relay1'], name: string): HeaterSwitch => {
    const closesOn = s.type === 'shelly' || s.type === 'tasmota' ? { ...s, blockedState: 'on' as const } : s;
    const sw = switchOf(closesOn as typeof s);
    if (!sw) throw new WattshiftError('CONFIG_INVALID', `devices.${device.id}.contacts.${name}: the source cannot switch a relay`);
    return sw;
  };
  return createSgReadyInput(relay(device.contacts.relay1, 'relay1'), relay(device.contacts.relay2, 'relay2'), device.contacts.swapped);
}

export function buildDevice(device: DeviceConfig, ctx: DeviceBuildContext): BuiltDevice {
  const modbusDevices = new Map<string, ModbusDevice>();
  const mqttDevices = new Map<string, MqttDevice | { close(): void }>();
  const heartbeats: ModbusHeartbeat[] = [];
  let capabilities: DeviceCapabilities = {};
  const log = ctx.logger.child({ component: 'devices', device: device.id });

  const offeredBy = (role: Role, source: ReturnType<typeof sourcesOf>[number][1]): DeviceCapabilities => {
    let offered: DeviceCapabilities;
    if (source.type === 'modbus') {
      const s = source as ModbusSource;
      const bus = ctx.buses.get(s.bus);
      if (!bus) throw new WattshiftError('CONFIG_INVALID', `devices.${device.id}: unknown modbus bus '${s.bus}'`);
      const key = `${s.bus}/${s.unitId}/${s.profile}/${s.channel ?? 0}/${s.point ?? ''}`;
      let md = modbusDevices.get(key);
      if (!md) {
        md = createModbusDevice(s, { bus, profile: loadProfile(s.profile, ctx.baseDir ? { baseDir: ctx.baseDir } : {}), logger: log });
        modbusDevices.set(key, md);
      }
      const caps = md.capabilities(role);
      if (caps.heartbeat) heartbeats.push(caps.heartbeat);
      offered = {
        ...(caps.heaterSwitch ? { heaterSwitch: caps.heaterSwitch } : {}),
        ...(caps.energyMeter ? { energyMeter: caps.energyMeter } : {}),
        ...(caps.powerMeter ? { powerMeter: caps.powerMeter } : {}),
        ...(caps.thermometer ? { thermometer: caps.thermometer } : {}),
        ...(caps.chargeCurrentLimit ? { chargeCurrentLimit: caps.chargeCurrentLimit } : {}),
        ...(caps.evState ? { evStateReader: caps.evState } : {}),
        ...(caps.chargerHoldsCapMs ? { chargerHoldsCapMs: caps.chargerHoldsCapMs } : {}),
      };
    } else if (source.type === 'ocpp') {
      offered = ocppCharger(device, source as OcppSource, ctx, mqttDevices);
    } else {
      if (!ctx.mqtt) throw new WattshiftError('CONFIG_INVALID', `devices.${device.id}: an MQTT source needs the mqtt section`);
      const key = JSON.stringify(source);
      let md = mqttDevices.get(key);
      if (!md) {
        md = createMqttDevice(
          source as MqttDeviceSource,
          { connection: ctx.mqtt, clock: ctx.clock, logger: log },
          { id: device.id, staleAfterS: device.staleAfterS, ...(ctx.requestTimeoutMs ? { requestTimeoutMs: ctx.requestTimeoutMs } : {}) },
        );
        mqttDevices.set(key, md);
      }
      offered = pick(role, md as MqttDevice);
    }
    return pick(role, offered);
  };
  // Later roles win: a dedicated meter overrides a charger's own counter.
  for (const [role, source] of sourcesOf(device)) capabilities = { ...capabilities, ...offeredBy(role, source) };
  if (device.kind === 'solar') {
    const closers: { close(): void }[] = [];
    capabilities = buildSolarCapabilities(device, ctx, closers);
    closers.forEach((c, i) => mqttDevices.set(`solar:${i}`, c));
  }
  if (device.kind === 'heatPump') capabilities.sgReady = sgReadyOf(device, (s) => offeredBy('switch', s).heaterSwitch);
  if (device.kind === 'zone' && device.thermostat) {
    if (!ctx.mqtt) throw new WattshiftError('CONFIG_INVALID', `devices.${device.id}.thermostat: a thermostat needs the mqtt section`);
    const thermostat = createMqttThermostat(device.thermostat, {
      connection: ctx.mqtt,
      clock: ctx.clock,
      logger: log,
      device: device.id,
      staleAfterS: device.staleAfterS,
    });
    mqttDevices.set(`thermostat:${device.id}`, thermostat);
    capabilities = { ...capabilities, thermostatSetpoint: thermostat };
  }
  if (device.kind === 'evCharger' && device.soc && capabilities.evStateReader) {
    if (!ctx.mqtt) throw new WattshiftError('CONFIG_INVALID', `devices.${device.id}.soc: a SoC topic needs the mqtt section`);
    const soc = createSocTopic(device.soc, { connection: ctx.mqtt, clock: ctx.clock, logger: log, device: device.id });
    mqttDevices.set(`soc:${device.id}`, soc);
    capabilities = { ...capabilities, evStateReader: withSoc(capabilities.evStateReader, soc) };
  }
  return {
    capabilities,
    heartbeats,
    close: () => {
      for (const d of mqttDevices.values()) d.close();
    },
  };
}
