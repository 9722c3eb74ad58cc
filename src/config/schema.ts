/**
 * The config schema: the single source of the config's types (`z.infer`), defaults and
 * documentation (`docs/config.md` is generated from the descriptions here). Every object is
 * strict, so an unknown key is an error reported with its key path.
 */
import { z } from 'zod';
import { optionalSecretField, secretField } from './secret.js';
import { deviceSchema, modbusBusSchema, timeOfDay } from './schema-devices.js';
import { vehicleSchema } from './schema-vehicles.js';
import { crossCheck } from './cross-check.js';
import { ianaTimeZone } from './time-fields.js';
import { tariffSchema } from './schema-tariff.js';
import { upstreamSchema } from './schema-upstream.js';
import { weatherSchema } from './schema-weather.js';

export * from './schema-devices.js';
export * from './schema-solar.js';
export * from './schema-vehicles.js';

export const priceAreas = ['NO1', 'NO2', 'NO3', 'NO4', 'NO5', 'SE1', 'SE2', 'SE3', 'SE4', 'DK1', 'DK2', 'FI'] as const;
export const currencies = ['NOK', 'SEK', 'DKK', 'EUR'] as const;

/** A shipped tariff's name or a tariff file's path (resolved by the loader). */
export const tariffReference = z.string().min(1);
export { tariffSchema };

/** A URL carrying `user:password@` would put a credential in logs and `ps`: refused. */
const withoutCredentials = (url: string): boolean => {
  // A URL that does not parse is reported by z.url() itself.
  if (!URL.canParse(url)) return true;
  const u = new URL(url);
  return u.username === '' && u.password === '';
};
const credentialsMessage = 'credentials in a URL are refused (they end up in logs): use the password or secret key';
const httpUrl = z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }).refine(withoutCredentials, credentialsMessage);
const host = z.string().min(1);
const port = z.number().int().min(0).max(65535);
const filePath = (description: string) =>
  z
    .string()
    .min(1)
    .nullish()
    .transform((v) => v ?? undefined)
    .describe(description);

export const fuseSchema = z.strictObject({
  mainFuseA: z.number().positive().max(400).describe('The main fuse per phase, A (e.g. 25).'),
  phases: z.union([z.literal(1), z.literal(3)]).describe('Phases of the supply: 1 or 3.'),
  supply: z
    .enum(['TN', 'IT'])
    .describe(
      '`TN` (3×230/400 V, a 3-phase load draws 3·U·I) or `IT` (3×230 V without neutral, a 3-phase load draws √3·U·I and a 1-phase load sits on two lines).',
    ),
  meter: z.string().min(1).describe('Id of the meter device that gives the per-phase currents (an `amsreader` source).'),
  marginA: z.number().min(0).max(10).default(1).describe('Current kept free below the fuse on every phase, A.'),
  raiseAfterS: z
    .number()
    .int('whole seconds')
    .min(0, 'must be 0 s or more')
    .max(3600, 'must be at most 3600 s')
    .default(60)
    .describe("How long the headroom must stay above the fuse limit before the charger's current is raised again, s."),
  staleAfterS: z
    .number()
    .int('whole seconds')
    .min(1, 'must be at least 1 s')
    .max(600, 'must be at most 600 s')
    .default(30)
    .describe('Phase currents older than this give no headroom: the charger is held at its safe current, s.'),
  singlePhaseChargerLine: z
    .union([z.literal(1), z.literal(2), z.literal(3)])
    .default(1)
    .describe('The line a 1-phase charger is connected to (on IT: between this line and the next).'),
});
export type FuseConfig = z.infer<typeof fuseSchema>;

export const siteSchema = z.strictObject({
  timezone: ianaTimeZone.describe('IANA time zone of the home, e.g. `Europe/Oslo`; local hours, departures and draw profiles use it.'),
  priceArea: z.enum(priceAreas).describe('Bidding zone of the home.'),
  currency: z.enum(currencies).describe('Currency of the grid fee, tax and all reported costs.'),
  locationLimitKw: z.number().positive().max(1000).describe('Most power the home may draw, kW (main fuse or tariff step). Held at every instant.'),
  gridFeePerKwh: z.number().min(0).max(100).default(0).describe('Grid energy fee per kWh, in `currency`, excluding VAT.'),
  taxPerKwh: z.number().min(0).max(100).default(0).describe('Energy tax per kWh, in `currency`, excluding VAT.'),
  vatPct: z.number().min(0).max(100).default(25).describe('VAT, percent, applied to energy price, fee and tax.'),
  exchangeRates: z
    .partialRecord(z.enum(currencies), z.number().positive())
    .optional()
    .describe('Units of `currency` per 1 unit of another currency, e.g. `{ EUR: 11.5 }`, for prices quoted in other currencies.'),
  slotMinutes: z
    .union([z.literal(60), z.literal(15)])
    .default(60)
    .describe('Planning slot length, minutes.'),
  fuse: fuseSchema
    .optional()
    .describe(
      "The main fuse per phase: with it, the charger's current is lowered in real time so that no phase exceeds the fuse, and the plan keeps the home within what the fuse carries as a balanced load, less what each heater (taken as 1-phase) costs its lines beyond its power.",
    ),
  tariff: z
    .union([tariffReference, tariffSchema])
    .optional()
    .describe(
      "The household's tariff: a shipped tariff by name (`elvia`, see `tariffs/`), a path to a tariff file, or an inline tariff (docs/tariffs.md). With a tariff, `gridFeePerKwh`, `taxPerKwh` and `vatPct` are not used.",
    ),
});

