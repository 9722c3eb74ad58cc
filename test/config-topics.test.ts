/**
 * Topics and outputs across the config: wattshift's own MQTT topics are its alone, and no relay or
 * charger is driven by two devices. `check` reports them with the other problems and `run` exits
 * 78 on them before it connects (a discovery prefix equal to the base topic used to pass `check`
 * and fail only when discovery was first published).
 */
import { describe, expect, it } from 'vitest';
import { inProcess, tempConfig } from './fixtures/config/cli-helpers.js';
import { problemsOf } from './helpers/config-problems.js';
import { baseDocument, configEnv } from './helpers/config-document.js';

const env = configEnv;
const base = { ...baseDocument, mqtt: { url: 'mqtt://127.0.0.1' } };
const model = { volumeL: 200, elementKw: 3 };
const carModel = { capacityKwh: 60 };

function messages(doc: object): Record<string, string> {
  return Object.fromEntries(problemsOf({ ...base, ...doc }, env).map((p) => [p.path, p.message]));
}

describe('MQTT topics', () => {
  it('a device topic under the base topic or the discovery prefix is refused, naming both', () => {
    const m = messages({
      devices: [
        { id: 'tank', kind: 'hotWaterTank', switch: { type: 'shelly', topicPrefix: 'wattshift/shelly1' }, model },
        { id: 'car', kind: 'evCharger', charger: { type: 'goe', topicPrefix: 'homeassistant/goe' }, soc: { topic: 'wattshift' }, model: carModel },
        { id: 'm', kind: 'meter', meter: { type: 'mqtt', stateTopic: 'home/meter', commandTopic: 'wattshift/x' } },
      ],
    });
    expect(m).toEqual({
      'devices[0].switch.topicPrefix': '"wattshift/shelly1" is under mqtt.baseTopic "wattshift", wattshift\'s own topics',
      'devices[1].charger.topicPrefix': '"homeassistant/goe" is under mqtt.discovery.prefix "homeassistant", wattshift\'s own topics',
      'devices[1].soc.topic': '"wattshift" is under mqtt.baseTopic "wattshift", wattshift\'s own topics',
      'devices[2].meter.commandTopic': '"wattshift/x" is under mqtt.baseTopic "wattshift", wattshift\'s own topics',
    });
  });

  it('the discovery prefix and the base topic must not contain each other, unless discovery is off', () => {
    expect(messages({ mqtt: { url: 'mqtt://127.0.0.1', baseTopic: 'homeassistant' } })).toEqual({
      'mqtt.discovery.prefix': 'the discovery prefix "homeassistant" and the base topic "homeassistant" must not contain each other',
    });
    expect(Object.keys(messages({ mqtt: { url: 'mqtt://127.0.0.1', baseTopic: 'ha/wattshift', discovery: { prefix: 'ha' } } }))).toEqual([
      'mqtt.discovery.prefix',
    ]);
    expect(messages({ mqtt: { url: 'mqtt://127.0.0.1', baseTopic: 'homeassistant', discovery: { enabled: false } } })).toEqual({});
    // A prefix that merely starts with the same letters is another topic.
    expect(messages({ mqtt: { url: 'mqtt://127.0.0.1', baseTopic: 'home', discovery: { prefix: 'homeassistant' } } })).toEqual({});
  });
});

describe('outputs', () => {
  it("the tank's switch and the charger cannot drive the same output", () => {
    const modbus = { main: { type: 'tcp', host: '127.0.0.1' } };
    expect(
      messages({
        modbus,
        devices: [
          { id: 'tank', kind: 'hotWaterTank', switch: { type: 'modbus', bus: 'main', unitId: 3, profile: 'generic-relay' }, model },
          { id: 'car', kind: 'evCharger', charger: { type: 'modbus', bus: 'main', unitId: 3, profile: 'abb-terra-ac' }, model: carModel },
        ],
      }),
    ).toEqual({ 'devices[1].charger': 'unit 3 on Modbus bus "main" is already driven by device "tank"' });
    expect(
      messages({
        devices: [
          { id: 'tank', kind: 'hotWaterTank', switch: { type: 'mqtt', commandTopic: 'home/relay/set' }, model },
          { id: 'car', kind: 'evCharger', charger: { type: 'mqtt', currentTopic: 'home/relay/set' }, model: carModel },
        ],
      }),
    ).toEqual({ 'devices[1].charger': 'home/relay/set is already driven by device "tank"' });
  });

  it('distinct outputs, and one device metering what it switches, are fine', () => {
    expect(
      messages({
        modbus: { main: { type: 'tcp', host: '127.0.0.1' } },
        devices: [
          {
            id: 'tank',
            kind: 'hotWaterTank',
            switch: { type: 'shelly', topicPrefix: 'shellyplus1pm-1' },
            meter: { type: 'shelly', topicPrefix: 'shellyplus1pm-1' },
            model,
          },
          { id: 'car', kind: 'evCharger', charger: { type: 'modbus', bus: 'main', unitId: 3, profile: 'abb-terra-ac' }, model: carModel },
          { id: 'grid', kind: 'meter', meter: { type: 'modbus', bus: 'main', unitId: 3, profile: 'eastron-sdm630' } },
        ],
      }),
    ).toEqual({});
  });
});

describe('check and run', () => {
  it('check names the line beside a schema error; run exits 78 before it logs', async () => {
    const { file } = tempConfig(
      [
        'mqtt: {url: "mqtt://127.0.0.1", baseTopic: homeassistant}',
        'log: {level: loud}',
        'devices:',
        '  - {id: tank, kind: hotWaterTank, switch: {type: shelly, topicPrefix: homeassistant/relay}, model: {volumeL: 200, elementKw: 3}}',
      ].join('\n'),
    );
    const checked = await inProcess(['check', '--config', file]);
    expect(checked.code).toBe(78);
    expect(checked.stderr).toContain('log.level (line 7');
    expect(checked.stderr).toMatch(
      /mqtt\.discovery\.prefix \(line 6, column \d+\): the discovery prefix "homeassistant" and the base topic "homeassistant" must not contain each other/,
    );
    expect(checked.stderr).toMatch(
      /devices\[0\]\.switch\.topicPrefix \(line 9, column \d+\): "homeassistant\/relay" is under mqtt\.baseTopic "homeassistant"/,
    );
    const run = await inProcess(['run', '--config', file]);
    expect(run.code).toBe(78);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('must not contain each other');
  });
});
