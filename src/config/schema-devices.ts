/**
 * The `modbus` and `devices` sections (the shape agreed with the Modbus and MQTT engineers).
 * Re-exported from `./schema.js`; import from there.
 */
import { z } from 'zod';
import { cronScheduleSchema } from './time-fields.js';
import { secretField } from './secret.js';
import { heatPumpSchemaOf } from './schema-heat-pump.js';
import { phaseSwitchingSchema } from './schema-phases.js';
import { zoneSchemaOf } from './schema-zone.js';
import { solarSchemaOf } from './schema-solar.js';

export { phaseSwitchingSchema, type PhaseSwitchingConfig } from './schema-phases.js';

const idPattern = /^[a-z0-9_-]+$/;
const hhmm = /^([01]\d|2[0-3]):[0-5]\d$/;

export const timeOfDay = z.string().regex(hhmm, 'expected a local time "HH:MM"');

// ---------------------------------------------------------------------------------------------
// Modbus buses

const timeoutMs = z.number().int().min(50).max(60_000).default(1000).describe('Per-request timeout, ms.');

const modbusTcpBus = z.strictObject({
  type: z.enum(['tcp', 'rtuOverTcp']).describe('`tcp` (Modbus TCP) or `rtuOverTcp` (RTU frames over a TCP serial gateway).'),
  host: z.string().min(1).describe('Host name or IP address of the Modbus TCP device or gateway.'),
  port: z.number().int().min(1).max(65535).default(502).describe('TCP port.'),
  timeoutMs,
});

const modbusRtuBus = z.strictObject({
  type: z.literal('rtu').describe('`rtu`: a local RS-485 serial port.'),
  path: z.string().min(1).describe('Serial device path, e.g. `/dev/ttyUSB0`.'),
  baudRate: z.number().int().positive().default(9600).describe('Baud rate.'),
  parity: z.enum(['none', 'even', 'odd']).default('none').describe('Parity.'),
  dataBits: z
    .union([z.literal(7), z.literal(8)])
    .default(8)
    .describe('Data bits.'),
  stopBits: z
    .union([z.literal(1), z.literal(2)])
    .default(1)
    .describe('Stop bits.'),
  timeoutMs,
});

export const modbusBusSchema = z
  .discriminatedUnion('type', [modbusTcpBus, modbusRtuBus])
  .describe('One physical Modbus bus; all units on it share one serialised connection.');
export type ModbusBusConfig = z.infer<typeof modbusBusSchema>;

// ---------------------------------------------------------------------------------------------
// Capability sources

export const modbusSourceSchema = z.strictObject({
  type: z.literal('modbus').describe('Modbus TCP/RTU through a named bus and a register profile.'),
  bus: z.string().min(1).describe('Name of a bus in the `modbus` section.'),
  unitId: z.number().int().min(0).max(247).default(1).describe('Modbus unit (slave) id.'),
  profile: z
    .string()
    .min(1)
    .describe(
      'Built-in profile name (`eastron-sdm120`, `eastron-sdm630`, `generic-relay`, `abb-terra-ac`, ...) or a path to a register map YAML file.',
    ),
  channel: z.number().int().min(0).optional().describe('Relay channel (coil) on multi-channel boards.'),
  point: z.string().min(1).optional().describe('Named point of the profile to read (default by capability: energyKwh / powerW / temperatureC).'),
});
export type ModbusSource = z.infer<typeof modbusSourceSchema>;

export const shellySourceSchema = z.strictObject({
  type: z.literal('shelly').describe('Shelly Gen2/Gen3 over MQTT RPC.'),
  topicPrefix: z.string().min(1).describe("The Shelly Gen2/Gen3 device's MQTT topic prefix, e.g. `shellyplus1pm-a8032ab12345`."),
  switchId: z.number().int().min(0).default(0).describe('Switch component id.'),
  temperatureSensorId: z.number().int().min(0).optional().describe('Temperature component id of the add-on (e.g. 100).'),
});
export type ShellySource = z.infer<typeof shellySourceSchema>;

