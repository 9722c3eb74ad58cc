/**
 * `kind: zone`: a heated room or zone. Either a relay in front of a heater that keeps its own
 * thermostat (unpowered relay = heating allowed, as for a tank), or a thermostat whose setpoint
 * wattshift moves over MQTT. Re-exported from `./schema.js`.
 *
 * The thermostat follows zigbee2mqtt's convention for climate devices: the setpoint is written as
 * `{"occupied_heating_setpoint": VALUE}` to `zigbee2mqtt/FRIENDLY_NAME/set` and read back from the
 * device's state topic `zigbee2mqtt/FRIENDLY_NAME` (https://www.zigbee2mqtt.io/devices/Zen-01-W.html,
 * "Exposes: Climate"); radiator valves (TRVs) name it `current_heating_setpoint`. A Home Assistant
 * climate entity reached through an automation or MQTT bridge fits the same topic pair.
 *
 * Heat capacity classes are EN ISO 13790's (table 12: very light 80, light 110, medium 165, heavy
 * 260, very heavy 370 kJ/(m²·K) of floor area); the room model turns them into kWh/K.
 */
import { z } from 'zod';
import { cronScheduleSchema } from './time-fields.js';
import type { SourceConfig, ZoneConfig } from './schema-devices.js';

const tempC = (what: string) => z.number().min(-10).max(40).describe(what);

/** A comfort band: the plan keeps the room between `minC` and `maxC`. */
export const zoneBandSchema = z.strictObject({
  minC: tempC('Lowest room temperature of the band, °C: the plan never lets the room fall below it (outside a cap).'),
  maxC: tempC('Highest room temperature of the band, °C: the plan may pre-heat up to it in cheap hours.'),
});
export type ZoneBandConfig = z.infer<typeof zoneBandSchema>;

/** "From 06:00 on weekdays, 20..22.5 °C": a band that starts at each occurrence and holds until the next band starts. */
export const zoneScheduleEntrySchema = cronScheduleSchema.extend(zoneBandSchema.shape);
export type ZoneScheduleEntry = z.infer<typeof zoneScheduleEntrySchema>;

export const zonePresetNames = ['comfort', 'eco', 'away', 'boost'] as const;
export type ZonePresetName = (typeof zonePresetNames)[number];

const preset = (minC: number, maxC: number, what: string) =>
  zoneBandSchema.prefault({ minC, maxC }).describe(`${what} (default ${minC}..${maxC} °C).`);

export const zonePresetsSchema = z.strictObject({
  comfort: preset(20, 22, 'The band of the `comfort` preset where the `schedule` is empty'),
  eco: preset(18, 20, 'The band of the `eco` preset, all day'),
  away: preset(12, 16, 'The band of the `away` preset, all day'),
  boost: preset(22, 24, 'The band of the `boost` preset, all day'),
});
export type ZonePresetsConfig = z.infer<typeof zonePresetsSchema>;

export const constructionClasses = ['veryLight', 'light', 'medium', 'heavy', 'veryHeavy'] as const;

export const zoneModelSchema = z.strictObject({
  powerKw: z.number().positive().max(30).describe("The heater's electric power when on, kW (all heaters of the zone together)."),
  cop: z
    .number()
    .min(1)
    .max(8)
    .default(1)
    .describe("Heat delivered per kWh of electricity: 1 for panel heaters and floor heating cables, a heat pump's COP for an air-to-air pump."),
  floorAreaM2: z.number().positive().max(1000).optional().describe('Heated floor area, m² (sizes the default model until one is learnt).'),
  construction: z
    .enum(constructionClasses)
    .default('medium')
    .describe('Heat capacity class of the building (EN ISO 13790): `veryLight`, `light`, `medium`, `heavy`, `veryHeavy`.'),
  heatCapacityKwhPerK: z
    .number()
    .positive()
    .max(100)
    .optional()
    .describe('Heat capacity of the zone, kWh/K, instead of the one from the floor area and class (a learnt model replaces it).'),
  heatLossKwPerK: z
    .number()
    .positive()
    .max(5)
    .optional()
    .describe('Heat loss to outdoors (UA), kW/K, instead of the one from the heater power (a learnt model replaces it).'),
});
export type ZoneModelConfig = z.infer<typeof zoneModelSchema>;

