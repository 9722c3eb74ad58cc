/** The `vehicles` section and the chargers that name their cars. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { baseDocument as base, configEnv as env } from './helpers/config-document.js';
import { problemsOf as problemsOfConfig } from './helpers/config-problems.js';

const charger = (extra: Record<string, unknown> = {}) => ({
  id: 'garage',
  kind: 'evCharger',
  charger: { type: 'goe', topicPrefix: 'go-eCharger/1' },
  model: { capacityKwh: 60 },
  ...extra,
});
const carA = { id: 'car-a', capacityKwh: 64, identify: { idTags: ['TAG-A'], goeCards: [0] } };
const carB = { id: 'car-b', capacityKwh: 40, departures: [{ cron: '30 7 * * 1-5', targetSocPct: 90 }], identify: { goeCards: [1] } };
const problemsOf = (document: unknown) => problemsOfConfig(document, env);

describe('vehicles config', () => {
  it("keeps a config without vehicles as it was: the charger's model is the car", () => {
    const { config } = parseConfig({ ...base, devices: [charger()] }, { env });
    expect(config.vehicles).toEqual([]);
    expect(config.devices[0]).not.toHaveProperty('vehicles');
    expect(config.devices[0]).not.toHaveProperty('defaultVehicle');
  });

  it('accepts cars with defaults filled and a charger naming them', () => {
    const { config } = parseConfig(
      { ...base, vehicles: [carA, carB], devices: [charger({ vehicles: ['car-a', 'car-b'], defaultVehicle: 'car-b' })] },
      { env },
    );
    expect(config.vehicles[0]).toEqual({
      id: 'car-a',
      resourceId: null,
      capacityKwh: 64,
      targetSocPct: 80,
      departure: '07:00',
      departures: [],
      efficiency: 0.9,
      identify: { idTags: ['TAG-A'], goeCards: [0] },
    });
    expect(config.vehicles[1]?.departures).toEqual([{ cron: '30 7 * * 1-5', targetSocPct: 90 }]);
    expect(config.devices[0]).toMatchObject({ vehicles: ['car-a', 'car-b'], defaultVehicle: 'car-b' });
  });

  it('refuses unknown vehicle ids, a default the charger does not serve and names without a vehicles section', () => {
    expect(problemsOf({ ...base, vehicles: [carA], devices: [charger({ vehicles: ['car-a', 'car-x'], defaultVehicle: 'car-y' })] })).toEqual([
      expect.objectContaining({
        path: 'devices[0].vehicles[1]',
        message: 'unknown vehicle "car-x" (did you mean "car-a"?) (vehicles in the config: car-a)',
      }),
      expect.objectContaining({
        path: 'devices[0].defaultVehicle',
        message: 'unknown vehicle "car-y" (did you mean "car-a"?) (vehicles in the config: car-a)',
      }),
      expect.objectContaining({ path: 'devices[0].defaultVehicle', message: expect.stringMatching(/not among the charger's vehicles/) }),
    ]);
    expect(problemsOf({ ...base, devices: [charger({ defaultVehicle: 'car-a' })] })).toEqual([
      expect.objectContaining({ path: 'devices[0].defaultVehicle', message: 'unknown vehicle "car-a" (vehicles in the config: none)' }),
      expect.objectContaining({ path: 'devices[0].vehicles', message: expect.stringMatching(/vehicles section is empty/) }),
    ]);
  });

  it('refuses an id tag or card claimed by two cars, duplicate ids and an id shared with a device', () => {
    const twin = { ...carB, id: 'car-a', identify: { idTags: ['TAG-A'], goeCards: [0] } };
    expect(problemsOf({ ...base, vehicles: [carA, twin, { ...carB, id: 'garage' }], devices: [charger()] })).toEqual([
      expect.objectContaining({ path: 'vehicles[2].id', message: 'vehicle id "garage" is also a device id' }),
      expect.objectContaining({ path: 'vehicles[1].id', message: expect.stringMatching(/vehicle id "car-a" is claimed by vehicles\[0\]/) }),
      expect.objectContaining({ path: 'vehicles[1].identify.idTags', message: expect.stringMatching(/id tag "TAG-A" is claimed by vehicles\[0\]/) }),
      expect.objectContaining({ path: 'vehicles[1].identify.goeCards', message: expect.stringMatching(/go-e card 0 is claimed by vehicles\[0\]/) }),
    ]);
  });

  it("refuses a bad card index, a bad departure cron, a SoC topic among wattshift's own and one without the mqtt section", () => {
    const { mqtt: _mqtt, ...noMqtt } = base;
    expect(problemsOf({ ...base, vehicles: [{ ...carA, identify: { goeCards: [10] } }], devices: [] })[0]).toMatchObject({
      path: 'vehicles[0].identify.goeCards[0]',
    });
    expect(problemsOf({ ...base, vehicles: [{ ...carA, departures: [{ cron: '99 7 * * *' }] }], devices: [] })[0]).toMatchObject({
      path: 'vehicles[0].departures[0].cron',
    });
    expect(problemsOf({ ...base, vehicles: [{ ...carA, soc: { topic: 'wattshift/car-a/soc' } }], devices: [] })).toEqual([
      expect.objectContaining({ path: 'vehicles[0].soc.topic', message: expect.stringMatching(/under mqtt.baseTopic "wattshift"/) }),
    ]);
    expect(problemsOf({ ...noMqtt, vehicles: [{ ...carA, soc: { topic: 'car/soc' } }], devices: [] })).toEqual([
      expect.objectContaining({ path: 'vehicles[0].soc', message: 'a SoC topic needs the mqtt section' }),
    ]);
  });
});
