/** `kind: heatPump`: accepted with its defaults, refused with its key path where it is wrong. */
import { describe, expect, it } from 'vitest';
import { parseConfig, type ConfigProblem } from '../src/config/load.js';
import { isWattshiftError } from '../src/errors.js';
import { switchesWithoutLease } from '../src/devices/lease-warnings.js';
import { checkDeviceSources } from '../src/devices/preflight.js';
import { withoutMqtt, configEnv } from './helpers/config-document.js';

const base = { ...withoutMqtt, modbus: { hp: { type: 'tcp', host: '127.0.0.1' } } };
const env = configEnv;
const relay = (channel: number) => ({ type: 'modbus', bus: 'hp', profile: 'wattshift-sim-heat-pump', channel });
const pump = (over: Record<string, unknown> = {}, model: Record<string, unknown> = {}) => ({
  id: 'hp',
  kind: 'heatPump',
  contacts: { relay1: relay(0), relay2: relay(1) },
  thermometer: { type: 'modbus', bus: 'hp', profile: 'wattshift-sim-heat-pump', point: 'temperatureC' },
  model: { volumeL: 200, electricKw: 0.5, ...model },
  ...over,
});

function problemsOf(devices: unknown[]): ConfigProblem[] {
  try {
    parseConfig({ ...base, devices }, { env });
  } catch (err) {
    if (isWattshiftError(err, 'CONFIG_INVALID')) return err.details?.problems as ConfigProblem[];
    throw err;
  }
  throw new Error('expected CONFIG_INVALID');
}

describe('heatPump config', () => {
  it("is accepted with the label's lock limits and a tank model with a COP", () => {
    const { config } = parseConfig({ ...base, devices: [pump()] }, { env });
    const d = config.devices[0]!;
    if (d.kind !== 'heatPump') throw new Error('kind');
    expect(d.contacts.swapped).toBe(false);
    expect(d.block).toEqual({ maxMinutes: 120, perDay: 3, maxMinutesPerDay: 360, minGapMinutes: 60 });
    expect(d.model).toMatchObject({ electricKw: 0.5, cop: 2.8, normalC: 50, boostC: 60, floorC: 45, maxC: 65, volumeL: 200 });
  });

  it('refuses unknown keys, an element, a lock over 2 hours, one relay twice, and setpoints out of order', () => {
    const paths = (devices: unknown[]): string[] => problemsOf(devices).map((p) => p.path);
    expect(paths([pump({ bogus: 1 })])).toEqual(['devices[0].bogus']);
    expect(paths([pump({}, { elementKw: 2 })]).join()).toMatch(/devices\[0\]\.model/);
    expect(paths([pump({ block: { maxMinutes: 180 } })])).toContain('devices[0].block.maxMinutes');
    expect(paths([pump({ contacts: { relay1: relay(0), relay2: relay(0) } })])).toContain('devices[0].contacts.relay2');
    expect(paths([pump({}, { normalC: 55, boostC: 52 })])).toContain('devices[0].model.boostC');
    expect(paths([pump({}, { floorC: 70, maxC: 65, boostC: 60 })])).toContain('devices[0].model.floorC');
    expect(paths([pump({}, { boostC: 55, comfort: [{ cron: '0 7 * * *', tempC: 58 }] })])).toEqual([
      'devices[0].model.legionella.tempC',
      'devices[0].model.comfort[0].tempC',
    ]);
    expect(paths([pump({ contacts: { relay1: { type: 'goe', topicPrefix: 'x' }, relay2: relay(1) } })]).join()).toMatch(
      /devices\[0\]\.contacts\.relay1/,
    );
  });

  it('is checked before start: a relay board without the second channel, and relays without a timer', () => {
    const board = (profile: string, channel: number) => ({ type: 'modbus', bus: 'hp', profile, channel });
    const { config } = parseConfig(
      { ...base, devices: [pump({ contacts: { relay1: board('wattshift-sim-tank', 0), relay2: board('wattshift-sim-tank', 1) } })] },
      { env },
    );
    expect(checkDeviceSources(config).map((p) => p.path)).toEqual(['devices[0].contacts.relay2.profile']);
    const plain = parseConfig(
      { ...base, devices: [pump({ contacts: { relay1: board('generic-relay', 0), relay2: board('generic-relay', 1) } })] },
      { env },
    ).config;
    expect(switchesWithoutLease(plain)).toHaveLength(2);
    expect(switchesWithoutLease(parseConfig({ ...base, devices: [pump()] }, { env }).config)).toEqual([]);
  });
});
