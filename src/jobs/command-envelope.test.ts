import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load.js';
import { isWattshiftError } from '../errors.js';
import { CommandGovernor, checkCommandLimits, commandRanges, commandsPerMinute } from './command-envelope.js';

const { config } = parseConfig({
  version: 1,
  site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 17 },
  spark: { clientId: 'c', clientSecret: 's' },
  mqtt: { url: 'mqtt://127.0.0.1:1883' },
  devices: [
    {
      id: 'tank',
      kind: 'hotWaterTank',
      switch: { type: 'shelly', topicPrefix: 'shelly-tank' },
      model: { volumeL: 200, elementKw: 2, floorC: 45, maxC: 75, minOnMinutes: 20, maxStartsPerDay: 2 },
    },
    { id: 'car', kind: 'evCharger', charger: { type: 'goe', topicPrefix: 'go-e/1' }, model: { capacityKwh: 60 } },
  ],
});
const tank = config.devices[0]!;
const car = config.devices[1]!;
const now = Date.UTC(2026, 0, 14, 12);

function code(fn: () => void): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    return isWattshiftError(err) ? err.code : 'OTHER';
  }
}

describe('checkCommandLimits', () => {
  it('refuses what the configured device cannot hold, accepts what it can', () => {
    expect(code(() => checkCommandLimits({ deviceId: 'tank', floorC: 44 }, tank, now))).toBe('MQTT_COMMAND_INVALID');
    expect(code(() => checkCommandLimits({ deviceId: 'tank', floorC: 71 }, tank, now))).toBe('MQTT_COMMAND_INVALID');
    expect(code(() => checkCommandLimits({ deviceId: 'tank', floorC: 55 }, tank, now))).toBeNull();
    expect(code(() => checkCommandLimits({ deviceId: 'car', targetKwh: 61 }, car, now))).toBe('MQTT_COMMAND_INVALID');
    expect(code(() => checkCommandLimits({ deviceId: 'car', targetKwh: 60 }, car, now))).toBeNull();
    expect(code(() => checkCommandLimits({ deviceId: 'car', departure: '9999-01-01T00:00:00Z' }, car, now))).toBe('MQTT_COMMAND_INVALID');
    expect(code(() => checkCommandLimits({ deviceId: 'car', departure: new Date(now - 1000).toISOString() }, car, now))).toBe('MQTT_COMMAND_INVALID');
    expect(code(() => checkCommandLimits({ deviceId: 'car', departure: new Date(now + 86_400_000).toISOString() }, car, now))).toBeNull();
  });
});

describe('commandRanges', () => {
  it('states the limits checkCommandLimits holds commands to, edges included', () => {
    expect(commandRanges(tank)).toEqual({ floorC: { min: 45, max: 70 } });
    expect(commandRanges(car)).toEqual({ targetKwhMax: 60 });
    const { floorC } = commandRanges(tank);
    expect(code(() => checkCommandLimits({ deviceId: 'tank', floorC: floorC!.min }, tank, now))).toBeNull();
    expect(code(() => checkCommandLimits({ deviceId: 'tank', floorC: floorC!.max }, tank, now))).toBeNull();
    expect(code(() => checkCommandLimits({ deviceId: 'tank', floorC: floorC!.max + 0.5 }, tank, now))).toBe('MQTT_COMMAND_INVALID');
  });
});

describe('CommandGovernor', () => {
  it("holds a mode for the tank's minimum on/off time and its starts per day", () => {
    const g = new CommandGovernor();
    g.admit({ deviceId: 'tank', mode: 'off' }, tank, 'auto', now);
    expect(code(() => g.admit({ deviceId: 'tank', mode: 'boost' }, tank, 'off', now + 60_000))).toBe('MQTT_COMMAND_LIMITED');
    // The same mode again is no change, and other fields go through.
    expect(code(() => g.admit({ deviceId: 'tank', mode: 'off', floorC: 50 }, tank, 'off', now + 60_000))).toBeNull();
    expect(code(() => g.admit({ deviceId: 'tank', mode: 'boost' }, tank, 'off', now + 20 * 60_000))).toBeNull();
    g.admit({ deviceId: 'tank', mode: 'auto' }, tank, 'boost', now + 40 * 60_000);
    g.admit({ deviceId: 'tank', mode: 'off' }, tank, 'auto', now + 60 * 60_000);
    // 2 × maxStartsPerDay = 4 mode changes a day.
    expect(code(() => g.admit({ deviceId: 'tank', mode: 'boost' }, tank, 'off', now + 80 * 60_000))).toBe('MQTT_COMMAND_LIMITED');
    expect(code(() => g.admit({ deviceId: 'tank', mode: 'boost' }, tank, 'off', now + 86_400_000 + 1))).toBeNull();
  });

  it('lets a boost be cancelled at once, and holds the next boost', () => {
    const g = new CommandGovernor();
    g.admit({ deviceId: 'car', mode: 'boost' }, car, 'auto', now);
    expect(code(() => g.admit({ deviceId: 'car', mode: 'auto' }, car, 'boost', now + 5_000))).toBeNull();
    expect(code(() => g.admit({ deviceId: 'car', mode: 'boost' }, car, 'auto', now + 10_000))).toBe('MQTT_COMMAND_LIMITED');
    g.admit({ deviceId: 'tank', mode: 'boost' }, tank, 'auto', now);
    expect(code(() => g.admit({ deviceId: 'tank', mode: 'auto' }, tank, 'boost', now + 60_000))).toBeNull();
    // Off is no cancel: it waits out the tank's minimum on time like any other change.
    expect(code(() => g.admit({ deviceId: 'tank', mode: 'off' }, tank, 'auto', now + 120_000))).toBe('MQTT_COMMAND_LIMITED');
  });

  it(`admits ${commandsPerMinute} commands a minute per device`, () => {
    const g = new CommandGovernor();
    for (let i = 0; i < commandsPerMinute; i++) g.admit({ deviceId: 'car', targetKwh: 10 + i }, car, 'auto', now + i);
    expect(code(() => g.admit({ deviceId: 'car', targetKwh: 30 }, car, 'auto', now + 100))).toBe('MQTT_COMMAND_LIMITED');
    expect(code(() => g.admit({ deviceId: 'tank', floorC: 50 }, tank, 'auto', now + 100))).toBeNull();
    expect(code(() => g.admit({ deviceId: 'car', targetKwh: 30 }, car, 'auto', now + 60_001))).toBeNull();
  });
});
