/** A solar device in Home Assistant: its entities pass the documented discovery schema, and its energy sensor fits the Energy dashboard's solar source. */
import { describe, expect, it } from 'vitest';
import { discoveryMessages } from '../src/ha/discovery.js';
import { deviceValues, fieldsForKind } from '../src/ha/state.js';
import type { DeviceView } from '../src/view/model.js';
import { checkDiscovery, haSchema } from './fixtures/ha/discovery-check.js';
import { sampleView } from './fixtures/ha/sample-view.js';

const view = sampleView();
const pv = {
  id: 'pv',
  name: 'Rooftop PV',
  kind: 'solar',
  available: true,
  mode: 'auto',
  powerW: 3120,
  energyKwh: 4321.2,
  plannedOn: false,
} as DeviceView;
const messages = discoveryMessages({
  baseTopic: 'wattshift',
  prefix: 'homeassistant',
  location: view.location,
  devices: [...view.devices, pv],
  currency: 'NOK',
  swVersion: '0.1.0',
});
const pvMessages = messages.filter((m) => m.topic.split('/')[3]!.startsWith('pv_'));

describe('solar in Home Assistant', () => {
  it('announces production power and energy, nothing to command', () => {
    expect(pvMessages.map((m) => m.topic.split('/')[3]).sort()).toEqual(['pv_energy', 'pv_power']);
    expect(pvMessages.flatMap((m) => checkDiscovery(m.topic, m.payload))).toEqual([]);
    expect(fieldsForKind('solar')).toEqual(['power', 'energy']);
  });

  it('has an energy sensor the Energy dashboard takes as a solar source (kWh, total_increasing)', () => {
    // The dashboard's solar production takes the same sensors as its grid consumption: device_class energy, a total state class, an energy unit.
    const { consumption } = haSchema.energyDashboard;
    const energy = pvMessages.find((m) => m.topic.split('/')[3] === 'pv_energy')!.payload;
    expect(energy['device_class']).toBe(consumption.device_class);
    expect(energy['state_class']).toBe('total_increasing');
    expect(consumption.units).toContain(energy['unit_of_measurement']);
    expect(energy['name']).toBe('Energy produced');
    expect(deviceValues(pv)).toMatchObject({ power: 3120, energy: 4321.2 });
  });
});
