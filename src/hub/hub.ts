/**
 * `wattshift hub`: one instance of the partner-side service. Any number run side by side on one
 * PostgreSQL database and one broker: reports and sync requests are shared among them by an MQTT 5
 * shared subscription, outbox rows by row locks, events by their id.
 */
import { readFileSync } from 'node:fs';
import mqtt from 'mqtt';
import pg from 'pg';
import { fleetTopics, type FleetReceipt } from '../fleet/wire.js';
import { startLoop, type LoopHandle } from '../jobs/loop.js';
import { startCronJob } from '../jobs/cron.js';
import { deadlineCheckCron } from '../jobs/report-outbox.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import { createSparkClient, type SparkClient } from '../spark/client.js';
import { createSparkConnection } from '../spark/connection.js';
import { createForecastClient } from '../spark/forecast-client.js';
import { fleetSyncSchema } from '../fleet/wire.js';
import { isWattshiftError, WattshiftError } from '../errors.js';
import { startAdvicePublisher, type AdvicePublisher } from './advice-publisher.js';
import type { HubConfig } from './config.js';
import { createEventFanout, type EventFanout, type Publish } from './event-fanout.js';
import { createHubHealth } from './health.js';
import { migrate } from './migrations.js';
import { createOutboxStore } from './outbox-store.js';
import { startOutboxWorker } from './outbox-worker.js';
import { createRegistryStore, type RegistryStore } from './registry-store.js';
import { createReportIntake, type ReportIntake } from './report-intake.js';
import { pruneHub } from './retention.js';
import { startWebhookEndpoint, type WebhookEndpoint } from './webhook-endpoint.js';

export interface Hub {
  readonly instanceId: string;
  readonly webhookUrl: string;
  readonly registry: RegistryStore;
  readonly fanout: EventFanout;
  readonly reports: ReportIntake;
  readonly advice: AdvicePublisher;
  /** Runs one `GET /events` poll now; returns the events it stored. */
  pollEvents(): Promise<number>;
  stop(): Promise<void>;
}

