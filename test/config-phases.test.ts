/** `devices[].model.phaseSwitching`: 1-phase/3-phase switching of a charger, off by default. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { baseDocument as base, configEnv as env } from './helpers/config-document.js';
import { problemsOf as problemsOfConfig } from './helpers/config-problems.js';

const goe = { type: 'goe', topicPrefix: 'go-eCharger/1' };
const car = (model: Record<string, unknown>, charger: unknown = goe) => ({
  ...base,
  devices: [{ id: 'car', kind: 'evCharger', charger, model: { capacityKwh: 60, ...model } }],
});
const modelOf = (doc: unknown) => {
  const d = parseConfig(doc, { env }).config.devices[0]!;
  if (d.kind !== 'evCharger') throw new Error('not a charger');
  return d.model;
};

describe('model.phaseSwitching config', () => {
  it('is absent by default: an existing charger config parses exactly as before', () => {
    expect(modelOf(car({}))).not.toHaveProperty('phaseSwitching');
  });

  it('fills minIntervalS and keeps it off unless enabled', () => {
    expect(modelOf(car({ phaseSwitching: {} })).phaseSwitching).toEqual({ enabled: false, minIntervalS: 600 });
    expect(modelOf(car({ phaseSwitching: { enabled: true, minIntervalS: 900 } })).phaseSwitching).toEqual({ enabled: true, minIntervalS: 900 });
  });

  it('refuses unknown keys and a too short or fractional interval', () => {
    expect(problemsOfConfig(car({ phaseSwitching: { enabled: true, minIntervalS: 10 } }), env)).toEqual([
      expect.objectContaining({ path: 'devices[0].model.phaseSwitching.minIntervalS', message: expect.stringMatching(/at least 60 s/) }),
    ]);
    expect(problemsOfConfig(car({ phaseSwitching: { enabled: true, minIntervalS: 90.5 } }), env)).toEqual([
      expect.objectContaining({ path: 'devices[0].model.phaseSwitching.minIntervalS' }),
    ]);
    expect(problemsOfConfig(car({ phaseSwitching: { on: true } }), env)).toEqual([
      expect.objectContaining({ path: 'devices[0].model.phaseSwitching.on', message: 'unknown key' }),
    ]);
  });

  it('needs a 3-phase charger whose source can switch (go-e)', () => {
    expect(problemsOfConfig(car({ phases: 1, phaseSwitching: { enabled: true } }), env)).toEqual([
      expect.objectContaining({ path: 'devices[0].model.phaseSwitching', message: expect.stringMatching(/3-phase charger/) }),
    ]);
    const mqttCharger = { type: 'mqtt', currentTopic: 'car/current/set' };
    expect(problemsOfConfig(car({ phaseSwitching: { enabled: true } }, mqttCharger), env)).toEqual([
      expect.objectContaining({
        path: 'devices[0].model.phaseSwitching',
        message: expect.stringMatching(/"mqtt" charger source cannot switch phases/),
      }),
    ]);
    // Off, any charger is fine.
    expect(problemsOfConfig(car({ phases: 1, phaseSwitching: { enabled: false } }, mqttCharger), env)).toEqual([]);
  });
});
