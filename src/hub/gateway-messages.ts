/**
 * The gateways' messages to the hub (reports and sync requests), shared among instances by an MQTT 5
 * shared subscription. A message is acknowledged at once and handled after: mqtt.js reads no
 * further packet (not even the PUBACKs of our own receipts) until it is acknowledged. Nothing is
 * lost by it: a gateway sends a report again until it has its receipt, and a sync until it has events.
 */
import type { MqttClient } from 'mqtt';
import { fleetSyncSchema, type fleetTopics } from '../fleet/wire.js';
import { codeOf } from '../errors.js';
import type { Logger } from '../log.js';
import type { EventFanout } from './event-fanout.js';
import type { ReportIntake } from './report-intake.js';

const parseJson = (payload: Buffer): unknown => {
  try {
    return JSON.parse(payload.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
};

export async function subscribeGatewayMessages(
  client: MqttClient,
  options: { topicPrefix: string; sharedGroup: string; topics: ReturnType<typeof fleetTopics> },
  deps: { reports: ReportIntake; fanout: EventFanout; logger: Logger },
): Promise<void> {
  const log = deps.logger;
  const prefix = `${options.topicPrefix}/gw/`;
  const route = async (topic: string, payload: Buffer): Promise<void> => {
    const [gatewayId, kind, ...rest] = topic.startsWith(prefix) ? topic.slice(prefix.length).split('/') : [];
    if (gatewayId && kind === 'reports' && rest.length === 0) {
      await deps.reports.accept(gatewayId, payload);
    } else if (gatewayId && kind === 'sync' && rest.length === 0) {
      const parsed = fleetSyncSchema.safeParse(parseJson(payload));
      if (!parsed.success) return void log.warn({ code: 'FLEET_MESSAGE_INVALID', gatewayId }, 'sync request dropped: not a fleet sync');
      await deps.fanout.sync(gatewayId);
    } else {
      log.warn({ code: 'FLEET_MESSAGE_INVALID', topic }, 'message on an unexpected topic dropped');
    }
  };
  client.on('message', (topic, payload) => {
    route(topic, payload).catch((err: unknown) => log.error({ err, code: codeOf(err, 'STORE_FAILED'), topic }, 'gateway message not handled'));
  });
  await client.subscribeAsync([options.topics.sharedReports(options.sharedGroup), options.topics.sharedSync(options.sharedGroup)], { qos: 1 });
}
