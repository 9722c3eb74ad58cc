import { describe, expect, it } from 'vitest';
import { discoveryMessages, discoveryRemovalTopics } from '../src/ha/discovery.js';
import { commandFilters, haTopics, parseCommandTopic, topicMatches } from '../src/ha/topics.js';
import { checkDiscovery, haSchema } from './fixtures/ha/discovery-check.js';
import { sampleView } from './fixtures/ha/sample-view.js';

const view = sampleView();
const input = {
  baseTopic: 'wattshift',
  prefix: 'homeassistant',
  location: view.location,
  devices: view.devices,
  currency: 'NOK',
  swVersion: '0.1.0',
};
const messages = discoveryMessages(input);
const byObject = new Map(messages.map((m) => [m.topic.split('/')[3] as string, m]));

describe('Home Assistant discovery payloads', () => {
  it('every payload matches the documented schema of its component, field by field', () => {
    expect(messages.length).toBeGreaterThan(20);
    const problems = messages.flatMap((m) => checkDiscovery(m.topic, m.payload));
    expect(problems).toEqual([]);
  });

  it('the checker itself rejects what HA rejects', () => {
    const good = byObject.get('tank_energy');
    expect(good).toBeDefined();
    const bad = (patch: Record<string, unknown>) => checkDiscovery(good!.topic, { ...good!.payload, ...patch });
    expect(bad({ state_class: 'measurement' })).toEqual([expect.stringContaining('impossible for energy')]);
    expect(bad({ unit_of_measurement: 'W' })).toEqual([expect.stringContaining('invalid for energy')]);
    expect(bad({ platform: 'sensor' })).toEqual([expect.stringContaining("'platform'")]);
    expect(bad({ entity_category: 'config' })).toEqual([expect.stringContaining('entity_category')]);
    expect(bad({ device: { name: 'x' } })).toEqual([expect.stringContaining('neither identifiers')]);
    const { state_topic: _omit, ...withoutState } = good!.payload;
    expect(checkDiscovery(good!.topic, withoutState)).toEqual([expect.stringContaining("'state_topic'")]);
    const cost = byObject.get('location_plan_cost')!;
    expect(checkDiscovery(cost.topic, { ...cost.payload, state_class: 'measurement' })).toEqual([expect.stringContaining('impossible for monetary')]);
  });

  it('unique_ids are unique and stable (derived from ids only, not names)', () => {
    const ids = messages.map((m) => m.payload['unique_id'] as string);
    expect(new Set(ids).size).toBe(ids.length);
    const renamed = discoveryMessages({
      ...input,
      location: { ...view.location, name: 'Renamed' },
      devices: view.devices.map((d) => ({ ...d, name: `${d.name}!` })),
    });
    expect(renamed.map((m) => m.payload['unique_id'])).toEqual(ids);
    expect(renamed.map((m) => m.topic)).toEqual(messages.map((m) => m.topic));
  });

  it('energy counters are usable in the Energy dashboard and the price is a price entity', () => {
    const { consumption, priceUnitPattern } = haSchema.energyDashboard;
    for (const id of ['tank', 'ev', 'main']) {
      const p = byObject.get(`${id}_energy`)!.payload;
      expect(p['device_class']).toBe(consumption.device_class);
      expect(consumption.stateClasses).toContain(p['state_class']);
      expect(consumption.units).toContain(p['unit_of_measurement']);
    }
    expect(byObject.get('location_price')!.payload['unit_of_measurement']).toMatch(new RegExp(priceUnitPattern));
    expect(byObject.get('location_price')!.payload['device_class']).toBeUndefined();
  });

  it("the month's bill is a monetary total reset at the month's start, and the capacity measure and margin are power in kW", () => {
    const bill = byObject.get('location_bill_month')!.payload;
    expect(bill).toMatchObject({ device_class: 'monetary', state_topic: 'wattshift/bill', value_template: '{{ value_json.total }}' });
    // A total that starts again each month, as Home Assistant's Energy dashboard needs of a cost entity.
    expect(bill).toMatchObject({ state_class: 'total', last_reset_value_template: '{{ value_json.month_start }}' });
    for (const key of ['capacity_measure', 'capacity_margin']) {
      expect(byObject.get(`location_${key}`)!.payload).toMatchObject({
        device_class: 'power',
        unit_of_measurement: 'kW',
        state_class: 'measurement',
        state_topic: 'wattshift/bill',
      });
    }
  });

  it('has one HA device per wattshift device plus the location, linked by via_device', () => {
    const devices = new Map<string, Record<string, unknown>>();
    for (const m of messages) {
      const d = m.payload['device'] as Record<string, unknown>;
      devices.set(JSON.stringify(d['identifiers']), d);
    }
    expect(devices.size).toBe(view.devices.length + 1);
    const loc = [...devices.values()].find((d) => d['via_device'] === undefined)!;
    expect(loc['name']).toBe(view.location.name);
    const locId = (loc['identifiers'] as string[])[0];
    for (const d of devices.values()) if (d !== loc) expect(d['via_device']).toBe(locId);
  });

  it('wires entities to the published topics: mode select, boost button, EV number and datetime', () => {
    const t = haTopics('wattshift');
    const select = byObject.get('tank_mode')!;
    expect(select.topic).toBe('homeassistant/select/wattshift_loc-1/tank_mode/config');
    expect(select.payload).toMatchObject({
      options: ['auto', 'off', 'boost'],
      state_topic: t.deviceField('tank', 'mode'),
      command_topic: t.setField('tank', 'mode'),
    });
    expect(byObject.get('ev_boost')!.payload).toMatchObject({ command_topic: t.set('ev'), payload_press: '{"mode":"boost"}' });
    expect(byObject.get('ev_departure')!.topic.split('/')[1]).toBe('datetime');
    expect(byObject.get('ev_target_kwh')!.payload).toMatchObject({ unit_of_measurement: 'kWh', command_topic: t.setField('ev', 'target_kwh') });
    expect(byObject.get('ev_target_soc')!.payload).toMatchObject({ unit_of_measurement: '%', min: 0, max: 100 });
    expect(byObject.has('main_mode')).toBe(false); // a meter takes no commands
    expect(byObject.has('tank_departure')).toBe(false);
    // every command topic of an entity is one the command listener hears and parses
    for (const m of messages) {
      const ct = m.payload['command_topic'];
      if (typeof ct !== 'string') continue;
      expect(commandFilters('wattshift').some((f) => topicMatches(f, ct))).toBe(true);
      expect(parseCommandTopic('wattshift', ct)).not.toBeNull();
    }
    // availability: bridge and device, both required
    expect(byObject.get('tank_power')!.payload).toMatchObject({
      availability: [{ topic: t.availability }, { topic: t.deviceAvailability('tank') }],
      availability_mode: 'all',
    });
  });

  it('links every device to the status page (configuration_url) when its address is known', () => {
    const linked = discoveryMessages({ ...input, configurationUrl: 'http://gateway.local:8787/' });
    expect(linked.flatMap((m) => checkDiscovery(m.topic, m.payload))).toEqual([]);
    for (const m of linked) expect((m.payload['device'] as Record<string, unknown>)['configuration_url']).toBe('http://gateway.local:8787/');
    for (const m of messages) expect(m.payload['device']).not.toHaveProperty('configuration_url');
  });

  it('removal topics cover every config a device id could have had', () => {
    const removal = new Set(discoveryRemovalTopics('homeassistant', 'loc-1', 'ev'));
    for (const m of messages.filter((x) => x.topic.includes('/ev_'))) expect(removal.has(m.topic)).toBe(true);
    const tankRemoval = new Set(discoveryRemovalTopics('homeassistant', 'loc-1', 'tank'));
    for (const m of messages.filter((x) => x.topic.includes('/tank_'))) expect(tankRemoval.has(m.topic)).toBe(true);
  });

  it('refuses a discovery prefix equal to the base topic', () => {
    expect(() => discoveryMessages({ ...input, prefix: 'wattshift' })).toThrow(/prefix/);
  });
});

