/**
 * `kind: heatPump`: a heat pump that heats the home's hot water tank, steered through its SG Ready
 * input (two potential-free contacts, four operating states). Re-exported from `./schema.js`.
 *
 * The SG Ready label (Bundesverband Wärmepumpe, "SG Ready" Regularien, section 2.1): state 1
 * ("1:0") is the utility lock with at most 2 hours of "hard" lock, state 2 ("0:0") normal
 * operation, state 3 ("0:1") a switch-on recommendation (raised setpoints), state 4 ("1:1") a
 * definitive start command. How often a day a pump may be locked is not in the label: the German
 * tariff order for heat pump supply (BTOElt § 7 (3)) allows at most 6 hours in 24, none longer than
 * 2 hours, hence the defaults 3 × 120 minutes; both are settings, kept conservative.
 */
import { z } from 'zod';
import type { HeatPumpConfig, SourceConfig, tankModelSchema } from './schema-devices.js';

/** The tank model less the element, plus the pump (built from the tank model: no import cycle). */
const heatPumpModelOf = (tankModel: typeof tankModelSchema) =>
  tankModel.omit({ elementKw: true, relayOnly: true }).extend({
    electricKw: z.number().positive().max(20).describe('Electric power the heat pump draws while it heats water, kW (compressor and fan).'),
    cop: z
      .number()
      .min(1)
      .max(8)
      .default(2.8)
      .describe(
        "Coefficient of performance while heating water: heat delivered per kWh of electricity (the planner's heat = electric energy × cop).",
      ),
    normalC: z
      .number()
      .min(30)
      .max(95)
      .default(50)
      .describe('The pump\'s own hot water setpoint in normal operation ("0:0"), °C; it keeps the tank there by itself.'),
    floorC: z
      .number()
      .min(20)
      .max(80)
      .default(45)
      .describe('Comfort floor: the plan never lets the tank fall below this, and the pump is never locked below it, °C.'),
    maxC: z.number().min(30).max(95).default(65).describe('Highest temperature, the pump\'s on a start command ("1:1"), °C.'),
    boostC: z
      .number()
      .min(30)
      .max(95)
      .default(60)
      .describe('The setpoint the pump raises to on a switch-on recommendation ("0:1"), °C, as set on its controller.'),
  });

export const sgReadyBlockSchema = z.strictObject({
  maxMinutes: z
    .number()
    .int()
    .min(1)
    .max(120)
    .default(120)
    .describe('Longest lock ("1:0") at a time, minutes; the SG Ready label allows at most 2 hours, and the pump ends a longer lock by itself.'),
  perDay: z.number().int().min(0).max(12).default(3).describe('Most locks per local day (0: wattshift never locks the pump).'),
  maxMinutesPerDay: z
    .number()
    .int()
    .min(0)
    .max(1440)
    .default(360)
    .describe('Most lock minutes per local day (BTOElt § 7 (3): at most 6 hours in 24).'),
  minGapMinutes: z
    .number()
    .int()
    .min(0)
    .max(720)
    .default(60)
    .describe(
      'Least time between the end of a lock and the next, minutes (no published figure found; kept conservative so the pump recovers between locks).',
    ),
});
export type SgReadyBlockConfig = z.infer<typeof sgReadyBlockSchema>;

/** The device schema from the sources that can drive an SG Ready contact (switched on = closed = "1"), meter and thermometer. */
export function heatPumpSchemaOf<S extends z.ZodType, M extends z.ZodType, Th extends z.ZodType, C extends Record<string, z.ZodType>>(parts: {
  contactSource: S;
  meter: M;
  thermometer: Th;
  tankModel: typeof tankModelSchema;
  common: C;
}) {
  const { contactSource, meter, thermometer, common } = parts;
  return z.strictObject({
    ...common,
    kind: z.literal('heatPump').describe('A heat pump heating the hot water tank, steered through its SG Ready input (two relay outputs).'),
    contacts: z
      .strictObject({
        relay1: contactSource.describe(
          'The relay wired to the SG Ready contact that comes first in the manufacturer\'s notation ("1:0" = lock); switched on = contact closed. Use the normally-open contact, so an unpowered relay is normal operation ("0:0").',
        ),
        relay2: contactSource.describe('The relay wired to the other SG Ready contact ("0:1" = switch-on recommendation).'),
        swapped: z.boolean().default(false).describe('The manufacturer numbers the contacts the other way round: relay2 is the lock contact.'),
      })
      .describe("The two relay outputs wired to the pump's SG Ready terminals."),
    meter: meter.optional(),
    thermometer: thermometer.optional(),
    block: sgReadyBlockSchema
      .prefault({})
      .describe('Limits of the lock ("1:0"), which wattshift only uses as a lease in expensive or power-limited hours.'),
    model: heatPumpModelOf(parts.tankModel).describe('Planning parameters: the tank the pump heats, its electric power and COP.'),
  });
}

type Issue = (path: (string | number)[], message: string) => void;

/** The heat pump's cross-field rules (the tank model's own are checked as a tank's). */
export function checkHeatPump(
  d: HeatPumpConfig,
  at: (string | number)[],
  issue: Issue,
  checkSource: (s: SourceConfig | undefined, path: (string | number)[]) => void,
): void {
  checkSource(d.contacts.relay1, [...at, 'contacts', 'relay1']);
  checkSource(d.contacts.relay2, [...at, 'contacts', 'relay2']);
  checkSource(d.thermometer, [...at, 'thermometer']);
  if (JSON.stringify(d.contacts.relay1) === JSON.stringify(d.contacts.relay2))
    issue([...at, 'contacts', 'relay2'], 'relay2 is the same output as relay1: SG Ready needs two contacts');
  if (d.meter?.type === 'goe' || d.meter?.type === 'ocpp')
    issue([...at, 'meter', 'type'], `a ${d.meter.type} source meters a charger, not a heat pump`);
  const m = d.model;
  if (m.normalC > m.boostC) issue([...at, 'model', 'boostC'], `boostC (${m.boostC}) is below normalC (${m.normalC})`);
  if (m.boostC > m.maxC) issue([...at, 'model', 'boostC'], `boostC (${m.boostC}) is above maxC (${m.maxC})`);
  // The plan heats with the recommendation ("0:1"), which reaches boostC.
  if (m.legionella.enabled && m.legionella.tempC > m.boostC)
    issue(
      [...at, 'model', 'legionella', 'tempC'],
      `legionella tempC (${m.legionella.tempC}) is above boostC (${m.boostC}): a boost never gets there`,
    );
  m.comfort.forEach((w, j) => {
    if (w.tempC > m.boostC)
      issue([...at, 'model', 'comfort', j, 'tempC'], `comfort tempC (${w.tempC}) is above boostC (${m.boostC}): a boost never gets there`);
  });
  if (d.block.maxMinutesPerDay < d.block.maxMinutes && d.block.perDay > 0) {
    issue(
      [...at, 'block', 'maxMinutesPerDay'],
      `maxMinutesPerDay (${d.block.maxMinutesPerDay}) is below one lock's maxMinutes (${d.block.maxMinutes})`,
    );
  }
}
