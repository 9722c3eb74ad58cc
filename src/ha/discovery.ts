import { chargePointStatuses } from '../devices/ocpp/messages.js';
import { haSafeId, haTopics } from './topics.js';
import type { HaTopics } from './topics.js';
import type { CommandRangesView, DeviceKind } from '../view/model.js';

/**
 * Home Assistant MQTT discovery: one config message per entity at
 * `<prefix>/<component>/<node_id>/<object_id>/config` (retained), one HA device per wattshift
 * device plus one for the location, linked with `via_device`. Sensors follow HA's device-class
 * rules so the energy counters can be used in the Energy dashboard (`energy`, kWh,
 * `total_increasing`) and the price sensor as a price entity (`<currency>/kWh`).
 */

export const defaultDiscoveryPrefix = 'homeassistant';

export type HaComponent = 'sensor' | 'binary_sensor' | 'select' | 'button' | 'number' | 'datetime' | 'water_heater' | 'climate';

export interface DiscoveryInput {
  baseTopic: string;
  /** Discovery prefix, `homeassistant` by default; must differ from the base topic. */
  prefix: string;
  /** With `fuse` (site.fuse configured), the location also gets the fuse's entities. */
  location: { id: string; name: string; fuse?: unknown };
  /** Each device, with the ranges its commands are held to (the controls offer no more). */
  devices: readonly { id: string; name: string; kind: DeviceKind; ranges?: CommandRangesView }[];
  /** ISO 4217 code of prices and costs (`EUR`, `NOK`). */
  currency: string;
  swVersion: string;
  supportUrl?: string;
  /** The status page: Home Assistant's "Visit" link on each device. */
  configurationUrl?: string;
}

export interface DiscoveryMessage {
  topic: string;
  payload: Record<string, unknown>;
}

type Config = Record<string, unknown>;

interface Ctx {
  t: HaTopics;
  id: string;
  currency: string;
  ranges?: CommandRangesView;
}

interface EntityDef {
  key: string;
  component: HaComponent;
  build: (c: Ctx) => Config;
}

const sensor = (key: string, name: string, extra: Config, field?: string): EntityDef => ({
  key,
  component: 'sensor',
  build: ({ t, id }) => ({ name, state_topic: t.deviceField(id, (field ?? key) as never), ...extra }),
});

const power = sensor('power', 'Power', { device_class: 'power', unit_of_measurement: 'W', state_class: 'measurement' });
const energy = sensor('energy', 'Energy', {
  device_class: 'energy',
  unit_of_measurement: 'kWh',
  state_class: 'total_increasing',
  suggested_display_precision: 2,
});
const mode: EntityDef = {
  key: 'mode',
  component: 'select',
  build: ({ t, id }) => ({
    name: 'Mode',
    icon: 'mdi:tune',
    options: ['auto', 'off', 'boost'],
    state_topic: t.deviceField(id, 'mode'),
    command_topic: t.setField(id, 'mode'),
  }),
};
const boost: EntityDef = {
  key: 'boost',
  component: 'button',
  build: ({ t, id }) => ({ name: 'Boost', icon: 'mdi:rocket-launch', command_topic: t.set(id), payload_press: '{"mode":"boost"}' }),
};
const plannedOn: EntityDef = {
  key: 'planned_on',
  component: 'binary_sensor',
  build: ({ t, id }) => ({
    name: 'Planned on',
    icon: 'mdi:calendar-clock',
    state_topic: t.deviceField(id, 'planned_on'),
    payload_on: 'true',
    payload_off: 'false',
  }),
};
const nextStart = sensor('next_start', 'Next start', { device_class: 'timestamp' });
/** On while the heater is blocked by a relay with no timer of its own: an outage would keep it blocked. */
const blockWithoutLease: EntityDef = {
  key: 'block_without_lease',
  component: 'binary_sensor',
  build: ({ t, id }) => ({
    name: 'Blocked without lease',
    device_class: 'problem',
    entity_category: 'diagnostic',
    state_topic: t.deviceField(id, 'block_without_lease'),
    payload_on: 'true',
    payload_off: 'false',
  }),
};

const numberDef = (
  key: string,
  name: string,
  extra: Config,
  range?: (r: CommandRangesView) => { min: number; max: number } | undefined,
): EntityDef => ({
  key,
  component: 'number',
  build: ({ t, id, ranges }) => ({
    name,
    mode: 'box',
    state_topic: t.deviceField(id, key as never),
    command_topic: t.setField(id, key as never),
    ...extra,
    ...(ranges && range?.(ranges)),
  }),
});

