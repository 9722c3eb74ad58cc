/**
 * A swarm of light fleet gateways for `bench:fleet`, run as a child process (forked with IPC):
 * one mqtt.js MQTT 5 client per gateway, with the gateway's own broker login, a persistent session
 * like a real gateway's, subscribed QoS 1 to its location's events and its area's advice. It notes
 * when each event arrives (wall clock, sub-millisecond) and tells the parent on request.
 *
 *   parent → child  { type: 'start', brokerUrl, prefix, gateways }   child → parent { type: 'ready', connectMs }
 *   parent → child  { type: 'collect', eventId }                      child → parent { type: 'arrivals', eventId, atMs[] }
 *   parent → child  { type: 'stop' }                                  (the child ends its clients and exits)
 */
import mqtt, { type MqttClient } from 'mqtt';
import { fleetTopics } from '../../src/fleet/wire.js';

export interface SwarmGateway {
  gatewayId: string;
  username: string;
  password: string;
  locationId: string;
  priceArea: string;
}

export type SwarmRequest =
  { type: 'start'; brokerUrl: string; prefix: string; gateways: SwarmGateway[] } | { type: 'collect'; eventId: string } | { type: 'stop' };

export type SwarmReply =
  { type: 'ready'; connectMs: number } | { type: 'arrivals'; eventId: string; atMs: number[] } | { type: 'failed'; message: string };

const wallMs = (): number => performance.timeOrigin + performance.now();
/** Connections opened at once: Mosquitto hashes each password (PBKDF2), so a burst only queues. */
const connectConcurrency = 50;

const clients: MqttClient[] = [];
/** Arrival times of each event id, one per gateway that got it. */
const arrivals = new Map<string, number[]>();
const send = (reply: SwarmReply): void => void process.send?.(reply);

async function start(request: Extract<SwarmRequest, { type: 'start' }>): Promise<void> {
  const topics = fleetTopics(request.prefix);
  const started = wallMs();
  let next = 0;
  const connectOne = async (g: SwarmGateway): Promise<void> => {
    const client = await mqtt.connectAsync(request.brokerUrl, {
      protocolVersion: 5,
      clientId: `wattshift-gw-${g.gatewayId}`,
      clean: false,
      properties: { sessionExpiryInterval: 3600 },
      username: g.username,
      password: g.password,
      reconnectPeriod: 0,
      connectTimeout: 60_000,
      keepalive: 300,
    });
    client.on('message', (_topic, payload) => {
      const at = wallMs();
      // The event id is all the benchmark needs; a full parse is the daemon's job.
      const match = /"event":\{"id":"([^"]+)"/.exec(payload.toString('utf8'));
      if (!match?.[1]) return;
      const list = arrivals.get(match[1]) ?? [];
      list.push(at);
      arrivals.set(match[1], list);
    });
    clients.push(client);
    await client.subscribeAsync([topics.events(g.locationId), topics.advice(g.priceArea)], { qos: 1 });
  };
  await Promise.all(
    Array.from({ length: connectConcurrency }, async () => {
      for (let i = next++; i < request.gateways.length; i = next++) await connectOne(request.gateways[i]!);
    }),
  );
  send({ type: 'ready', connectMs: wallMs() - started });
}

process.on('message', (message: SwarmRequest) => {
  if (message.type === 'start') {
    start(message).catch((err: unknown) => send({ type: 'failed', message: err instanceof Error ? err.message : String(err) }));
  } else if (message.type === 'collect') {
    send({ type: 'arrivals', eventId: message.eventId, atMs: arrivals.get(message.eventId) ?? [] });
  } else {
    void Promise.all(clients.map((c) => c.endAsync(true))).finally(() => process.exit(0));
  }
});
// The parent gone (killed, Ctrl-C): end with it rather than hold thousands of connections.
process.on('disconnect', () => process.exit(0));
