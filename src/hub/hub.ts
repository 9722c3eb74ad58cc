/**
 * `wattshift hub`: one instance of the partner-side service. Any number run side by side on one
 * PostgreSQL database and one broker: reports and sync requests are shared among them by an MQTT 5
 * shared subscription, outbox rows by row locks, events by their id. Its parts are modules with
 * the daemon's lifecycle (src/lifecycle.ts): started in order, stopped in reverse.
 */
import { readFileSync } from 'node:fs';
import mqtt, { type MqttClient } from 'mqtt';
import pg from 'pg';
import { fleetMaxPacketBytes, fleetTopics, type FleetReceipt } from '../fleet/wire.js';
import { moduleOf, runModules, type Module } from '../lifecycle.js';
import { startCronJob } from '../timing/cron.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import { createSparkClient } from '../spark/client.js';
import { createSparkConnection } from '../spark/connection.js';
import { createForecastClient } from '../spark/forecast-client.js';
import { WattshiftError } from '../errors.js';
import { startAdvicePublisher, type AdvicePublisher } from './advice-publisher.js';
import type { HubConfig } from './config.js';
import { startDeadlineCheck } from './deadline-check.js';
import { createEventFanout, type EventFanout, type Publish } from './event-fanout.js';
import { createEventPoll } from './event-poll.js';
import { subscribeGatewayMessages } from './gateway-messages.js';
import { createHubHealth } from './health.js';
import { migrate } from './migrations.js';
import { createOutboxStore } from './outbox-store.js';
import { startOutboxWorker } from './outbox-worker.js';
import { createRegistryStore, type RegistryStore } from './registry-store.js';
import { createReportIntake, type ReportIntake } from './report-intake.js';
import { pruneHub } from './retention.js';
import { hubShareGroup } from './share-group.js';
import { startWebhookEndpoint, type WebhookEndpoint } from './webhook-endpoint.js';
import { brokerUrlOptions } from '../devices/mqtt/transport.js';

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

/**
 * The largest API answer the hub reads. An event lists every home it targets (about 60 B each):
 * one price curve for 10,000 homes is 600 kB, so a page of such events is far above the daemon's
 * 2 MiB. Pages are kept small for the same reason (src/hub/event-poll.ts).
 */
const maxResponseBytes = 64 * 1024 * 1024;
/** Longest wait for the broker's PUBACK of one publish (real time: the API's webhook call waits on it). */
const publishTimeoutMs = 10_000;

