/**
 * A solar device's capabilities: its production as an energy counter and a power reading, from a
 * SunSpec inverter on a Modbus bus or from two MQTT topics. The values are production (positive
 * while the sun shines); nothing is controlled.
 */
import { mqttMapSourceSchema, type SolarConfig } from '../config/schema.js';
import { WattshiftError } from '../errors.js';
import type { DeviceCapabilities } from './supervisor.js';
import type { DeviceBuildContext } from './factory.js';
import { createSunSpecInverter } from './modbus/sunspec.js';
import { createMqttDevice } from './mqtt/index.js';

export function buildSolarCapabilities(device: SolarConfig, ctx: DeviceBuildContext, closers: { close(): void }[]): DeviceCapabilities {
  const s = device.source;
  if (s.type === 'sunspec') {
    const bus = ctx.buses.get(s.bus);
    if (!bus) throw new WattshiftError('CONFIG_INVALID', `devices.${device.id}: unknown modbus bus '${s.bus}'`);
    const inverter = createSunSpecInverter(bus, s.unitId, s.baseAddress !== undefined ? { baseAddress: s.baseAddress } : {});
    return { energyMeter: inverter, powerMeter: inverter };
  }
  if (!ctx.mqtt) throw new WattshiftError('CONFIG_INVALID', `devices.${device.id}: an MQTT source needs the mqtt section`);
  // Each topic is a topic map of its own: the map's parsing, bounds and staleness serve both.
  const deps = { connection: ctx.mqtt, clock: ctx.clock, logger: ctx.logger.child({ component: 'devices', device: device.id }) };
  const options = { id: device.id, staleAfterS: device.staleAfterS };
  const energy = createMqttDevice(
    mqttMapSourceSchema.parse({
      type: 'mqtt',
      stateTopic: s.energyTopic,
      energyKwhPath: s.energyPath,
      energyScale: s.energyUnit === 'Wh' ? 0.001 : 1,
    }),
    deps,
    options,
  );
  closers.push(energy);
  const caps: DeviceCapabilities = energy.energyMeter ? { energyMeter: energy.energyMeter } : {};
  if (s.powerTopic) {
    const power = createMqttDevice(mqttMapSourceSchema.parse({ type: 'mqtt', stateTopic: s.powerTopic, powerWPath: s.powerPath }), deps, options);
    closers.push(power);
    if (power.powerMeter) caps.powerMeter = power.powerMeter;
  }
  return caps;
}
