/**
 * A thermostat's setpoint on MQTT, in zigbee2mqtt's convention for climate devices: the setpoint is
 * written as a JSON payload to the device's `/set` topic and read back from its state topic (the
 * device publishes its whole state there after a change). Home Assistant climate entities bridged to
 * MQTT take the same pair of topics.
 */
import type { ZoneThermostatConfig } from '../../config/schema-zone.js';
import type { ThermostatSetpoint } from '../../ports.js';
import { LatestValues } from './values.js';
import { atPath, guard, parseJson, plausible } from './util.js';
import type { MqttDeviceDeps } from './types.js';

export interface MqttThermostat extends ThermostatSetpoint {
  close(): void;
}

export function createMqttThermostat(config: ZoneThermostatConfig, deps: MqttDeviceDeps & { device: string; staleAfterS: number }): MqttThermostat {
  const log = deps.logger.child({ component: 'thermostat', device: deps.device });
  const values = new LatestValues({
    device: deps.device,
    clock: deps.clock,
    staleAfterMs: deps.staleAfterS * 1000,
    isConnected: () => deps.connection.connected,
  });
  const unsubscribe = deps.connection.subscribe(config.stateTopic, (_topic, payload) => {
    guard(
      (err) => {
        values.bad('setpoint', err);
        log.warn({ code: err.code, err: err.message }, 'unusable thermostat state: its setpoint counts as unknown');
      },
      () => {
        const raw = atPath(parseJson(payload, `${deps.device} thermostat state`), config.setpointPath);
        // A state without the setpoint (another attribute changed) says nothing about it.
        if (raw === undefined) return;
        values.put('setpoint', plausible(Number(raw), 0, 40, `${deps.device} thermostat setpoint`));
      },
    );
  });
  return {
    readSetpointC: async () => values.get('setpoint') as number,
    async writeSetpointC(setpointC) {
      await deps.connection.publish(config.commandTopic, config.commandTemplate.replaceAll('{{value}}', String(setpointC)), { qos: 1 });
    },
    close: unsubscribe,
  };
}