/** The comfort floor's control: the range wattshift accepts for this tank. */
const floorRange = (r: CommandRangesView): { min: number; max: number } | undefined => r.floorC;
const floorNumber = numberDef(
  'floor',
  'Comfort floor',
  { device_class: 'temperature', unit_of_measurement: '°C', min: 5, max: 85, step: 0.5 },
  floorRange,
);

/**
 * The tank as Home Assistant's MQTT water heater, whose modes are a fixed list: auto shows as
 * `eco`, boost as `performance`; the target temperature is the comfort floor.
 */
const waterHeater: EntityDef = {
  key: 'water_heater',
  component: 'water_heater',
  build: ({ t, id, ranges }) => ({
    name: 'Water heater',
    modes: ['off', 'eco', 'performance'],
    mode_state_topic: t.deviceField(id, 'mode'),
    mode_state_template: "{{ {'auto': 'eco', 'boost': 'performance', 'off': 'off'}.get(value, 'eco') }}",
    mode_command_topic: t.setField(id, 'mode'),
    mode_command_template: "{{ {'eco': 'auto', 'performance': 'boost', 'off': 'off'}.get(value, 'auto') }}",
    current_temperature_topic: t.deviceField(id, 'temperature'),
    temperature_state_topic: t.deviceField(id, 'floor'),
    temperature_command_topic: t.setField(id, 'floor'),
    temperature_unit: 'C',
    precision: 0.5,
    min_temp: ranges?.floorC?.min ?? 5,
    max_temp: ranges?.floorC?.max ?? 85,
  }),
};

/**
 * A heated zone as Home Assistant's MQTT climate entity (home-assistant.io/integrations/climate.mqtt):
 * always heating (`heat`), its presets chosen on the zone's set topic, the room's temperature, the
 * temperature wattshift aims at now (read only: the band is the config's) and whether it heats now.
 */
const zoneClimate: EntityDef = {
  key: 'climate',
  component: 'climate',
  build: ({ t, id }) => ({
    name: 'Heating',
    modes: ['heat'],
    mode_state_topic: t.deviceField(id, 'planned_on'),
    mode_state_template: 'heat',
    preset_modes: ['comfort', 'eco', 'away', 'boost'],
    preset_mode_state_topic: t.deviceField(id, 'preset'),
    preset_mode_command_topic: t.set(id),
    preset_mode_command_template: '{"preset": "{{ value }}"}',
    current_temperature_topic: t.deviceField(id, 'temperature'),
    temperature_state_topic: t.deviceField(id, 'target_temp'),
    action_topic: t.deviceField(id, 'action'),
    temperature_unit: 'C',
    precision: 0.1,
    min_temp: 5,
    max_temp: 30,
  }),
};

const amps = { device_class: 'current', unit_of_measurement: 'A', state_class: 'measurement' };
/** Phase currents of a meter that gives them (unknown on one that does not). */
const lineCurrent = (n: 1 | 2 | 3): EntityDef => sensor(`current_l${n}`, `Current L${n}`, { ...amps, suggested_display_precision: 1 });