export const tasmotaSourceSchema = z.strictObject({
  type: z.literal('tasmota').describe('Tasmota over MQTT.'),
  topic: z.string().min(1).describe('The Tasmota device topic.'),
  relay: z.number().int().min(1).default(1).describe('Relay number (POWER1 = 1).'),
  fullTopic: z.string().min(1).default('%prefix%/%topic%/').describe('Tasmota FullTopic pattern.'),
  sensor: z.string().min(1).default('DS18B20').describe('Temperature sensor name in the SENSOR message.'),
  blockedState: z
    .enum(['off', 'on'])
    .default('off')
    .describe(
      'Relay state that blocks the heater: `on` (heater on the normally-closed contact) lets `PulseTime` end a block, and hold a cap, on the device (docs/caps.md).',
    ),
  releaseRule: z
    .strictObject({
      rule: z.number().int().min(1).max(3).describe('Rule set wattshift writes (`Rule1`..`Rule3`); what it held before is replaced.'),
      timer: z
        .number()
        .int()
        .min(1)
        .max(8)
        .describe('Rule timer wattshift arms (`RuleTimer1`..`RuleTimer8`); nothing else on the device may use it.'),
    })
    .optional()
    .describe(
      'With the default wiring (`blockedState: off`): a rule on the device that switches the relay back ON when a rule timer ends, so a block, and a cap up to 9 h, ends on the device by itself (docs/caps.md). wattshift then owns that rule set and that timer. Ignored with `blockedState: on`, where `PulseTime` does this.',
    ),
});
export type TasmotaSource = z.infer<typeof tasmotaSourceSchema>;

export const goeSourceSchema = z.strictObject({
  type: z.literal('goe').describe('go-e Charger, API v2 over MQTT.'),
  topicPrefix: z.string().min(1).describe('go-e Charger API v2 MQTT topic prefix, e.g. `go-eCharger/123456`.'),
});
export type GoeSource = z.infer<typeof goeSourceSchema>;

export const amsReaderSourceSchema = z.strictObject({
  type: z
    .literal('amsreader')
    .describe('The main meter\'s HAN port through the AMS reader firmware (amsleser.no, Pow-K/U/P1), MQTT payload "JSON (classic)".'),
  topic: z
    .string()
    .regex(/^[^#+]+$/, 'no MQTT wildcards')
    .describe("The reader's MQTT publish topic, e.g. `ams/meter`."),
});
export type AmsReaderSourceConfig = z.infer<typeof amsReaderSourceSchema>;

export const ocppSourceSchema = z.strictObject({
  type: z.literal('ocpp').describe("A connector of an OCPP 1.6J charge point connected to wattshift's central system (the `ocpp` section)."),
  chargePointId: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,48}$/, 'expected 1..48 of [A-Za-z0-9_.:-]')
    .describe("The charge point's identity, the last part of the central system URL it is given (`ws://<gateway>:<port>/ocpp/<chargePointId>`)."),
  password: secretField("The charge point's basic-auth password (OCPP Security Profile 1/2, the charger's AuthorizationKey), 16 to 40 characters."),
  connectorId: z.number().int().min(1).max(16).default(1).describe('Connector of the charge point.'),
  idTag: z.string().min(1).max(20).default('wattshift').describe('Id tag wattshift starts sessions with (RemoteStartTransaction).'),
  leaseS: z
    .number()
    .int()
    .min(60)
    .max(86_400)
    .default(600)
    .describe(
      "Validity of each charging limit sent (the running session's TxProfile, and the TxDefaultProfile at stack level 1 that a session the charger starts by itself begins at), renewed every half lease: a charger that loses wattshift falls back to `safeCurrentA` by itself within this time, s.",
    ),
});
export type OcppSource = z.infer<typeof ocppSourceSchema>;