export const zoneThermostatSchema = z.strictObject({
  type: z.literal('mqtt').describe('A thermostat on MQTT (zigbee2mqtt, a Home Assistant climate entity through an automation).'),
  commandTopic: z
    .string()
    .regex(/^[^#+]+$/, 'no MQTT wildcards')
    .describe('Topic the setpoint is written to, e.g. `zigbee2mqtt/living-room-thermostat/set`.'),
  commandTemplate: z
    .string()
    .includes('{{value}}', { message: 'the template must contain {{value}}' })
    .default('{"occupied_heating_setpoint": {{value}}}')
    .describe('Payload written to `commandTopic`; `{{value}}` is the setpoint in °C (a TRV: `{"current_heating_setpoint": {{value}}}`).'),
  stateTopic: z
    .string()
    .regex(/^[^#+]+$/, 'no MQTT wildcards')
    .describe("Topic with the thermostat's state (JSON or a bare number), e.g. `zigbee2mqtt/living-room-thermostat`."),
  setpointPath: z
    .string()
    .default('occupied_heating_setpoint')
    .describe('Dot path to the setpoint in the state payload (empty: the payload itself).'),
  minC: z.number().min(0).max(40).default(5).describe('Lowest setpoint the thermostat accepts, °C.'),
  maxC: z.number().min(0).max(40).default(30).describe('Highest setpoint the thermostat accepts, °C.'),
  stepC: z.number().positive().max(5).default(0.5).describe('Setpoint resolution, °C: setpoints are rounded to it.'),
});
export type ZoneThermostatConfig = z.infer<typeof zoneThermostatSchema>;

/** The zone schema from the sources a relay, meter and room thermometer can use (built here: no import cycle). */
export function zoneSchemaOf<S extends z.ZodType, M extends z.ZodType, Th extends z.ZodType, C extends Record<string, z.ZodType>>(parts: {
  switchSource: S;
  meter: M;
  thermometer: Th;
  common: C;
}) {
  const { switchSource, meter, thermometer, common } = parts;
  return z.strictObject({
    ...common,
    kind: z.literal('zone').describe('A heated room or zone: a heater behind a relay, or a thermostat wattshift moves.'),
    switch: switchSource
      .optional()
      .describe('The relay in front of the heater, which keeps its own thermostat; unpowered = heating allowed. Either this or `thermostat`.'),
    thermostat: zoneThermostatSchema.optional().describe('The thermostat whose setpoint wattshift moves. Either this or `switch`.'),
    thermometer: thermometer.optional().describe("Where the room temperature is measured (without it the plan assumes the band's lower edge)."),
    meter: meter.optional(),
    model: zoneModelSchema.describe("Planning parameters: the heater and the building's heat capacity."),
    schedule: z
      .array(zoneScheduleEntrySchema)
      .max(32)
      .default([])
      .describe(
        'Comfort bands by time of day for the `comfort` preset: each starts at its cron occurrences and holds until the next starts, e.g. `{ cron: "0 6 * * 1-5", minC: 20, maxC: 22.5 }` and `{ cron: "0 22 * * *", minC: 17, maxC: 21 }`. Empty: `presets.comfort` all day.',
      ),
    presets: zonePresetsSchema.prefault({}).describe('The bands of the presets chosen by command (`comfort` follows the `schedule`).'),
    frostC: z
      .number()
      .min(0)
      .max(15)
      .default(7)
      .describe(
        "Frost floor, °C: the room is never held below it, whatever the price or a cap (a chosen default, as heaters' frost settings of 5..7 °C).",
      ),
  });
}

type Issue = (path: (string | number)[], message: string) => void;

/** The zone's cross-field rules. */
export function checkZone(
  d: ZoneConfig,
  at: (string | number)[],
  issue: Issue,
  checkSource: (s: SourceConfig | undefined, path: (string | number)[]) => void,
): void {
  checkSource(d.switch, [...at, 'switch']);
  checkSource(d.thermometer, [...at, 'thermometer']);
  if (!d.switch && !d.thermostat) issue([...at, 'switch'], 'a zone needs a switch (a relay) or a thermostat');
  if (d.switch && d.thermostat) issue([...at, 'thermostat'], 'a zone has either a switch or a thermostat, not both');
  if (d.meter?.type === 'goe' || d.meter?.type === 'ocpp') issue([...at, 'meter', 'type'], `a ${d.meter.type} source meters a charger, not a heater`);
  const band = (b: ZoneBandConfig, path: (string | number)[]): void => {
    if (b.minC >= b.maxC) issue([...path, 'minC'], `minC (${b.minC}) must be below maxC (${b.maxC})`);
    if (d.frostC >= b.minC) issue([...path, 'minC'], `minC (${b.minC}) must be above frostC (${d.frostC})`);
  };
  d.schedule.forEach((b, j) => band(b, [...at, 'schedule', j]));
  for (const name of zonePresetNames) band(d.presets[name], [...at, 'presets', name]);
  const t = d.thermostat;
  if (t) {
    if (t.minC >= t.maxC) issue([...at, 'thermostat', 'minC'], `minC (${t.minC}) must be below maxC (${t.maxC})`);
    if (t.minC > d.frostC) issue([...at, 'thermostat', 'minC'], `the thermostat's minC (${t.minC}) is above frostC (${d.frostC})`);
    const bands = [...d.schedule, ...zonePresetNames.map((n) => d.presets[n])];
    const top = Math.max(...bands.map((b) => b.maxC));
    if (top > t.maxC) issue([...at, 'thermostat', 'maxC'], `a band reaches ${top} °C, above the thermostat's maxC (${t.maxC})`);
  }
}