const parseJson = (payload: Buffer): unknown => {
  try {
    return JSON.parse(payload.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
};

/** Events remembered as seen by the poll before the set is reloaded from the database. */
const knownEventsKept = 2000;
/**
 * The largest API answer the hub reads. An event lists every home it targets (about 60 B each):
 * one price curve for 10,000 homes is 600 kB, so a page of such events is far above the daemon's
 * 2 MiB. Pages are kept small for the same reason.
 */
const maxResponseBytes = 64 * 1024 * 1024;
const pollPageSize = 10;
/** Longest wait for the broker's PUBACK of one publish (real time: the API's webhook call waits on it). */
const publishTimeoutMs = 10_000;

export async function startHub(config: HubConfig, deps: { clock: Clock; logger: Logger }): Promise<Hub> {
  const log = deps.logger.child({ component: 'hub', instanceId: config.instanceId });
  const topics = fleetTopics(config.broker.topicPrefix);
  const stops: (() => Promise<unknown>)[] = [];
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      for (const s of stops.reverse()) await s().catch((err: unknown) => log.warn({ err, code: 'INTERNAL' }, 'hub part did not stop cleanly'));
    })());
  try {
    const pool = new pg.Pool({ connectionString: config.database.url, max: config.database.poolSize });
    // A dropped idle connection must not crash the process; the pool makes a new one.
    pool.on('error', (err) => log.warn({ err, code: 'STORE_FAILED' }, 'database connection lost'));
    stops.push(() => pool.end());
    await migrate(pool);
    const registry = createRegistryStore(pool);
    const outbox = createOutboxStore(pool);

    const timeout = config.spark.requestTimeoutMs;
    const connection = createSparkConnection({ timeoutsMs: { connect: timeout, headers: timeout, body: timeout }, maxResponseBytes, proxyUrl: config.spark.proxyUrl });
    stops.push(() => connection.close());
    const auth = { authUrl: config.spark.authUrl, clientId: config.spark.clientId, clientSecret: config.spark.clientSecret, clock: deps.clock, logger: deps.logger, connection };
    const spark: SparkClient = createSparkClient({ ...auth, baseUrl: config.spark.baseUrl });
    const forecast = createForecastClient({ ...auth, forecastUrl: config.spark.forecastUrl, tokens: spark.tokens });
    stops.push(() => spark.close(), () => forecast.close());

    const client = await mqtt.connectAsync(config.broker.url, {
      protocolVersion: 5,
      clientId: `wattshift-hub-${config.instanceId}`,
      // A clean session: a stopped instance must not keep a share of the gateways' messages
      // queued for itself. While no instance runs, gateways keep their reports and send again.
      clean: true,
      username: config.broker.username,
      password: config.broker.password,
      reconnectPeriod: 1000,
      ...(config.broker.ca ? { ca: readFileSync(config.broker.ca) } : {}),
    });
    client.on('error', (err) => log.warn({ err, code: 'MQTT_UNAVAILABLE' }, 'broker connection failed'));
    stops.push(() => client.endAsync());
    // A publish fails when the broker is not there, rather than waiting in the client's memory:
    // an event counts as published once this resolves, and one held in a queue that dies with the
    // process (or outlives the API's webhook call) would never reach its gateways. Failing, the
    // event's duty goes back, and the API's redelivery or the poll publishes it again.
    const publish: Publish = async (topic, payload, { retain }) => {
      if (!client.connected) throw new WattshiftError('MQTT_UNAVAILABLE', `fleet broker ${config.broker.url} not connected`);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new WattshiftError('MQTT_UNAVAILABLE', `no PUBACK from the fleet broker within ${publishTimeoutMs} ms`)), publishTimeoutMs);
      });
      try {
        await Promise.race([client.publishAsync(topic, payload, { qos: 1, retain }), late]);
      } finally {
        clearTimeout(timer);
      }
    };
    const sendReceipt = (gatewayId: string, receipt: FleetReceipt): Promise<void> => publish(topics.receipts(gatewayId), JSON.stringify(receipt), { retain: false });

    const fanout = createEventFanout({ registry, topics, publish, clock: deps.clock, logger: deps.logger });
    const worker: LoopHandle = startOutboxWorker(
      {
        instanceId: config.instanceId,
        leaseMs: config.outbox.leaseS * 1000,
        batch: config.outbox.batch,
        idleMs: config.outbox.idleS * 1000,
        retry: { baseMs: config.outbox.retryMinS * 1000, maxMs: config.outbox.retryMaxS * 1000 },
      },
      { outbox, spark, sendReceipt, clock: deps.clock, logger: deps.logger },
    );
    stops.push(() => worker.stop());
    const reports = createReportIntake({ registry, outbox, sendReceipt, onQueued: () => worker.wake(), clock: deps.clock, logger: deps.logger });

    // A gateway message is acknowledged at once and handled after: mqtt.js reads no further
    // packet (not even the PUBACKs of our own receipts) until it is acknowledged. Nothing is lost
    // by it: a gateway sends a report again until it has its receipt, and a sync until it has events.
    const prefix = `${config.broker.topicPrefix}/gw/`;
    const route = async (topic: string, payload: Buffer): Promise<void> => {
      const [gatewayId, kind, ...rest] = topic.startsWith(prefix) ? topic.slice(prefix.length).split('/') : [];
      if (gatewayId && kind === 'reports' && rest.length === 0) {
        await reports.accept(gatewayId, payload);
      } else if (gatewayId && kind === 'sync' && rest.length === 0) {
        const parsed = fleetSyncSchema.safeParse(parseJson(payload));
        if (!parsed.success) return void log.warn({ code: 'FLEET_MESSAGE_INVALID', gatewayId }, 'sync request dropped: not a fleet sync');
        await fanout.sync(gatewayId);
      } else {
        log.warn({ code: 'FLEET_MESSAGE_INVALID', topic }, 'message on an unexpected topic dropped');
      }
    };
    client.on('message', (topic, payload) => {
      route(topic, payload).catch((err: unknown) => log.error({ err, code: isWattshiftError(err) ? err.code : 'STORE_FAILED', topic }, 'gateway message not handled'));
    });
    await client.subscribeAsync([topics.sharedReports(config.broker.sharedGroup), topics.sharedSync(config.broker.sharedGroup)], { qos: 1 });

    const health = createHubHealth({ pool, brokerConnected: () => client.connected, logger: log });
    // Every six hours (UTC) and at start, as a gateway's own outbox does: a report stuck near its
    // month-end deadline is said in the log, not only on /healthz.
    const deadlineCheck = startCronJob({
      name: 'report-deadline', spec: deadlineCheckCron, clock: deps.clock, logger: log,
      run: async () => {
        const { outbox: o } = await health();
        if (o?.deadlineNear) {
          log.warn({ code: 'REPORT_DEADLINE_NEAR', pending: o.pending, nearestDeadline: o.nearestDeadline }, 'a report the hub has not uploaded yet is close to (or past) its month-end deadline');
        }
      },
    });
    deadlineCheck.wake();
    stops.push(() => deadlineCheck.stop());
    const prune = startCronJob({
      name: 'hub-retention', spec: { cron: config.retention.cron, timezone: 'UTC' }, clock: deps.clock, logger: log,
      run: async () => {
        try {
          const deleted = await pruneHub(pool, config.retention.keepDays);
          log.info({ ...deleted, keepDays: config.retention.keepDays }, 'old settled reports and ended events deleted');
        } catch (err) {
          log.warn({ err, code: 'STORE_FAILED' }, 'deleting old rows failed; tried again at the next run');
        }
      },
    });
    stops.push(() => prune.stop());
    const webhook: WebhookEndpoint = await startWebhookEndpoint(config.webhook, { fanout, health, logger: deps.logger });
    stops.push(() => webhook.close());

    const known = new Set(await registry.recentEventIds(knownEventsKept));
    const pollEvents = async (signal?: AbortSignal): Promise<number> => {
      if (known.size > knownEventsKept * 2) {
        known.clear();
        for (const id of await registry.recentEventIds(knownEventsKept)) known.add(id);
      }
      let stored = 0;
      for await (const event of spark.iterateEvents({ isKnown: (id) => known.has(id), pageSize: pollPageSize, ...(signal ? { signal } : {}) })) {
        if ((await fanout.accept(event)).outcome === 'new') stored++;
        known.add(event.id);
      }
      return stored;
    };
    const poller = startLoop({
      name: 'hub-events-poll',
      clock: deps.clock,
      logger: log,
      errorDelayMs: 60_000,
      tick: async (signal) => {
        await pollEvents(signal);
        return config.events.pollIntervalS * 1000;
      },
    });
    stops.push(() => poller.stop());

    const advice = startAdvicePublisher({
      registry,
      forecast,
      topics,
      publish,
      spec: { cron: config.advice.cron, timezone: config.advice.timezone },
      query: { currency: config.advice.currency, segmentSize: config.advice.segmentSize },
      clock: deps.clock,
      logger: deps.logger,
    });
    stops.push(() => advice.stop());
    log.info({ webhook: webhook.url }, 'hub instance started');
    return { instanceId: config.instanceId, webhookUrl: webhook.url, registry, fanout, reports, advice, pollEvents: () => pollEvents(), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
