/**
 * The direct upstream: this gateway holds the partner's API credentials (`spark`), polls
 * `GET /events` and/or receives the webhook, fetches prices from the forecast service and posts
 * reports to the API itself.
 */
import type { Config } from '../config/schema.js';
import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import { codeOf, isWattshiftError } from '../errors.js';
import { createSparkClient, type SparkClient } from '../spark/client.js';
import { createSparkConnection } from '../spark/connection.js';
import { createForecastClient } from '../spark/forecast-client.js';
import { startEventPoller } from './event-poller.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';
import type { Upstream, UpstreamHealth } from './port.js';

export function createDirectUpstream(config: Config, deps: { clock: Clock; logger: Logger; checkCredentials: boolean }): Upstream {
  const log = deps.logger.child({ component: 'app' });
  const timeout = config.spark.requestTimeoutMs;
  const connection = createSparkConnection({ timeoutsMs: { connect: timeout, headers: timeout, body: timeout }, proxyUrl: config.spark.proxyUrl });
  const auth = {
    authUrl: config.spark.authUrl,
    clientId: config.spark.clientId,
    clientSecret: config.spark.clientSecret,
    clock: deps.clock,
    logger: deps.logger,
    connection,
  };
  const spark: SparkClient = createSparkClient({ ...auth, baseUrl: config.spark.baseUrl });
  const forecast = createForecastClient({ ...auth, forecastUrl: config.spark.forecastUrl, tokens: spark.tokens });
  let poller: ReturnType<typeof startEventPoller> | undefined;
  let webhook: WebhookReceiver | undefined;

  return {
    mode: 'direct',
    prices: forecast,
    reports: { postReport: async (body, signal) => spark.postReport(body as never, { signal }) },
    eligibility: spark,
    async open() {
      if (!deps.checkCredentials) return;
      try {
        await spark.tokens.getToken(AbortSignal.timeout(config.spark.tokenTimeoutMs * 3));
      } catch (err) {
        if (isWattshiftError(err, 'AUTH_REJECTED')) throw err;
        log.warn({ code: codeOf(err, 'API_UNAVAILABLE') }, 'API not reachable at start; controlling on stored data and retrying');
      }
    },
    async startEvents(sinks) {
      if (config.events.poll) {
        poller = startEventPoller({
          source: spark,
          intake: sinks.intake,
          isKnown: sinks.isKnownEvent,
          clock: deps.clock,
          logger: deps.logger,
          intervalMs: config.events.pollIntervalS * 1000,
          timeZone: config.site.timezone,
        });
      }
      if (config.events.webhook.enabled) {
        const wh = config.events.webhook;
        webhook = await startWebhookReceiver(
          { host: wh.host, port: wh.port, path: wh.path, secret: wh.secret ?? null, maxBodyBytes: wh.maxBodyBytes, maxConnections: 256 },
          { intake: sinks.intake, logger: deps.logger, onRefused: (code) => sinks.onRefused('webhook', code) },
        );
      }
      return {
        wake: () => poller?.wake(),
        stop: async () => {
          await poller?.stop();
          await webhook?.close();
        },
      };
    },
    health: (): UpstreamHealth => {
      const h = poller?.health();
      return h ? { ok: h.ok, lastError: h.lastError } : { ok: true, lastError: null };
    },
    async close() {
      await spark.close().catch(() => undefined);
      await forecast.close().catch(() => undefined);
      await connection.close();
    },
  };
}
