/** `kind: zone`: accepted with its defaults, refused with its key path where it is wrong; its cap stand from the config. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { capHoldOfConfig, deviceHoldOf } from '../src/devices/cap-hold.js';
import { canHoldResourceCap } from '../src/core/cap-hold.js';
import { resourceTypes } from '../src/registration.js';
import { baseDocument, configEnv } from './helpers/config-document.js';
import { problemsOf } from './helpers/config-problems.js';

const relay = { type: 'shelly', topicPrefix: 'shellyplus1pm-zone', switchId: 0 };
const thermostat = { type: 'mqtt', commandTopic: 'zigbee2mqtt/bedroom/set', stateTopic: 'zigbee2mqtt/bedroom' };
const zone = (over: Record<string, unknown> = {}) => ({
  id: 'living',
  kind: 'zone',
  switch: relay,
  thermometer: { type: 'mqtt', stateTopic: 'zigbee2mqtt/living-sensor', temperatureCPath: 'temperature' },
  model: { powerKw: 2 },
  ...over,
});

const paths = (devices: unknown[], doc: Record<string, unknown> = baseDocument): string[] =>
  problemsOf({ ...doc, devices }, configEnv).map((p) => p.path);

describe('zone config', () => {
  it('is accepted with the default presets, a 7 °C frost floor, COP 1 and a medium building', () => {
    const { config } = parseConfig({ ...baseDocument, devices: [zone()] }, { env: configEnv });
    const d = config.devices[0]!;
    if (d.kind !== 'zone') throw new Error('kind');
    expect(d.frostC).toBe(7);
    expect(d.schedule).toEqual([]);
    expect(d.presets).toEqual({
      comfort: { minC: 20, maxC: 22 },
      eco: { minC: 18, maxC: 20 },
      away: { minC: 12, maxC: 16 },
      boost: { minC: 22, maxC: 24 },
    });
    expect(d.model).toEqual({ powerKw: 2, cop: 1, construction: 'medium' });
  });

  it("fills a thermostat with zigbee2mqtt's setpoint convention", () => {
    const { config } = parseConfig({ ...baseDocument, devices: [zone({ switch: undefined, thermostat })] }, { env: configEnv });
    const d = config.devices[0]!;
    if (d.kind !== 'zone') throw new Error('kind');
    expect(d.thermostat).toEqual({
      ...thermostat,
      commandTemplate: '{"occupied_heating_setpoint": {{value}}}',
      setpointPath: 'occupied_heating_setpoint',
      minC: 5,
      maxC: 30,
      stepC: 0.5,
    });
  });

  it('refuses a band upside down, a band at or below the frost floor, and unknown keys', () => {
    expect(paths([zone({ schedule: [{ cron: '0 6 * * *', minC: 22, maxC: 21 }] })])).toEqual(['devices[0].schedule[0].minC']);
    expect(paths([zone({ frostC: 12 })])).toEqual(['devices[0].presets.away.minC']);
    expect(paths([zone({ presets: { eco: { minC: 6, maxC: 19 } } })])).toEqual(['devices[0].presets.eco.minC']);
    expect(paths([zone({ bogus: 1 })])).toEqual(['devices[0].bogus']);
    expect(paths([zone({ schedule: [{ cron: '0 25 * * *', minC: 20, maxC: 22 }] })])).toEqual(['devices[0].schedule[0].cron']);
  });

  it('needs a relay or a thermostat, not both, and a thermostat that reaches every band', () => {
    expect(paths([zone({ switch: undefined })])).toEqual(['devices[0].switch']);
    expect(paths([zone({ thermostat })])).toEqual(['devices[0].thermostat']);
    expect(paths([zone({ switch: undefined, thermostat: { ...thermostat, minC: 25, maxC: 20 } })])).toEqual([
      'devices[0].thermostat.minC',
      'devices[0].thermostat.minC',
      'devices[0].thermostat.maxC',
    ]);
    expect(paths([zone({ switch: undefined, thermostat: { ...thermostat, maxC: 23 } })])).toEqual(['devices[0].thermostat.maxC']);
    expect(paths([zone({ switch: undefined, thermostat: { ...thermostat, commandTemplate: '21' } })])).toEqual([
      'devices[0].thermostat.commandTemplate',
    ]);
    const { mqtt: _mqtt, ...withoutMqtt } = baseDocument;
    expect(paths([zone({ switch: undefined, thermometer: undefined, thermostat })], withoutMqtt)).toEqual(['devices[0].thermostat']);
    expect(paths([zone({ switch: undefined, thermostat: { ...thermostat, commandTopic: 'wattshift/x/set' } })])).toEqual([
      'devices[0].thermostat.commandTopic',
    ]);
  });

  it('is an HVAC resource; its relay holds a cap by its timer, its thermostat holds none', () => {
    expect(resourceTypes.zone).toBe('HVAC');
    const { config } = parseConfig({ ...baseDocument, devices: [zone(), zone({ id: 'bed', switch: undefined, thermostat })] }, { env: configEnv });
    const [withRelay, withThermostat] = config.devices;
    expect(capHoldOfConfig(withRelay!)).toMatchObject({ why: 'Shelly toggle_after' });
    expect(capHoldOfConfig(withRelay!)?.holdsMs).toBeGreaterThan(0);
    expect(capHoldOfConfig(withThermostat!)).toMatchObject({ holdsMs: 0 });
    expect(capHoldOfConfig(withThermostat!)?.why).toMatch(/thermostat/);
    // The daemon's answer to a cap on the thermostat zone's resource: only a cap its 2 kW fit under.
    const hold = deviceHoldOf(withThermostat!, {}, true);
    const cap = (maxKw: number) => [{ startMs: 0, durationMs: 3_600_000, maxKw, resourceId: 'bed' }];
    expect(canHoldResourceCap(hold, cap(0.5))).toBe(false);
    expect(canHoldResourceCap(hold, cap(2))).toBe(true);
  });
});
