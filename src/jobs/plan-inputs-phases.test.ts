import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../config/load.js';
import { buildPlanInput, type EvNow } from './plan-inputs.js';

const now = Date.UTC(2026, 0, 14, 9);
const configWith = (phaseSwitching: unknown, supply?: 'TN' | 'IT') =>
  defaultConfig({
    mqtt: { url: 'mqtt://127.0.0.1:1883' },
    ...(supply ? { site: { fuse: { mainFuseA: 25, phases: 3, supply, meter: 'han' } } } : {}),
    devices: [
      { id: 'han', kind: 'meter', meter: { type: 'amsreader', topic: 'ams/meter' } },
      {
        id: 'car',
        kind: 'evCharger',
        charger: { type: 'goe', topicPrefix: 'go-e/1' },
        model: { capacityKwh: 60, maxCurrentA: 16, ...(phaseSwitching ? { phaseSwitching } : {}) },
      },
    ],
  });

function evRange(config: ReturnType<typeof defaultConfig>): [number, number] {
  const car = config.devices.find((d) => d.id === 'car');
  if (car?.kind !== 'evCharger') throw new Error('not a charger');
  const ev: EvNow = {
    config: car,
    plugged: true,
    socPct: null,
    sessionKwh: 0,
    sessionStartMs: null,
    departureOverrideMs: null,
    targetKwhOverride: null,
    targetSocOverride: null,
  };
  const input = buildPlanInput(
    config,
    { nowMs: now, prices: { forecast: null, advice: null, actual: null }, events: [], tanks: [], evs: [ev], baseLoadKw: 0.5 },
    new Map(),
  );
  const p = input.evs[0]!;
  return [Math.round(p.minPowerKw * 1000) / 1000, Math.round(p.maxPowerKw * 1000) / 1000];
}

describe('buildPlanInput with phase switching', () => {
  it("gives the planner 1-phase minimum to 3-phase maximum, on the site's supply", () => {
    expect(evRange(configWith(undefined))).toEqual([4.14, 11.04]);
    expect(evRange(configWith({ enabled: false }))).toEqual([4.14, 11.04]);
    expect(evRange(configWith({ enabled: true }))).toEqual([1.38, 11.04]);
    expect(evRange(configWith({ enabled: true }, 'TN'))).toEqual([1.38, 11.04]);
    expect(evRange(configWith({ enabled: true }, 'IT'))).toEqual([1.38, 6.374]);
  });
});
