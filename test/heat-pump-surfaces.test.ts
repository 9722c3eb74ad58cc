/** A heat pump on the surfaces: Home Assistant discovery (the tank's entities and its SG Ready state) and the status page. */
import { describe, expect, it } from 'vitest';
import { discoveryMessages } from '../src/ha/discovery.js';
import { deviceValues, fieldsForKind } from '../src/ha/state.js';
import { exampleHomeView } from '../src/ha/example-view.js';
import { renderStatusPage } from '../src/status/page.js';
import { checkDiscovery } from './fixtures/ha/discovery-check.js';

const view = exampleHomeView();
const pump = view.devices.find((d) => d.kind === 'heatPump')!;

describe('an SG Ready heat pump on the surfaces', () => {
  it("is announced to Home Assistant with the tank's entities and its SG Ready state, each valid", () => {
    const messages = discoveryMessages({
      baseTopic: 'wattshift',
      prefix: 'homeassistant',
      location: view.location,
      devices: [pump],
      currency: 'NOK',
      swVersion: '0.1.0',
    });
    const objects = messages.map((m) => m.topic.split('/')[3]);
    expect(objects).toEqual(
      expect.arrayContaining(['heatpump_temperature', 'heatpump_floor', 'heatpump_water_heater', 'heatpump_sg_state', 'heatpump_energy']),
    );
    expect(messages.flatMap((m) => checkDiscovery(m.topic, m.payload))).toEqual([]);
    const sg = messages.find((m) => m.topic.includes('heatpump_sg_state'))!;
    expect(sg.payload).toMatchObject({
      device_class: 'enum',
      options: ['block', 'normal', 'boost', 'forced'],
      state_topic: 'wattshift/heatpump/sg_state',
    });
    expect(fieldsForKind('heatPump')).toContain('sg_state');
    expect(deviceValues(pump).sg_state).toBe('block');
  });

  it('is a row of the status page with its kind and SG Ready state', () => {
    const html = renderStatusPage(view, { timezone: 'Europe/Oslo' });
    const row = /<tr data-device="heatpump">.*?<\/tr>/s.exec(html)?.[0] ?? '';
    expect(row).toContain('Heat pump (SG Ready)');
    expect(row).toContain('data-sg="block"');
    expect(row).toContain('locked (1:0)');
  });
});