/** Entities of each kind of device. */
const deviceEntities: Record<DeviceKind, readonly EntityDef[]> = {
  // A PV inverter's production: the energy sensor (total_increasing kWh) is a solar source for the Energy dashboard.
  solar: [
    sensor('power', 'Production power', { device_class: 'power', unit_of_measurement: 'W', state_class: 'measurement' }),
    sensor('energy', 'Energy produced', {
      device_class: 'energy',
      unit_of_measurement: 'kWh',
      state_class: 'total_increasing',
      suggested_display_precision: 2,
    }),
  ],
  hotWaterTank: [
    sensor('temperature', 'Temperature', { device_class: 'temperature', unit_of_measurement: '°C', state_class: 'measurement' }),
    power,
    energy,
    mode,
    boost,
    plannedOn,
    nextStart,
    // The next "hot water ready" deadline of the comfort windows (unknown without any).
    sensor('next_comfort', 'Hot water ready by', { device_class: 'timestamp', icon: 'mdi:water-boiler-alert' }),
    floorNumber,
    waterHeater,
    blockWithoutLease,
  ],
  evCharger: [
    power,
    energy,
    mode,
    boost,
    plannedOn,
    nextStart,
    {
      key: 'plugged',
      component: 'binary_sensor',
      build: ({ t, id }) => ({
        name: 'Plugged in',
        device_class: 'plug',
        state_topic: t.deviceField(id, 'plugged'),
        payload_on: 'true',
        payload_off: 'false',
      }),
    },
    {
      key: 'charging',
      component: 'binary_sensor',
      build: ({ t, id }) => ({
        name: 'Charging',
        device_class: 'battery_charging',
        state_topic: t.deviceField(id, 'charging'),
        payload_on: 'true',
        payload_off: 'false',
      }),
    },
    sensor('soc', 'State of charge', { device_class: 'battery', unit_of_measurement: '%', state_class: 'measurement' }),
    {
      key: 'departure',
      component: 'datetime',
      build: ({ t, id }) => ({
        name: 'Departure',
        icon: 'mdi:car-clock',
        state_topic: t.deviceField(id, 'departure'),
        command_topic: t.setField(id, 'departure'),
      }),
    },
    numberDef('target_kwh', 'Target energy', { device_class: 'energy', unit_of_measurement: 'kWh', min: 0, max: 200, step: 0.5 }, (r) =>
      r.targetKwhMax === undefined ? undefined : { min: 0, max: r.targetKwhMax },
    ),
    numberDef('target_soc', 'Target state of charge', { device_class: 'battery', unit_of_measurement: '%', min: 0, max: 100, step: 1 }),
    sensor('current_limit', 'Charging current limit', { ...amps, icon: 'mdi:current-ac' }),
    // Starts again at 0 with each session: total_increasing reads the drop as a new cycle.
    sensor('session_energy', 'Session energy', {
      device_class: 'energy',
      unit_of_measurement: 'kWh',
      state_class: 'total_increasing',
      suggested_display_precision: 2,
    }),
    // OCPP chargers only; unknown on others.
    sensor('connector_status', 'Connector status', { device_class: 'enum', options: [...chargePointStatuses], icon: 'mdi:ev-plug-type2' }),
    // The configured vehicle recognised at the charger; unknown without one.
    sensor('vehicle', 'Car', { icon: 'mdi:car-electric' }),
    // 1 or 3: changes where the charger switches phases.
    sensor('phases', 'Charging phases', { icon: 'mdi:sine-wave', state_class: 'measurement' }),
    {
      key: 'fuse_limited',
      component: 'binary_sensor',
      build: ({ t, id }) => ({
        name: 'Held by the main fuse',
        icon: 'mdi:fuse',
        state_topic: t.deviceField(id, 'fuse_limited'),
        payload_on: 'true',
        payload_off: 'false',
      }),
    },
  ],
  meter: [power, energy, lineCurrent(1), lineCurrent(2), lineCurrent(3)],
  // A heated zone's room temperature and heater, and the zone as a climate entity.
  zone: [
    zoneClimate,
    sensor('temperature', 'Room temperature', { device_class: 'temperature', unit_of_measurement: '°C', state_class: 'measurement' }),
    power,
    energy,
    plannedOn,
    nextStart,
  ],
  // The tank's entities (the pump heats it), and its SG Ready state.
  heatPump: [
    sensor('temperature', 'Temperature', { device_class: 'temperature', unit_of_measurement: '°C', state_class: 'measurement' }),
    power,
    energy,
    mode,
    boost,
    plannedOn,
    nextStart,
    sensor('next_comfort', 'Hot water ready by', { device_class: 'timestamp', icon: 'mdi:water-boiler-alert' }),
    floorNumber,
    waterHeater,
    blockWithoutLease,
    sensor('sg_state', 'SG Ready state', { device_class: 'enum', options: ['block', 'normal', 'boost', 'forced'], icon: 'mdi:heat-pump' }),
  ],
};