export const sparkSchema = z.strictObject({
  baseUrl: httpUrl.default('https://api.sandbox.voluespark.com/energy-coordination/v1').describe('Energy Coordination API base URL.'),
  forecastUrl: httpUrl.default('https://api.voluespark.com/smart/v1').describe('Forecast price service (Smart API) base URL.'),
  authUrl: httpUrl
    .default('https://auth.identity.volue.com')
    .describe('OAuth2 identity server base URL; tokens come from `{authUrl}/connect/token` (client credentials).'),
  // Empty when absent, so that the direct mode's code keeps plain strings; the upstream check
  // requires both in direct mode and refuses the secret in fleet mode.
  clientId: z
    .string()
    .min(1)
    .nullish()
    .transform((v) => v ?? '')
    .describe('OAuth2 client id (required with `upstream.mode: direct`).'),
  clientSecret: secretField('OAuth2 client secret (required with `upstream.mode: direct`, refused with `fleet`).')
    .nullish()
    .transform((v) => v ?? ''),
  userId: z.string().min(1).optional().describe("Partner-chosen user id of this home's owner (used by `wattshift register`)."),
  locationId: z.string().min(1).optional().describe('Partner-chosen location id of this home.'),
  meterPointIds: z.array(z.string().min(1)).default([]).describe('Meter point ids (MPIDs) of the location.'),
  coordinates: z
    .strictObject({
      latitude: z.number().min(-90).max(90).describe('Latitude, degrees.'),
      longitude: z.number().min(-180).max(180).describe('Longitude, degrees.'),
    })
    .optional()
    .describe('Location coordinates (used for eligibility when no MPID is known).'),
  requestTimeoutMs: z.number().int().min(100).max(120_000).default(10_000).describe('Timeout of one API request, ms.'),
  tokenTimeoutMs: z.number().int().min(100).max(120_000).default(10_000).describe('Timeout of one token request, ms.'),
  proxyUrl: httpUrl
    .nullish()
    .transform((v) => v ?? undefined)
    .describe(
      'Forward proxy for every API, token and forecast request, e.g. `http://proxy.lan:3128`; https goes through it with CONNECT. A proxy that needs a password is not supported (credentials in URLs are refused).',
    ),
});