export const mqttMapSourceSchema = z.strictObject({
  type: z.literal('mqtt').describe('A user-defined MQTT map.'),
  stateTopic: z.string().min(1).optional().describe('Topic with the device state (JSON or a bare number).'),
  energyKwhPath: z.string().optional().describe('Dot path to cumulative energy in the payload (empty: the payload itself).'),
  powerWPath: z.string().optional().describe('Dot path to active power.'),
  temperatureCPath: z.string().optional().describe('Dot path to a temperature.'),
  energyScale: z.number().positive().default(1).describe('Multiplier turning the energy value into kWh.'),
  powerScale: z.number().positive().default(1).describe('Multiplier turning the power value into W.'),
  commandTopic: z.string().min(1).optional().describe('Topic to block/allow a heater.'),
  blockPayload: z.string().optional().describe('Payload that blocks heating.'),
  allowPayload: z.string().optional().describe('Payload that allows heating.'),
  currentTopic: z.string().min(1).optional().describe('Topic to set a charger current.'),
  currentPayloadTemplate: z.string().default('{{value}}').describe('Payload for `currentTopic`; `{{value}}` is the current in A.'),
  pluggedPath: z.string().optional().describe('Dot path to "car plugged in" (boolean).'),
  chargingPath: z.string().optional().describe('Dot path to "car charging" (boolean).'),
  availabilityTopic: z
    .string()
    .min(1)
    .optional()
    .describe('Topic where the device (or its bridge) says whether it is online, e.g. a last will; `unavailablePayload` there makes it unreachable.'),
  availablePayload: z.string().default('online').describe('Payload (or JSON `state`) on `availabilityTopic` meaning online.'),
  unavailablePayload: z.string().default('offline').describe('Payload (or JSON `state`) on `availabilityTopic` meaning offline.'),
  refreshTopic: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Topic to ask the device for its state when a value is missing or older than `staleAfterS` (e.g. zigbee2mqtt `<device>/get`); without it such a value is stale.',
    ),
  refreshPayload: z.string().default('').describe('Payload sent to `refreshTopic`.'),
});
export type MqttMapSource = z.infer<typeof mqttMapSourceSchema>;

export const sourceOptionSchemas = [
  modbusSourceSchema,
  shellySourceSchema,
  tasmotaSourceSchema,
  goeSourceSchema,
  ocppSourceSchema,
  amsReaderSourceSchema,
  mqttMapSourceSchema,
] as const;

export const sourceSchema = z.discriminatedUnion('type', [...sourceOptionSchemas]);
export type SourceConfig = z.infer<typeof sourceSchema>;

/** Source types that can do each job. */
const switchSource = z
  .discriminatedUnion('type', [modbusSourceSchema, shellySourceSchema, tasmotaSourceSchema, mqttMapSourceSchema])
  .describe('How the heater is blocked/allowed.');
const meterSource = sourceSchema.describe('Where energy (and power) is measured.');
const thermometerSource = z
  .discriminatedUnion('type', [modbusSourceSchema, shellySourceSchema, tasmotaSourceSchema, mqttMapSourceSchema])
  .describe('Where the tank temperature is measured.');
const chargerSource = z
  .discriminatedUnion('type', [goeSourceSchema, ocppSourceSchema, modbusSourceSchema, mqttMapSourceSchema])
  .describe('How the charging current is set and the car state read.');

// ---------------------------------------------------------------------------------------------
// Device models

/** A typical household draw (kWh of hot water energy per local hour, about 7 kWh a day). */
export const standardDrawProfileKwh: readonly number[] = [
  0.05, 0.05, 0.05, 0.05, 0.05, 0.1, 0.6, 0.9, 0.6, 0.3, 0.2, 0.2, 0.25, 0.2, 0.15, 0.15, 0.2, 0.35, 0.5, 0.55, 0.6, 0.5, 0.3, 0.1,
];

/** "Hot water ready by 06:30 on weekdays": a schedule (its occurrences are the deadlines) and a temperature. */
export const comfortWindowSchema = cronScheduleSchema.extend({
  tempC: z.number().min(30).max(95).describe('Temperature the tank holds at each occurrence, °C (at most `maxC`).'),
  label: z.string().min(1).max(60).optional().describe('Name shown in plans and shortfalls (default: "hot water ≥ 55 °C by 06:30").'),
});
export type ComfortWindowConfig = z.infer<typeof comfortWindowSchema>;

