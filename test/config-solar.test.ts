/** `kind: solar`: accepted with its defaults, refused with its key path where it is wrong, registered as a SolarInverter. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { meteringOptionsFor } from '../src/jobs/metering.js';
import { resourceTypes } from '../src/registration.js';
import { baseDocument, configEnv } from './helpers/config-document.js';
import { problemsOf } from './helpers/config-problems.js';

const withBus = { ...baseDocument, modbus: { pv: { type: 'tcp', host: '192.168.1.60' } } };
const sunspec = (over: Record<string, unknown> = {}) => ({ id: 'pv', kind: 'solar', source: { type: 'sunspec', bus: 'pv' }, ...over });
const mqtt = (over: Record<string, unknown> = {}) => ({ id: 'pv', kind: 'solar', source: { type: 'mqtt', energyTopic: 'inverter/energy', ...over } });

const paths = (devices: unknown[], doc: Record<string, unknown> = withBus): string[] => problemsOf({ ...doc, devices }, configEnv).map((p) => p.path);

describe('solar config', () => {
  it('takes a SunSpec inverter with unit 1 and the base addresses tried in turn', () => {
    const { config } = parseConfig({ ...withBus, devices: [sunspec({ model: { peakKwp: 6 } })] }, { env: configEnv });
    const d = config.devices[0]!;
    if (d.kind !== 'solar') throw new Error('kind');
    expect(d.source).toEqual({ type: 'sunspec', bus: 'pv', unitId: 1 });
    expect(resourceTypes[d.kind]).toBe('SolarInverter');
    // The counter may not rise faster than the array's peak with headroom; without a peak, unbounded.
    expect(meteringOptionsFor(d, config.site)).toEqual({ maxPowerKw: 9 });
    const bare = parseConfig({ ...withBus, devices: [sunspec()] }, { env: configEnv }).config.devices[0]!;
    expect(meteringOptionsFor(bare, config.site)).toEqual({});
  });

  it('takes MQTT topics with kWh by default', () => {
    const d = parseConfig({ ...withBus, devices: [mqtt({ powerTopic: 'inverter/power' })] }, { env: configEnv }).config.devices[0]!;
    if (d.kind !== 'solar') throw new Error('kind');
    expect(d.source).toEqual({
      type: 'mqtt',
      energyTopic: 'inverter/energy',
      energyPath: '',
      energyUnit: 'kWh',
      powerTopic: 'inverter/power',
      powerPath: '',
    });
  });

  it('refuses an unknown bus, an unknown key, a wildcard topic and a base address SunSpec does not use', () => {
    expect(paths([sunspec({ source: { type: 'sunspec', bus: 'roof' } })])).toEqual(['devices[0].source.bus']);
    expect(paths([sunspec({ meter: { type: 'modbus', bus: 'pv', profile: 'eastron-sdm120' } })])).toEqual(['devices[0].meter']);
    expect(paths([mqtt({ energyTopic: 'inverter/#' })])).toEqual(['devices[0].source.energyTopic']);
    expect(paths([sunspec({ source: { type: 'sunspec', bus: 'pv', baseAddress: 40001 } })])).toEqual(['devices[0].source.baseAddress']);
  });

  it('refuses an MQTT source without the mqtt section, and a topic under wattshift’s own', () => {
    const { mqtt: _omit, ...noMqtt } = withBus as Record<string, unknown>;
    expect(paths([mqtt()], noMqtt)).toEqual(['devices[0].source.type']);
    expect(paths([mqtt({ energyTopic: 'wattshift/pv' })])).toEqual(['devices[0].source.energyTopic']);
  });
});