export const eventsSchema = z.strictObject({
  pollIntervalS: z
    .number()
    .int()
    .min(10)
    .max(86_400)
    .default(300)
    .describe('Interval of `GET /events` polling, s. Polling also runs shortly after 13:00 local.'),
  poll: z.boolean().default(true).describe('Poll `GET /events` (works behind NAT).'),
  webhook: z
    .strictObject({
      enabled: z.boolean().default(false).describe('Run the webhook receiver.'),
      host: host
        .default('127.0.0.1')
        .describe('Listen address of the webhook receiver (loopback by default: put a TLS reverse proxy in front for the API to reach it).'),
      port: port.default(8788).describe('Listen port of the webhook receiver.'),
      path: z.string().regex(/^\//, 'expected a path starting with /').default('/spark/notify').describe('URL path the receiver answers on.'),
      publicUrl: httpUrl
        .nullish()
        .transform((v) => v ?? undefined)
        .describe('Public URL Spark calls (registered by `wattshift register` when set).'),
      secret: optionalSecretField('HMAC-SHA256 key of `X-Payload-Signature`. Required when the receiver is enabled.'),
      insecureAcceptUnsignedCalls: z
        .boolean()
        .default(false)
        .describe(
          'Run the receiver without a secret, accepting unsigned calls: anyone who reaches the port can then cap the home. For a closed test network only.',
        ),
      maxBodyBytes: z.number().int().min(1024).max(10_485_760).default(262_144).describe('Largest accepted request body, bytes.'),
    })
    .prefault({})
    .refine((w) => !w.enabled || w.secret !== undefined || w.insecureAcceptUnsignedCalls, {
      path: ['secret'],
      message:
        'the webhook receiver needs a secret: unsigned calls could cap the home (set events.webhook.insecureAcceptUnsignedCalls: true only on a closed test network)',
    })
    .describe('Webhook receiver.'),
});

export const reportsSchema = z.strictObject({
  retryMinS: z.number().int().min(1).max(86_400).default(60).describe('First retry delay of a failed report, s (doubles each attempt).'),
  retryMaxS: z.number().int().min(1).max(86_400).default(3600).describe('Longest retry delay, s.'),
  deadlineWarnDays: z.number().int().min(0).max(28).default(3).describe('Warn when a report is still unsent this many days before month end.'),
});

export const mqttSchema = z.strictObject({
  url: z
    .url({ protocol: /^(mqtts?|wss?)$/, error: 'expected an mqtt://, mqtts://, ws:// or wss:// URL' })
    .refine(withoutCredentials, credentialsMessage)
    .describe('Broker URL, `mqtt://`, `mqtts://`, `ws://` or `wss://`.'),
  username: z
    .string()
    .min(1)
    .nullish()
    .transform((v) => v ?? undefined)
    .describe('Broker user name.'),
  password: optionalSecretField('Broker password.'),
  ca: filePath('CA certificate file (PEM) for TLS.'),
  cert: filePath('Client certificate file (PEM) for TLS.'),
  key: filePath('Client private key file (PEM) for TLS.'),
  rejectUnauthorized: z.boolean().default(true).describe("Verify the broker's TLS certificate."),
  clientId: z.string().min(1).default('wattshift').describe('MQTT client id.'),
  maxPacketBytes: z
    .number()
    .int()
    .min(4096)
    .max(16_777_216)
    .default(262_144)
    .describe(
      'Largest MQTT packet accepted from the broker, bytes; a larger one is refused before it is read (limit the broker too: `max_packet_size` in Mosquitto 2).',
    ),
  baseTopic: z
    .string()
    .regex(/^[^#+]+$/, 'no MQTT wildcards')
    .default('wattshift')
    .describe('Base topic of everything wattshift publishes; no device topic may lie under it.'),
  discovery: z
    .strictObject({
      enabled: z.boolean().default(true).describe('Publish Home Assistant MQTT discovery.'),
      prefix: z
        .string()
        .regex(/^[^#+]+$/, 'no MQTT wildcards')
        .default('homeassistant')
        .describe('Home Assistant discovery prefix; it and the base topic must not contain each other, and no device topic may lie under it.'),
    })
    .prefault({})
    .describe('Home Assistant MQTT discovery.'),
});

export const ocppSchema = z.strictObject({
  host: host.default('0.0.0.0').describe('Listen address of the OCPP central system (chargers on the home network connect to it).'),
  port: port.default(8887).describe('Listen port; chargers are given `ws://<gateway>:<port>/ocpp/<chargePointId>` (wss:// with `tls`).'),
  heartbeatIntervalS: z
    .number()
    .int()
    .min(10)
    .max(3600)
    .default(60)
    .describe("Heartbeat interval given to charge points (BootNotification, HeartbeatInterval), s; keep it below the charger's `staleAfterS`."),
  meterValueSampleIntervalS: z
    .number()
    .int()
    .min(5)
    .max(3600)
    .default(60)
    .describe('MeterValueSampleInterval set on charge points: meter values during a session this often, s.'),
  tls: z
    .strictObject({
      cert: z.string().min(1).describe('Server certificate file (PEM).'),
      key: z.string().min(1).describe('Private key file (PEM).'),
    })
    .optional()
    .describe(
      'Serve wss:// (OCPP Security Profile 2: TLS with basic auth). Without it: ws:// with basic auth (Security Profile 1), for a trusted home network only.',
    ),
});

export const plannerSchema = z.strictObject({
  horizonHours: z.number().int().min(12).max(168).default(48).describe('How far ahead the plan reaches, hours.'),
  frozenWindowMinutes: z
    .number()
    .int()
    .min(0)
    .max(240)
    .default(15)
    .describe('Slots starting within this many minutes are not re-planned (the current slot never is), minutes.'),
  evFallbackWindow: z
    .strictObject({
      start: timeOfDay.default('22:00').describe('Start, local "HH:MM".'),
      end: timeOfDay.default('06:00').describe('End, local "HH:MM".'),
    })
    .prefault({})
    .describe('When no prices are known, the EV charges in this local window.'),
});

export const pricesSchema = z.strictObject({
  nordPool: z
    .strictObject({
      enabled: z.boolean().default(false).describe('Fetch day-ahead prices from the Nord Pool data portal as a second source.'),
      url: httpUrl
        .default('https://dataportal-api.nordpoolgroup.com/api')
        .describe('Data portal API base URL (`DayAheadPriceIndices` is read below it).'),
      use: z
        .enum(['fallback', 'first'])
        .default('fallback')
        .describe(
          "`fallback`: for slots the forecast service gives no actual or forecast price; `first`: before the forecast service's forecast (its actual prices still come first).",
        ),
      timeoutMs: z.number().int().min(100).max(120_000).default(10_000).describe('Timeout of one request, ms.'),
    })
    .prefault({})
    .describe('Nord Pool day-ahead prices (the published auction result, hourly or 15-minute).'),
});

export const storageSchema = z.strictObject({
  path: z.string().min(1).default('/var/lib/wattshift/wattshift.db').describe('SQLite database file; its directory must exist and be writable.'),
  retentionDays: z.number().int().min(35).max(3650).default(400).describe('Days of events, energy and plans kept.'),
});

export const httpSchema = z.strictObject({
  enabled: z.boolean().default(true).describe('Serve the status page, `/healthz` and `/metrics`.'),
  host: host.default('127.0.0.1').describe('Listen address (loopback by default).'),
  port: port.default(8787).describe('Listen port.'),
  allowedHosts: z
    .array(z.string().regex(/^[A-Za-z0-9.-]+$/, 'expected a host name'))
    .default([])
    .describe(
      'Host names the page, `/api/view` and `/metrics` answer to besides IP addresses and `localhost` (e.g. `gateway.local`); others get 421 (DNS rebinding).',
    ),
  pageUrl: httpUrl
    .nullish()
    .transform((v) => v ?? undefined)
    .describe(
      "The status page's address as people reach it (e.g. `http://gateway.local:8787/`); Home Assistant links the devices to it (`configuration_url`), and its host name is allowed like those in `allowedHosts`. Unset: `http://<host>:<port>/` when `host` is one address other than loopback, else no link.",
    ),
});

export const logSchema = z.strictObject({
  level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info').describe('Log level.'),
});

export const configSchema = z
  .strictObject({
    version: z.literal(1).describe('Config format version; always 1 for now.'),
    site: siteSchema.describe('The home: time zone, prices, limits.'),
    upstream: upstreamSchema
      .prefault({ mode: 'direct' })
      .describe("Where events and prices come from and reports go: the API itself (`direct`) or the partner's hub (`fleet`)."),
    spark: sparkSchema.prefault({}).describe('Energy Coordination API and forecast service (`direct` mode).'),
    events: eventsSchema.prefault({}).describe('How events arrive: polling and/or webhook.'),
    reports: reportsSchema.prefault({}).describe('Usage report outbox.'),
    mqtt: mqttSchema.optional().describe('MQTT broker for devices and home automation.'),
    ocpp: ocppSchema.optional().describe('Local OCPP 1.6J central system for chargers of type `ocpp`.'),
    modbus: z
      .record(z.string().regex(/^[a-z0-9_-]+$/, 'expected [a-z0-9_-]+'), modbusBusSchema)
      .default({})
      .describe('Named Modbus buses.'),
    devices: z.array(deviceSchema).default([]).describe('Controlled and measured devices.'),
    vehicles: z
      .array(vehicleSchema)
      .max(32)
      .default([])
      .describe("Cars as resources of their own, served by the chargers that name them (without it each charger's `model` is its car)."),
    planner: plannerSchema.prefault({}).describe('Planner settings.'),
    prices: pricesSchema.prefault({}).describe('Second day-ahead price source.'),
    weather: weatherSchema
      .prefault({})
      .describe(
        "The outdoor temperature for heated rooms: MET Norway's free Locationforecast for `spark.coordinates`, read about every half hour, when MET's answer expires. MET's terms of service ask every client for a contact: set `contact` to your email address or web page (it goes in the User-Agent, nowhere else); without it nothing is asked and rooms are planned for 0 °C outdoors.",
      ),
    storage: storageSchema.prefault({}).describe('Database.'),
    http: httpSchema.prefault({}).describe('Local status server.'),
    log: logSchema.prefault({}).describe('Logging.'),
  })
  .superRefine(crossCheck);

export type ConfigInput = z.input<typeof configSchema>;
export type Config = z.infer<typeof configSchema>;
/** A direct-mode config document, whose `spark` section is present. */
export type DirectConfigInput = ConfigInput & { spark: NonNullable<ConfigInput['spark']> };
export type SiteConfig = Config['site'];
export type SparkConfig = Config['spark'];
export type EventsConfig = Config['events'];
export type ReportsConfig = Config['reports'];
export type MqttConfig = NonNullable<Config['mqtt']>;
export type PlannerConfig = Config['planner'];
export type OcppConfig = NonNullable<Config['ocpp']>;
export type StorageConfig = Config['storage'];
export type HttpConfig = Config['http'];