export const tankModelSchema = z.strictObject({
  volumeL: z.number().min(10).max(2000).describe('Tank volume, litres.'),
  elementKw: z.number().positive().max(20).describe('Heating element power, kW.'),
  coldWaterC: z.number().min(0).max(30).default(8).describe('Cold inlet water temperature, °C.'),
  ambientC: z.number().min(-10).max(40).default(20).describe('Air temperature around the tank, °C.'),
  lossWPerK: z.number().min(0).max(20).default(1.6).describe('Standing heat loss, W per kelvin above ambient.'),
  floorC: z.number().min(20).max(80).default(50).describe('Comfort floor: the plan never lets the tank fall below this, °C.'),
  maxC: z.number().min(30).max(95).default(75).describe('Thermostat setpoint (maximum temperature), °C.'),
  initialC: z
    .number()
    .min(0)
    .max(95)
    .nullish()
    .transform((v) => v ?? undefined)
    .describe('Assumed temperature at start when no sensor reads it (default: maxC).'),
  drawProfileKwh: z
    .array(z.number().min(0).max(20))
    .length(24)
    .default([...standardDrawProfileKwh])
    .describe('Expected hot water draw per local hour 0..23, kWh of heat (default: a standard household profile).'),
  legionella: z
    .strictObject({
      enabled: z.boolean().default(true).describe('Run a legionella cycle.'),
      tempC: z.number().min(55).max(95).default(60).describe('Temperature the cycle reaches, °C.'),
      intervalDays: z.number().int().min(1).max(30).default(7).describe('Days between cycles.'),
    })
    .prefault({})
    .describe('Periodic high-temperature cycle.'),
  relayOnly: z.boolean().default(false).describe('The switch cannot stop heating mid-slot (no metered early stop).'),
  minOnMinutes: z.number().int().min(0).max(240).default(0).describe('Shortest heating run, minutes.'),
  minOffMinutes: z.number().int().min(0).max(240).default(0).describe('Shortest pause between runs, minutes.'),
  maxStartsPerDay: z.number().int().min(1).max(96).default(24).describe('Most heating starts per day (relay wear).'),
  comfort: z
    .array(comfortWindowSchema)
    .max(16)
    .default([])
    .describe(
      'Comfort windows: hot water at a temperature by scheduled times, e.g. `{ cron: "30 6 * * 1-5", tempC: 55 }` for 55 °C by 06:30 on weekdays. The planner heats for each occurrence within the horizon.',
    ),
});
export type TankModel = z.infer<typeof tankModelSchema>;

export const evModelSchema = z.strictObject({
  capacityKwh: z.number().positive().max(250).describe('Usable battery capacity, kWh.'),
  targetSocPct: z.number().min(10).max(100).default(80).describe('Target state of charge at departure, % (when the SoC is known).'),
  targetEnergyKwh: z
    .number()
    .positive()
    .max(250)
    .optional()
    .describe('Energy to add per session when the SoC is unknown, kWh (when absent: 40 % of capacityKwh).'),
  departure: timeOfDay.default('07:00').describe('Usual departure time, local "HH:MM" (every day; see `departureSchedule`).'),
  departureSchedule: cronScheduleSchema
    .optional()
    .describe(
      'Departures as a schedule instead, e.g. `{ cron: "30 7 * * 1-5" }` for 07:30 on weekdays; the next one (even beyond the planning horizon) is the charging deadline.',
    ),
  minCurrentA: z.number().min(0).max(80).default(6).describe('Lowest charging current the car accepts, A.'),
  maxCurrentA: z.number().min(1).max(80).default(16).describe('Highest charging current (fuse / cable), A.'),
  phases: z
    .union([z.literal(1), z.literal(3)])
    .default(3)
    .describe('Phases used for charging (with `phaseSwitching`: the phases the charger is wired for, 3).'),
  phaseSwitching: phaseSwitchingSchema.optional(),
  voltageV: z.number().min(100).max(400).default(230).describe('Phase voltage, V.'),
  efficiency: z.number().min(0.5).max(1).default(0.9).describe('Grid-to-battery efficiency.'),
});
export type EvModel = z.infer<typeof evModelSchema>;

export const meterModelSchema = z.strictObject({
  main: z.boolean().default(true).describe("This is the location's main meter (the whole home, used for LocationEnergyUsage and the power limit)."),
});
export type MeterModel = z.infer<typeof meterModelSchema>;

// ---------------------------------------------------------------------------------------------
// Devices

const common = {
  id: z.string().regex(idPattern, 'expected [a-z0-9_-]+').describe('Device id, unique, `[a-z0-9_-]+`; used in topics and logs.'),
  name: z.string().min(1).optional().describe('Display name.'),
  resourceId: z.string().min(1).nullable().default(null).describe('Energy Coordination resource id (set by `wattshift register`).'),
  staleAfterS: z
    .number()
    .int()
    .min(5)
    .max(3600)
    .default(120)
    .describe(
      'How long a device may be silent before its readings count as missing, s. For devices that report changes only (go-e, Shelly) or at intervals (the Tasmota TelePeriod), an unchanged value stays current while the device is heard from; a silent one is first asked for its full status (Shelly.GetStatus, Status 10).',
    ),
};