describe('the tank as a Home Assistant water heater', () => {
  const heater = byObject.get('tank_water_heater');

  it('maps the modes both ways and uses the comfort floor as target temperature', () => {
    expect(heater).toBeDefined();
    const p = heater!.payload;
    expect(p).toMatchObject({
      modes: ['off', 'eco', 'performance'],
      mode_state_topic: 'wattshift/tank/mode',
      mode_command_topic: 'wattshift/tank/set/mode',
      current_temperature_topic: 'wattshift/tank/temperature',
      temperature_state_topic: 'wattshift/tank/floor',
      temperature_command_topic: 'wattshift/tank/set/floor',
      temperature_unit: 'C',
    });
    // Each HA mode the entity offers becomes a command the listener accepts, and each wattshift mode reads back as an offered HA mode.
    const toWattshift = { eco: 'auto', performance: 'boost', off: 'off' } as const;
    for (const [ha, ours] of Object.entries(toWattshift)) {
      expect(p['mode_command_template']).toContain(`'${ha}': '${ours}'`);
      expect(p['mode_state_template']).toContain(`'${ours}': '${ha}'`);
      expect(parseCommandTopic('wattshift', p['mode_command_topic'] as string)).toEqual({ kind: 'setField', deviceId: 'tank', field: 'mode' });
    }
    expect(checkDiscovery(heater!.topic, { ...p, modes: ['boost'] })).toEqual([expect.stringContaining('modes must be a subset')]);
  });

  it('only tanks get one', () => {
    expect(messages.filter((m) => m.topic.includes('/water_heater/')).map((m) => m.topic.split('/')[3])).toEqual(['tank_water_heater']);
  });
});