/** Entities of the location's HA device; state comes from JSON topics through templates. */
const locationEntities: readonly EntityDef[] = [
  {
    key: 'power',
    component: 'sensor',
    build: ({ t }) => ({
      name: 'Power',
      state_topic: t.location,
      value_template: '{{ value_json.power }}',
      device_class: 'power',
      unit_of_measurement: 'W',
      state_class: 'measurement',
    }),
  },
  {
    key: 'limit',
    component: 'sensor',
    build: ({ t }) => ({
      name: 'Power limit',
      state_topic: t.location,
      value_template: '{{ value_json.limit_kw }}',
      device_class: 'power',
      unit_of_measurement: 'kW',
      state_class: 'measurement',
      entity_category: 'diagnostic',
    }),
  },
  {
    key: 'lpc_cap',
    component: 'sensor',
    build: ({ t }) => ({
      name: 'Power cap (LPC)',
      state_topic: t.location,
      value_template: '{{ value_json.lpc_cap_kw }}',
      device_class: 'power',
      unit_of_measurement: 'kW',
      state_class: 'measurement',
    }),
  },
  {
    key: 'price',
    component: 'sensor',
    build: ({ t, currency }) => ({
      name: 'Electricity price',
      icon: 'mdi:cash',
      state_topic: t.priceTotal,
      unit_of_measurement: `${currency}/kWh`,
      state_class: 'measurement',
      suggested_display_precision: 3,
    }),
  },
  {
    key: 'price_delta',
    component: 'sensor',
    build: ({ t, currency }) => ({
      name: 'Incentive delta',
      icon: 'mdi:cash-minus',
      state_topic: t.priceDelta,
      unit_of_measurement: `${currency}/kWh`,
      state_class: 'measurement',
      suggested_display_precision: 3,
    }),
  },
  {
    key: 'plan_cost',
    component: 'sensor',
    build: ({ t, currency }) => ({
      name: 'Planned cost (48 h)',
      state_topic: t.plan,
      value_template: '{{ value_json.expected_cost }}',
      device_class: 'monetary',
      unit_of_measurement: currency,
      json_attributes_topic: t.plan,
      json_attributes_template: '{{ {"shortfalls": value_json.shortfalls, "incentive": value_json.incentive} | tojson }}',
    }),
  },
  {
    key: 'plan_savings',
    component: 'sensor',
    build: ({ t, currency }) => ({
      name: 'Planned savings (48 h)',
      state_topic: t.plan,
      value_template: '{{ value_json.savings }}',
      device_class: 'monetary',
      unit_of_measurement: currency,
    }),
  },
  {
    key: 'bill_month',
    component: 'sensor',
    build: ({ t, currency }) => ({
      name: 'Bill this month',
      icon: 'mdi:receipt-text',
      state_topic: t.bill,
      value_template: '{{ value_json.total }}',
      // A total that starts again each month: Home Assistant's Energy dashboard takes it as the grid's cost.
      device_class: 'monetary',
      unit_of_measurement: currency,
      state_class: 'total',
      last_reset_value_template: '{{ value_json.month_start }}',
      json_attributes_topic: t.bill,
    }),
  },
  {
    key: 'bill_savings',
    component: 'sensor',
    build: ({ t, currency }) => ({
      name: 'Saved this month',
      icon: 'mdi:piggy-bank',
      state_topic: t.bill,
      value_template: '{{ value_json.savings }}',
      device_class: 'monetary',
      unit_of_measurement: currency,
    }),
  },
  {
    key: 'capacity_measure',
    component: 'sensor',
    build: ({ t }) => ({
      name: 'Capacity measure',
      state_topic: t.bill,
      value_template: '{{ value_json.capacity.measure_kw if value_json.capacity else None }}',
      device_class: 'power',
      unit_of_measurement: 'kW',
      state_class: 'measurement',
      suggested_display_precision: 2,
    }),
  },
  {
    key: 'capacity_margin',
    component: 'sensor',
    build: ({ t }) => ({
      name: 'Capacity step margin',
      state_topic: t.bill,
      value_template: '{{ value_json.capacity.margin_kw if value_json.capacity else None }}',
      device_class: 'power',
      unit_of_measurement: 'kW',
      state_class: 'measurement',
      suggested_display_precision: 2,
    }),
  },
  {
    key: 'problem',
    component: 'binary_sensor',
    build: ({ t }) => ({
      name: 'Problem',
      device_class: 'problem',
      entity_category: 'diagnostic',
      state_topic: t.health,
      value_template: "{{ 'OFF' if value_json.ok else 'ON' }}",
    }),
  },
  {
    key: 'outbox_pending',
    component: 'sensor',
    build: ({ t }) => ({
      name: 'Reports pending',
      icon: 'mdi:tray-full',
      entity_category: 'diagnostic',
      state_topic: t.health,
      value_template: '{{ value_json.outbox.pending }}',
      state_class: 'measurement',
    }),
  },
];