export const hotWaterTankSchema = z.strictObject({
  ...common,
  kind: z.literal('hotWaterTank').describe('A hot water tank with an electric element.'),
  switch: switchSource.optional(),
  meter: meterSource.optional(),
  thermometer: thermometerSource.optional(),
  model: tankModelSchema.describe('Planning parameters of the tank.'),
});

export const socTopicSchema = z.strictObject({
  topic: z
    .string()
    .regex(/^[^#+]+$/, 'no MQTT wildcards')
    .describe("MQTT topic that carries the car's state of charge (JSON or a bare number), e.g. from Home Assistant or a car integration."),
  path: z.string().default('').describe('Dot path to the SoC in the JSON payload (empty: the payload itself), e.g. `battery.soc`.'),
  scale: z.number().positive().default(1).describe('Multiplier turning the value into percent (e.g. 100 for a 0..1 fraction).'),
  staleAfterS: z
    .number()
    .int()
    .min(60)
    .max(7 * 86_400)
    .default(3600)
    .describe(
      "A SoC older than this is not used: the car's need falls back to the energy estimate (`targetEnergyKwh`), s. A source that publishes only on change (TeslaMate, most car integrations) says nothing while the car is parked and idle: allow for hours.",
    ),
});
export type SocTopicConfig = z.infer<typeof socTopicSchema>;

export const evChargerSchema = z.strictObject({
  ...common,
  kind: z.literal('evCharger').describe('An EV charger (and the car behind it).'),
  charger: chargerSource.optional(),
  meter: meterSource.optional(),
  safeCurrentA: z.number().min(0).max(80).default(6).describe('Current applied when wattshift loses control (0 = pause), A.'),
  soc: socTopicSchema
    .optional()
    .describe(
      "Where the car's state of charge comes from when the charger does not know it: with a fresh SoC the need is targetSocPct × capacityKwh minus the SoC.",
    ),
  model: evModelSchema.describe('Planning parameters of the car and charger.'),
  vehicles: z
    .array(z.string().regex(idPattern, 'expected [a-z0-9_-]+'))
    .max(16)
    .optional()
    .describe(
      'Ids of the `vehicles` this charger serves (default: every vehicle). A car is recognised by its id tag or card; with one car (or a `defaultVehicle`) no recognition is needed.',
    ),
  defaultVehicle: z
    .string()
    .regex(idPattern, 'expected [a-z0-9_-]+')
    .optional()
    .describe("The car assumed when the plugged car is not recognised (default: the only vehicle served, else the charger's own `model`)."),
});

export const meterDeviceSchema = z.strictObject({
  ...common,
  kind: z.literal('meter').describe('A meter that only measures.'),
  meter: meterSource.optional(),
  model: meterModelSchema.prefault({}).describe('Meter role.'),
});

export const heatPumpSchema = heatPumpSchemaOf({
  contactSource: switchSource,
  meter: meterSource,
  thermometer: thermometerSource,
  tankModel: tankModelSchema,
  common,
});

export const zoneSchema = zoneSchemaOf({
  switchSource,
  meter: meterSource,
  thermometer: thermometerSource.describe('Where the room temperature is measured.'),
  common,
});

export const solarSchema = solarSchemaOf(common);

export const deviceSchema = z.discriminatedUnion('kind', [
  hotWaterTankSchema,
  evChargerSchema,
  meterDeviceSchema,
  heatPumpSchema,
  zoneSchema,
  solarSchema,
]);
export type DeviceConfig = z.infer<typeof deviceSchema>;
export type HotWaterTankConfig = z.infer<typeof hotWaterTankSchema>;
export type EvChargerConfig = z.infer<typeof evChargerSchema>;
export type MeterDeviceConfig = z.infer<typeof meterDeviceSchema>;
export type HeatPumpConfig = z.infer<typeof heatPumpSchema>;
export type ZoneConfig = z.infer<typeof zoneSchema>;
export type SolarConfig = z.infer<typeof solarSchema>;
/** The devices planned as a tank: a hot water tank with an element, or a heat pump heating one. */
export type TankDeviceConfig = HotWaterTankConfig | HeatPumpConfig;
export const isTankDevice = (d: DeviceConfig): d is TankDeviceConfig => d.kind === 'hotWaterTank' || d.kind === 'heatPump';
/** Electric power while heating, kW: the element, or the heat pump's draw. */
export const heatingKwOf = (d: TankDeviceConfig): number => (d.kind === 'heatPump' ? d.model.electricKw : d.model.elementKw);
