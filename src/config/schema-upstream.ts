/**
 * Where the daemon gets events and prices and sends its reports: straight to the API (`direct`,
 * with the partner's credentials in `spark`) or through the partner's hub over its MQTT broker
 * (`fleet`, with only this gateway's broker login on the device).
 */
import { z } from 'zod';
import { secretField } from './secret.js';
import { defaultFleetPrefix } from '../fleet/wire.js';

const topicLevel = z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, 'letters, digits, ".", "_" and "-" only (1–128)');
const brokerUrl = z
  .url({ protocol: /^(mqtts?|wss?)$/, error: 'expected an mqtt://, mqtts://, ws:// or wss:// URL' })
  .refine(
    (u) => !URL.canParse(u) || (new URL(u).username === '' && new URL(u).password === ''),
    'credentials in a URL are refused (they end up in logs): use username and password',
  );

export const directUpstreamSchema = z.strictObject({
  mode: z.literal('direct').describe('`direct`: this gateway talks to the API itself with the credentials in `spark`.'),
});

export const fleetUpstreamSchema = z.strictObject({
  mode: z.literal('fleet').describe("`fleet`: events, prices and report uploads go through the partner's hub; no API secret on this device."),
  brokerUrl: brokerUrl.describe("The partner's MQTT broker, `mqtts://` in production."),
  gatewayId: topicLevel.describe(
    "This gateway's id at the hub (its report, receipt and sync topics; the MQTT client id is `wattshift-gw-<gatewayId>`).",
  ),
  username: z.string().min(1).describe("This gateway's broker user name (from the hub's provisioning)."),
  password: secretField("This gateway's broker password."),
  ca: z
    .string()
    .min(1)
    .nullish()
    .transform((v) => v ?? undefined)
    .describe('CA certificate file (PEM) of the broker.'),
  topicPrefix: z
    .string()
    .regex(/^[^#+$][^#+]*$/, 'no MQTT wildcards, not starting with $')
    .default(defaultFleetPrefix)
    .describe("Prefix of the fleet topics; the same as the hub's."),
  locationId: topicLevel.describe('The API location id of this home (events for it arrive on its topic).'),
  priceArea: topicLevel.optional().describe('Price area whose advice the hub publishes; `site.priceArea` when absent.'),
  sessionExpiryHours: z
    .number()
    .int()
    .min(1)
    .max(24 * 30)
    .default(7 * 24)
    .describe("How long the broker keeps this gateway's session (and the events for it) while it is offline, hours."),
  protocolVersion: z
    .union([z.literal(5), z.literal(4)])
    .default(5)
    .describe('MQTT version: 5, or 4 (3.1.1) for a broker without MQTT 5 (the session then lasts as long as the broker keeps sessions).'),
  receiptTimeoutS: z
    .number()
    .int()
    .min(5)
    .max(3600)
    .default(120)
    .describe("How long a report waits for the hub's receipt before it is sent again (same key, the outbox's backoff), s."),
});

export const upstreamSchema = z.discriminatedUnion('mode', [directUpstreamSchema, fleetUpstreamSchema]);
export type UpstreamConfig = z.infer<typeof upstreamSchema>;
export type FleetUpstreamConfig = z.infer<typeof fleetUpstreamSchema>;

/** What the upstream rules read of the config (sections that failed their own checks are undefined). */
export interface UpstreamCheckInput {
  upstream?: { mode: string; locationId?: string } | undefined;
  /** An absent client id or secret is parsed as ''. */
  spark?: { clientId: string; clientSecret: string; locationId?: string | undefined } | undefined;
  events?: { webhook: { enabled: boolean } } | undefined;
}

/** Direct mode needs the API credentials; fleet mode refuses them (and the webhook: events come from the hub). */
export function checkUpstream(cfg: UpstreamCheckInput, issue: (path: (string | number)[], message: string) => void): void {
  const mode = cfg.upstream?.mode ?? 'direct';
  if (mode === 'direct') {
    if (cfg.spark && !cfg.spark.clientId) issue(['spark', 'clientId'], 'the OAuth2 client id is required with upstream.mode direct');
    if (cfg.spark && !cfg.spark.clientSecret) issue(['spark', 'clientSecret'], 'the OAuth2 client secret is required with upstream.mode direct');
    return;
  }
  if (cfg.spark?.clientSecret) {
    issue(
      ['spark', 'clientSecret'],
      "upstream.mode is fleet: the partner's API secret stays with the hub and must not be on a gateway; remove spark.clientSecret (and revoke it if this device was ever given it)",
    );
  }
  if (cfg.events?.webhook.enabled)
    issue(['events', 'webhook', 'enabled'], 'upstream.mode is fleet: events come from the hub; turn the webhook receiver off');
  const location = cfg.upstream?.locationId;
  if (location !== undefined && cfg.spark?.locationId !== undefined && cfg.spark.locationId !== location) {
    issue(['spark', 'locationId'], `differs from upstream.locationId "${location}": leave it out in fleet mode`);
  }
}
