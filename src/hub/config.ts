/**
 * The hub's YAML config: the API credentials (the daemon's `spark` keys that concern a partner),
 * PostgreSQL, the broker, the webhook endpoint and the job timings. Strict objects: an unknown
 * key is an error. Secrets take the daemon's forms (`{ file }`, `{ env }`, `{ credential }`).
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { WattshiftError } from '../errors.js';
import { defaultFleetPrefix } from '../fleet/wire.js';
import type { ConfigProblem } from '../config/load.js';
import { currencies, sparkSchema } from '../config/schema.js';
import { formatPath, resolveSecrets, secretField } from '../config/secret.js';
import { cronExpression, ianaTimeZone } from '../config/time-fields.js';

const topicLevel = z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, 'letters, digits, ".", "_" and "-" only (1–128)');
const seconds = (min: number, max: number, fallback: number, description: string) =>
  z.number().int().min(min).max(max).default(fallback).describe(description);

export const hubConfigSchema = z.strictObject({
  version: z.literal(1).describe('Config format version: 1.'),
  instanceId: topicLevel
    .default(
      `${hostname()
        .replace(/[^A-Za-z0-9._-]/g, '-')
        .slice(0, 100)}-${process.pid}`,
    )
    .describe('Name of this hub instance (its MQTT client id and its outbox claims); unique per instance. Default: host name and process id.'),
  spark: sparkSchema
    .pick({
      baseUrl: true,
      forecastUrl: true,
      authUrl: true,
      clientId: true,
      clientSecret: true,
      requestTimeoutMs: true,
      tokenTimeoutMs: true,
      proxyUrl: true,
    })
    .describe('Energy Coordination API and forecast service: the partner credentials, held by the hub only.'),
  database: z
    .strictObject({
      url: secretField('PostgreSQL connection URL, `postgres://user:password@host:5432/db`.'),
      poolSize: z.number().int().min(1).max(100).default(10).describe('Connections per instance.'),
    })
    .describe('The hub state in PostgreSQL.'),
  broker: z
    .strictObject({
      url: z
        .url({ protocol: /^(mqtts?|wss?)$/, error: 'expected an mqtt://, mqtts://, ws:// or wss:// URL' })
        .describe('MQTT 5 broker (cluster) URL.'),
      username: z.string().min(1).describe("The hub's broker user."),
      password: secretField("The hub's broker password."),
      ca: z.string().min(1).optional().describe('CA file for an mqtts:// broker with a private CA.'),
      topicPrefix: z
        .string()
        .regex(/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/, 'topic levels separated by "/"')
        .default(defaultFleetPrefix)
        .describe('Prefix of every fleet topic.'),
      sharedGroup: topicLevel
        .default('wattshift-hub')
        .describe(
          'Shared-subscription group of the hub instances (the broker sees it with a suffix derived from `password`, so that no gateway can join it).',
        ),
    })
    .describe("The partner's MQTT broker."),
  webhook: z
    .strictObject({
      host: z.string().min(1).default('127.0.0.1').describe('Listen address (put the TLS load balancer in front).'),
      port: z.number().int().min(0).max(65535).default(8789).describe('Listen port.'),
      path: z.string().regex(/^\//, 'expected a path starting with /').default('/spark/notify').describe('URL path the API calls.'),
      secret: secretField('HMAC-SHA256 key of `X-Payload-Signature`.'),
      maxBodyBytes: z.number().int().min(1024).max(10_485_760).default(1_048_576).describe('Largest accepted body, bytes.'),
    })
    .describe('The webhook endpoint of the whole fleet.'),
  events: z
    .strictObject({
      pollIntervalS: seconds(10, 86_400, 300, 'Interval of the `GET /events` safety-net poll, s.'),
    })
    .prefault({})
    .describe('Event polling.'),
  advice: z
    .strictObject({
      cron: cronExpression.default('7 * * * *').describe('When the forecast advice of every price area in use is fetched (node-cron).'),
      timezone: ianaTimeZone.default('Europe/Oslo').describe('Time zone of `cron`.'),
      currency: z.enum(currencies).default('EUR').describe('Currency of the advice prices.'),
      segmentSize: z
        .number()
        .int()
        .refine((n) => n > 0 && 24 % n === 0, 'must divide 24')
        .default(6)
        .describe('Advice segment length, hours.'),
    })
    .prefault({})
    .describe('Forecast advice per price area.'),
  outbox: z
    .strictObject({
      leaseS: seconds(
        1,
        3600,
        60,
        "How long an instance's claim on a report holds; after it another instance takes the report over, s. Longer than the longest upload.",
      ),
      batch: z.number().int().min(1).max(1000).default(20).describe('Reports claimed per round.'),
      idleS: seconds(1, 3600, 5, 'Pause between outbox rounds when nothing is due, s.'),
      retryMinS: seconds(1, 86_400, 30, 'First retry delay of a failed upload, s (doubles each attempt).'),
      retryMaxS: seconds(1, 86_400, 3600, 'Longest retry delay, s.'),
    })
    .prefault({})
    .describe('The report outbox.'),
  retention: z
    .strictObject({
      keepDays: z
        .number()
        .int()
        .min(35)
        .max(3650)
        .default(90)
        .describe('Settled reports and ended events older than this are deleted, days (pending reports and their events never).'),
      cron: cronExpression.default('23 3 * * *').describe('When the old rows are deleted (node-cron, UTC).'),
    })
    .prefault({})
    .describe('How long the hub keeps what it no longer needs.'),
});

export type HubConfig = z.infer<typeof hubConfigSchema>;

/** Validates a hub config document; secrets resolved against `env` and `baseDir`. Throws CONFIG_INVALID. */
export function parseHubConfig(
  document: unknown,
  options: { env?: NodeJS.ProcessEnv; baseDir?: string } = {},
): { config: HubConfig; secrets: string[] } {
  const resolved = resolveSecrets(hubConfigSchema, document, { env: options.env ?? process.env, baseDir: options.baseDir ?? process.cwd() });
  const result = hubConfigSchema.safeParse(resolved.document);
  const problems: ConfigProblem[] = [
    ...resolved.problems.map((p) => ({ path: p.path, message: p.message })),
    ...(result.success ? [] : result.error.issues.map((i) => ({ path: formatPath(i.path as (string | number)[]), message: i.message }))),
  ];
  if (!result.success || problems.length > 0) {
    throw new WattshiftError('CONFIG_INVALID', `invalid hub config (${problems.length} problem${problems.length === 1 ? '' : 's'})`, {
      details: { problems },
    });
  }
  return { config: result.data, secrets: resolved.secrets };
}

export function loadHubConfig(path: string, env: NodeJS.ProcessEnv = process.env): { config: HubConfig; secrets: string[] } {
  const file = resolve(path);
  let document: unknown;
  try {
    document = parse(readFileSync(file, 'utf8'), { uniqueKeys: true });
  } catch (err) {
    throw new WattshiftError('CONFIG_INVALID', `cannot read hub config ${file}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return parseHubConfig(document, { env, baseDir: dirname(file) });
}
