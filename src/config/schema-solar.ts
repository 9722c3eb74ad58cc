/**
 * `kind: solar`: a PV inverter whose production wattshift reads (no control yet). Either over
 * Modbus with SunSpec (the inverter's own map, found by walking its models: docs/solar.md) or from
 * MQTT topics. Re-exported from `./schema.js`.
 */
import { z } from 'zod';
import type { ModbusBusConfig, SolarConfig } from './schema-devices.js';

const topic = (what: string) =>
  z
    .string()
    .regex(/^[^#+]+$/, 'no MQTT wildcards')
    .describe(what);

export const sunspecSourceSchema = z.strictObject({
  type: z.literal('sunspec').describe('A SunSpec inverter over Modbus (common model 1 and inverter model 101..103, or the float 111..113).'),
  bus: z.string().min(1).describe("Name of a bus in the `modbus` section (a `tcp` bus with the inverter's host and port, or a shared RS-485 bus)."),
  unitId: z.number().int().min(0).max(247).default(1).describe('Modbus unit (slave) id of the inverter.'),
  baseAddress: z
    .union([z.literal(40000), z.literal(0), z.literal(50000)])
    .optional()
    .describe('Holding register where the SunSpec map ("SunS") starts; absent: 40000, then 0, then 50000 are tried.'),
});
export type SunSpecSourceConfig = z.infer<typeof sunspecSourceSchema>;

export const solarMqttSourceSchema = z.strictObject({
  type: z.literal('mqtt').describe('Production published on MQTT (an inverter integration, Home Assistant, a bridge).'),
  energyTopic: topic('Topic with the cumulative produced energy (JSON or a bare number), e.g. `inverter/energy`.'),
  energyPath: z.string().default('').describe('Dot path to the energy in the JSON payload (empty: the payload itself).'),
  energyUnit: z.enum(['kWh', 'Wh']).default('kWh').describe('Unit of the energy value: `kWh` or `Wh`.'),
  powerTopic: topic('Topic with the produced power in W (JSON or a bare number), e.g. `inverter/power`.').optional(),
  powerPath: z.string().default('').describe('Dot path to the power in the JSON payload (empty: the payload itself).'),
});
export type SolarMqttSourceConfig = z.infer<typeof solarMqttSourceSchema>;

export const solarSourceSchema = z
  .discriminatedUnion('type', [sunspecSourceSchema, solarMqttSourceSchema])
  .describe('Where the production is read: `sunspec` (Modbus) or `mqtt`.');

export const solarModelSchema = z.strictObject({
  peakKwp: z
    .number()
    .positive()
    .max(1000)
    .optional()
    .describe("The array's peak power, kWp: bounds the counter's steps (a faster rise is a glitch, not energy). Absent: no bound."),
});

/** The solar schema with the fields every device has (built here: no import cycle). */
export function solarSchemaOf<C extends Record<string, z.ZodType>>(common: C) {
  return z.strictObject({
    ...common,
    kind: z.literal('solar').describe('A PV inverter: its production is read, metered and shown (wattshift does not control it).'),
    source: solarSourceSchema,
    model: solarModelSchema.prefault({}).describe('The array.'),
  });
}

type Issue = (path: (string | number)[], message: string) => void;

/** The solar device's cross-field rules: its bus exists, its MQTT source has the mqtt section. */
export function checkSolar(
  d: SolarConfig,
  at: (string | number)[],
  issue: Issue,
  sections: { modbus?: Record<string, ModbusBusConfig> | undefined; mqtt?: unknown },
): void {
  const s = d.source;
  if (s.type === 'sunspec' && sections.modbus && !(s.bus in sections.modbus)) {
    const known = Object.keys(sections.modbus);
    issue([...at, 'source', 'bus'], `unknown Modbus bus "${s.bus}" (${known.length ? `known: ${known.join(', ')}` : 'the modbus section is empty'})`);
  }
  if (s.type === 'mqtt' && sections.mqtt === undefined) issue([...at, 'source', 'type'], 'an "mqtt" source needs the mqtt section');
}
