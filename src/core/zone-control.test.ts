import { describe, expect, it } from 'vitest';
import type { Decision } from './control.js';
import { thermostatSetpointC, withFrostFloor, zoneIntent } from './zone-control.js';

const decision = (allow: boolean, reason = 'device cap 0 kW'): Decision => ({
  setpoints: [
    { kind: 'heater', id: 'living', allow, reason, heldByCap: !allow },
    { kind: 'heater', id: 'tank', allow: false, reason: 'not planned' },
  ],
  expectedDeviceKw: 0,
  baseLoadKw: 0.5,
  guarded: [],
});

describe('withFrostFloor', () => {
  it.each([
    ['below the frost floor: a cap block is lifted', 6.9, false, true],
    ['at the frost floor: the block stays', 7, false, false],
    ['temperature unknown: left to the decision', undefined, false, false],
    ['allowed already: unchanged', 5, true, false],
  ])('%s', (_name, temperatureC, allow, lifted) => {
    const { decision: d, frost } = withFrostFloor(decision(allow), [{ id: 'living', temperatureC, frostC: 7 }]);
    expect(d.setpoints[0]).toMatchObject({ allow: allow || lifted });
    expect(frost).toEqual(lifted ? ['living'] : []);
    if (lifted) {
      expect(d.setpoints[0]).not.toHaveProperty('heldByCap');
      expect(d.setpoints[0]?.reason).toMatch(/frost floor 7 °C/);
    }
    // Another device of the same decision is never touched.
    expect(d.setpoints[1]).toEqual(decision(allow).setpoints[1]);
  });
});

describe('thermostatSetpointC', () => {
  const trv = { minC: 5, maxC: 30, stepC: 0.5 };
  const band = { minC: 20, maxC: 22.5 };
  it.each([
    ['pre-heat: the band top', 'preheat', band, trv, 22.5],
    ['coast: the band lower edge', 'coast', band, trv, 20],
    ['hold: the middle of the band, rounded up to the step', 'hold', band, trv, 21.5],
    ['a coarse step rounds a coast setpoint up, never below the band', 'coast', { minC: 20.2, maxC: 22 }, { ...trv, stepC: 1 }, 21],
    ['within the thermostat limits', 'preheat', { minC: 26, maxC: 32 }, trv, 30],
    ['never below the frost floor', 'coast', { minC: 5, maxC: 6 }, { ...trv, minC: 4 }, 7],
  ] as const)('%s', (_name, intent, b, limits, want) => {
    expect(thermostatSetpointC(intent, b, 7, limits)).toBe(want);
  });
});

describe('zoneIntent', () => {
  const band = { minC: 20, maxC: 22 };
  it.each([
    ['no plan: hold', undefined, 'hold'],
    ['no heat planned: coast', { on: false, energyKwh: 0, endTempC: 20.5, ...band }, 'coast'],
    ['heat that ends the slot above the middle: pre-heat', { on: true, energyKwh: 1.5, endTempC: 21.8, ...band }, 'preheat'],
    ['heat that keeps the room low in the band: hold', { on: true, energyKwh: 0.4, endTempC: 20.4, ...band }, 'hold'],
  ] as const)('%s', (_name, planned, want) => {
    expect(zoneIntent(planned)).toBe(want);
  });
});