/** Entities of the main fuse (site.fuse), on the location's HA device. */
const fuseEntities: readonly EntityDef[] = [
  ...([1, 2, 3] as const).map((n): EntityDef => ({
    key: `fuse_headroom_l${n}`,
    component: 'sensor',
    build: ({ t }) => ({
      name: `Fuse headroom L${n}`,
      icon: 'mdi:fuse',
      state_topic: t.location,
      value_template: `{{ value_json.fuse.headroom_a[${n - 1}] if value_json.fuse and value_json.fuse.headroom_a | length > ${n - 1} else None }}`,
      ...amps,
      suggested_display_precision: 1,
    }),
  })),
  {
    key: 'fuse_limiting',
    component: 'binary_sensor',
    build: ({ t }) => ({
      name: 'Main fuse limiting',
      icon: 'mdi:fuse-alert',
      state_topic: t.location,
      value_template: "{{ 'ON' if value_json.fuse and value_json.fuse.limiting else 'OFF' }}",
      json_attributes_topic: t.location,
      json_attributes_template: '{{ {"reason": value_json.fuse.reason if value_json.fuse else None} | tojson }}',
    }),
  },
];

function nodeId(locationId: string): string {
  return `wattshift_${haSafeId(locationId)}`;
}

function configTopic(prefix: string, component: HaComponent, locationId: string, objectId: string): string {
  return `${prefix}/${component}/${nodeId(locationId)}/${objectId}/config`;
}

/** All discovery config messages for the location and its devices. */
export function discoveryMessages(input: DiscoveryInput): DiscoveryMessage[] {
  if (input.prefix === input.baseTopic || input.prefix.length === 0) {
    throw new TypeError('the discovery prefix must be non-empty and differ from the base topic');
  }
  const t = haTopics(input.baseTopic);
  const node = nodeId(input.location.id);
  const origin = {
    name: 'wattshift',
    sw_version: input.swVersion,
    ...(input.supportUrl ? { support_url: input.supportUrl } : {}),
  };
  const link = input.configurationUrl ? { configuration_url: input.configurationUrl } : {};
  const locationDevice = {
    identifiers: [node],
    name: input.location.name,
    manufacturer: 'wattshift',
    model: 'Home energy controller',
    sw_version: input.swVersion,
    ...link,
  };
  const out: DiscoveryMessage[] = [];
  for (const def of input.location.fuse === undefined ? locationEntities : [...locationEntities, ...fuseEntities]) {
    out.push({
      topic: configTopic(input.prefix, def.component, input.location.id, `location_${def.key}`),
      payload: {
        ...def.build({ t, id: '', currency: input.currency }),
        unique_id: `${node}_location_${def.key}`,
        availability: [{ topic: t.availability }],
        device: locationDevice,
        origin,
      },
    });
  }
  for (const d of input.devices) {
    const device = {
      identifiers: [`${node}_${d.id}`],
      name: d.name,
      manufacturer: 'wattshift',
      model: kindModel[d.kind],
      via_device: node,
      ...link,
    };
    for (const def of deviceEntities[d.kind]) {
      out.push({
        topic: configTopic(input.prefix, def.component, input.location.id, `${d.id}_${def.key}`),
        payload: {
          ...def.build({ t, id: d.id, currency: input.currency, ...(d.ranges ? { ranges: d.ranges } : {}) }),
          unique_id: `${node}_${d.id}_${def.key}`,
          availability: [{ topic: t.availability }, { topic: t.deviceAvailability(d.id) }],
          availability_mode: 'all',
          device,
          origin,
        },
      });
    }
  }
  return out;
}

const kindModel: Record<DeviceKind, string> = {
  hotWaterTank: 'Hot water tank',
  evCharger: 'EV charger',
  meter: 'Energy meter',
  heatPump: 'SG Ready heat pump',
  zone: 'Heated zone',
  solar: 'PV inverter',
};

/**
 * Config topics a device could have had under any kind; publishing an empty retained payload
 * to each removes the device's entities from Home Assistant.
 */
export function discoveryRemovalTopics(prefix: string, locationId: string, deviceId: string): string[] {
  const seen = new Set<string>();
  for (const defs of Object.values(deviceEntities)) {
    for (const def of defs) seen.add(configTopic(prefix, def.component, locationId, `${deviceId}_${def.key}`));
  }
  return [...seen];
}

/** Home Assistant's birth/last-will topic. */
export function haStatusTopic(prefix: string): string {
  return `${prefix}/status`;
}