export async function startHub(config: HubConfig, deps: { clock: Clock; logger: Logger }): Promise<Hub> {
  const log = deps.logger.child({ component: 'hub', instanceId: config.instanceId });
  const topics = fleetTopics(config.broker.topicPrefix);
  // Made here, connecting only when used: the modules below start and stop them.
  const pool = new pg.Pool({ connectionString: config.database.url, max: config.database.poolSize });
  // A dropped idle connection must not crash the process; the pool makes a new one.
  pool.on('error', (err) => log.warn({ err, code: 'STORE_FAILED' }, 'database connection lost'));
  const registry = createRegistryStore(pool);
  const outbox = createOutboxStore(pool);
  const timeout = config.spark.requestTimeoutMs;
  const connection = createSparkConnection({
    timeoutsMs: { connect: timeout, headers: timeout, body: timeout },
    maxResponseBytes,
    proxyUrl: config.spark.proxyUrl,
  });
  const auth = {
    authUrl: config.spark.authUrl,
    clientId: config.spark.clientId,
    clientSecret: config.spark.clientSecret,
    clock: deps.clock,
    logger: deps.logger,
    connection,
  };
  const spark = createSparkClient({ ...auth, baseUrl: config.spark.baseUrl });
  const forecast = createForecastClient({ ...auth, forecastUrl: config.spark.forecastUrl, tokens: spark.tokens });

  let client: MqttClient | undefined;
  const broker = (): MqttClient => {
    if (!client) throw new WattshiftError('INTERNAL', 'broker used before the hub started');
    return client;
  };
  // A publish fails when the broker is not there, rather than waiting in the client's memory:
  // an event counts as published once this resolves, and one held in a queue that dies with the
  // process (or outlives the API's webhook call) would never reach its gateways. Failing, the
  // event's duty goes back, and the API's redelivery or the poll publishes it again.
  const publish: Publish = async (topic, payload, { retain }) => {
    const c = broker();
    if (!c.connected) throw new WattshiftError('MQTT_UNAVAILABLE', `fleet broker ${config.broker.url} not connected`);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new WattshiftError('MQTT_UNAVAILABLE', `no PUBACK from the fleet broker within ${publishTimeoutMs} ms`)),
        publishTimeoutMs,
      );
    });
    try {
      await Promise.race([c.publishAsync(topic, payload, { qos: 1, retain }), late]);
    } finally {
      clearTimeout(timer);
    }
  };
  const sendReceipt = (gatewayId: string, receipt: FleetReceipt): Promise<void> =>
    publish(topics.receipts(gatewayId), JSON.stringify(receipt), { retain: false });
  const fanout = createEventFanout({ registry, topics, publish, clock: deps.clock, logger: deps.logger });
  let wakeWorker = (): void => undefined;
  const reports = createReportIntake({ registry, outbox, sendReceipt, onQueued: () => wakeWorker(), clock: deps.clock, logger: deps.logger });
  const poll = createEventPoll({ registry, spark, fanout, clock: deps.clock, logger: log });
  const health = createHubHealth({
    databaseUrl: config.database.url,
    brokerConnected: () => client?.connected === true,
    eventPoll: () => poll.status(),
    logger: log,
  });
  let webhook: WebhookEndpoint | undefined;
  let advice: AdvicePublisher | undefined;

  const modules: Module[] = [
    // Nothing to start (a client connects on its first request); first, so that whatever fails
    // after, its stop closes the clients.
    {
      name: 'api',
      start: async () => undefined,
      async stop() {
        // The clients before the connection they share.
        await forecast.close();
        await spark.close();
        await connection.close();
      },
    },
    { name: 'database', start: async () => void (await migrate(pool)), stop: () => pool.end() },
    {
      name: 'broker',
      start: async () => {
        client = await mqtt.connectAsync({
          ...brokerUrlOptions(config.broker.url),
          protocolVersion: 5,
          clientId: `wattshift-hub-${config.instanceId}`,
          // A clean session: a stopped instance must not keep a share of the gateways' messages
          // queued for itself. While no instance runs, gateways keep their reports and send again.
          clean: true,
          username: config.broker.username,
          password: config.broker.password,
          // The broker sends no larger packet (MQTT 5 Maximum Packet Size): a gateway's oversized
          // message on its report topic is dropped there, never read into the hub's memory.
          properties: { maximumPacketSize: fleetMaxPacketBytes },
          reconnectPeriod: 1000,
          ...(config.broker.ca ? { ca: readFileSync(config.broker.ca) } : {}),
        });
        client.on('error', (err) => log.warn({ err, code: 'MQTT_UNAVAILABLE' }, 'broker connection failed'));
      },
      stop: async () => void (await client?.endAsync()),
    },
    moduleOf('outbox-worker', () => {
      const worker = startOutboxWorker(
        {
          instanceId: config.instanceId,
          leaseMs: config.outbox.leaseS * 1000,
          batch: config.outbox.batch,
          idleMs: config.outbox.idleS * 1000,
          retry: { baseMs: config.outbox.retryMinS * 1000, maxMs: config.outbox.retryMaxS * 1000 },
        },
        { outbox, spark, sendReceipt, clock: deps.clock, logger: deps.logger },
      );
      wakeWorker = () => worker.wake();
      return worker;
    }),
    moduleOf('gateway-messages', async () => {
      const { topicPrefix, sharedGroup, password } = config.broker;
      await subscribeGatewayMessages(
        broker(),
        { topicPrefix, sharedGroup: hubShareGroup(sharedGroup, password), topics },
        { reports, fanout, logger: log },
      );
      return null;
    }),
    moduleOf('health', () => health),
    moduleOf('report-deadline', () => startDeadlineCheck({ pool, clock: deps.clock, logger: log })),
    moduleOf('retention', () =>
      startCronJob({
        name: 'hub-retention',
        spec: { cron: config.retention.cron, timezone: 'UTC' },
        clock: deps.clock,
        logger: log,
        run: async () => {
          try {
            const deleted = await pruneHub(pool, config.retention.keepDays);
            log.info({ ...deleted, keepDays: config.retention.keepDays }, 'old settled reports and ended events deleted');
          } catch (err) {
            log.warn({ err, code: 'STORE_FAILED' }, 'deleting old rows failed; tried again at the next run');
          }
        },
      }),
    ),
    moduleOf('webhook', async () => {
      const endpoint = await startWebhookEndpoint(config.webhook, { fanout, health: health.check, logger: deps.logger });
      webhook = endpoint;
      return { stop: () => endpoint.close() };
    }),
    moduleOf('events-poll', () => poll.start(config.events.pollIntervalS * 1000)),
    moduleOf('advice', () => {
      advice = startAdvicePublisher({
        registry,
        forecast,
        topics,
        publish,
        spec: { cron: config.advice.cron, timezone: config.advice.timezone },
        query: { currency: config.advice.currency, segmentSize: config.advice.segmentSize },
        clock: deps.clock,
        logger: deps.logger,
      });
      return advice;
    }),
  ];
  const runner = runModules(modules, { logger: log });
  await runner.start();
  // Both set by their modules: every module has started.
  const started = { webhook: webhook!, advice: advice! };
  log.info({ webhook: started.webhook.url }, 'hub instance started');
  let stopped: Promise<void> | undefined;
  return {
    instanceId: config.instanceId,
    webhookUrl: started.webhook.url,
    registry,
    fanout,
    reports,
    advice: started.advice,
    pollEvents: () => poll.pollEvents(),
    stop: () => (stopped ??= runner.stop()),
  };
}
