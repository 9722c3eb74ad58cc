/**
 * The `vehicles` section: cars as resources of their own (the API's `/users/{userId}/vehicles`),
 * each with its battery, targets, departures, SoC topic and the ways a charger recognises it. A
 * charger names the cars it serves (`evCharger.vehicles`); without the section each charger's own
 * `model` is the car, as before. Re-exported from `./schema.js`; import from there.
 */
import { z } from 'zod';
import { cronScheduleSchema } from './time-fields.js';
import { socTopicSchema, timeOfDay } from './schema-devices.js';

const idPattern = /^[a-z0-9_-]+$/;

/** "07:30 on weekdays, 80 %": one departure schedule, with its own target where it differs. */
export const vehicleDepartureSchema = cronScheduleSchema.extend({
  targetSocPct: z.number().min(10).max(100).optional().describe("Target state of charge at these departures, % (default: the car's `targetSocPct`)."),
  targetEnergyKwh: z
    .number()
    .positive()
    .max(250)
    .optional()
    .describe("Energy to add for these departures when the SoC is unknown, kWh (default: the car's `targetEnergyKwh`)."),
});
export type VehicleDepartureConfig = z.infer<typeof vehicleDepartureSchema>;

export const vehicleIdentifySchema = z
  .strictObject({
    idTags: z
      .array(z.string().min(1).max(20))
      .max(16)
      .default([])
      .describe("OCPP id tags (RFID cards, app tokens) of this car: the idTag of the charge point's Authorize or StartTransaction names the car."),
    goeCards: z
      .array(z.number().int().min(0).max(9))
      .max(10)
      .default([])
      .describe("go-e RFID card indexes 0..9 of this car (the charger's `trx` is the card index + 1)."),
  })
  .prefault({})
  .describe('How a charger recognises the car.');

export const vehicleSchema = z.strictObject({
  id: z.string().regex(idPattern, 'expected [a-z0-9_-]+').describe('Vehicle id, unique among vehicles and devices, `[a-z0-9_-]+`.'),
  name: z.string().min(1).optional().describe('Display name.'),
  resourceId: z
    .string()
    .min(1)
    .nullable()
    .default(null)
    .describe('Energy Coordination resource id of the car, a `Vehicle` of the user (set by `wattshift register`).'),
  capacityKwh: z.number().positive().max(250).describe('Usable battery capacity, kWh.'),
  targetSocPct: z.number().min(10).max(100).default(80).describe('Target state of charge at departure, % (when the SoC is known).'),
  targetEnergyKwh: z
    .number()
    .positive()
    .max(250)
    .optional()
    .describe('Energy to add per session when the SoC is unknown, kWh (when absent: 40 % of capacityKwh).'),
  departure: timeOfDay.default('07:00').describe('Usual departure time, local "HH:MM" (every day; see `departureSchedule` and `departures`).'),
  departureSchedule: cronScheduleSchema
    .optional()
    .describe('Departures as a schedule instead, e.g. `{ cron: "30 7 * * 1-5" }` for 07:30 on weekdays.'),
  departures: z
    .array(vehicleDepartureSchema)
    .max(14)
    .default([])
    .describe(
      'Departures per weekday with their own targets, e.g. `[{ cron: "30 7 * * 1-5", targetSocPct: 80 }, { cron: "0 10 * * 6,0", targetSocPct: 100 }]`; the next occurrence of any is the deadline. Takes precedence over `departureSchedule` and `departure`.',
    ),
  efficiency: z.number().min(0.5).max(1).default(0.9).describe('Grid-to-battery efficiency.'),
  soc: socTopicSchema
    .optional()
    .describe("Where this car's state of charge comes from; it counts only while the car is at a charger, and only while fresh (`staleAfterS`)."),
  identify: vehicleIdentifySchema,
});
export type VehicleConfig = z.infer<typeof vehicleSchema>;
