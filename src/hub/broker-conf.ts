/**
 * The fleet broker's Mosquitto 2 config, around the files of broker-auth.ts. docs/fleet.md shows
 * it and the fleet tests run it, so the documented set-up is the tested one.
 *
 * - Two listeners: the gateways', and the hub instances' on an address gateways cannot reach.
 * - On the gateways' listener the client id is the user name (`use_username_as_clientid`): a
 *   gateway cannot take another's id, disconnect it or end the session its events wait in.
 *   Hub instances share one user and keep their own ids on their listener.
 * - One password file and one ACL file for both (`per_listener_settings` stays false: with it,
 *   Mosquitto 2.0.12 and later queue nothing for an offline persistent session).
 * - No packet above the fleet wire's limit: Mosquitto disconnects a client that sends one.
 * - Queued messages kept for a home away for days, and across a broker restart.
 *
 * Mosquitto 2 does not check subscriptions against the ACL file; it checks each message it
 * delivers. A gateway may so subscribe to the hub's shared subscription, and a group member the
 * ACL denies a message drops that message for the whole group. The hub's group name therefore
 * carries a secret (src/hub/share-group.ts) that no gateway can know.
 */
import { fleetMaxPacketBytes } from '../fleet/wire.js';

export interface MosquittoLayout {
  /** Where gateways connect: a TLS listener in production (`tls` with the server's certificate and key). */
  gateways: { port: number; host?: string; tls?: { certfile: string; keyfile: string } };
  /** Where hub instances connect: an address on the hub's private network. */
  hub: { port: number; host: string };
  /** The paths of the files `wattshift hub broker-files` writes. */
  files: { passwd: string; acl: string };
  /** Directory of Mosquitto's persistence file; without it nothing survives a restart. */
  persistenceDir?: string;
  /** Queued QoS 1 messages per offline session (a week of events, advice and receipts). */
  maxQueuedMessages?: number;
}

export function mosquittoConf(layout: MosquittoLayout): string {
  const g = layout.gateways;
  return [
    '# The wattshift fleet broker (Mosquitto 2).',
    'per_listener_settings false',
    'allow_anonymous false',
    `password_file ${layout.files.passwd}`,
    `acl_file ${layout.files.acl}`,
    `max_packet_size ${fleetMaxPacketBytes}`,
    `max_queued_messages ${layout.maxQueuedMessages ?? 5000}`,
    ...(layout.persistenceDir ? ['persistence true', `persistence_location ${layout.persistenceDir.replace(/\/?$/, '/')}`] : ['persistence false']),
    '',
    '# Gateways: one user each, whose name is its client id.',
    `listener ${g.port}${g.host ? ` ${g.host}` : ''}`,
    'use_username_as_clientid true',
    ...(g.tls ? [`certfile ${g.tls.certfile}`, `keyfile ${g.tls.keyfile}`] : []),
    '',
    "# Hub instances only: an address on their private network, out of the gateways' reach.",
    `listener ${layout.hub.port} ${layout.hub.host}`,
    '',
  ].join('\n');
}
