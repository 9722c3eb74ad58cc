/**
 * The broker's view of the fleet, for Mosquitto: its password file (PBKDF2-SHA512 hashes in the
 * `$7$` form `mosquitto_passwd` writes) and its ACL file, made from the hub registry. A gateway
 * may read only its own locations' event topics, its price areas' advice and its own receipts,
 * and write only its own report and sync topics. A revoked gateway is left out of both files:
 * after the broker reloads them (SIGHUP) it can neither log in nor publish. The broker config
 * that uses them is `mosquittoConf` (broker-conf.ts).
 */
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { fleetTopics } from '../fleet/wire.js';
import type { GatewayRow, LocationRow } from './registry-store.js';

const iterations = 1000;

/** A Mosquitto 2 password-file hash of `password`. */
export function mosquittoPasswordHash(password: string, salt: Buffer = randomBytes(12)): string {
  const hash = pbkdf2Sync(password, salt, iterations, 64, 'sha512');
  return `$7$${iterations}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export interface BrokerFiles {
  passwd: string;
  acl: string;
}

export function mosquittoFiles(input: {
  prefix: string;
  hub: { username: string; passwordHash: string };
  gateways: readonly GatewayRow[];
  locations: readonly LocationRow[];
}): BrokerFiles {
  const topics = fleetTopics(input.prefix);
  const passwd = [`${input.hub.username}:${input.hub.passwordHash}`];
  const acl = [`user ${input.hub.username}`, `topic readwrite ${input.prefix}/#`, ''];
  for (const g of input.gateways) {
    if (g.revoked || g.brokerPasswordHash === null) continue;
    // A name with a space, colon or line break would end its line early and change the files' meaning.
    if (!/^[A-Za-z0-9._@-]{1,128}$/.test(g.brokerUsername))
      throw new Error(`gateway ${g.gatewayId}: broker user name ${JSON.stringify(g.brokerUsername)} cannot go into Mosquitto's files`);
    const mine = input.locations.filter((l) => l.gatewayId === g.gatewayId);
    const areas = [...new Set([...mine.map((l) => l.priceArea), ...(g.priceArea ? [g.priceArea] : [])])].sort();
    passwd.push(`${g.brokerUsername}:${g.brokerPasswordHash}`);
    acl.push(
      `user ${g.brokerUsername}`,
      ...mine.map((l) => `topic read ${topics.events(l.locationId)}`),
      ...areas.map((a) => `topic read ${topics.advice(a)}`),
      `topic read ${topics.receipts(g.gatewayId)}`,
      `topic write ${topics.reports(g.gatewayId)}`,
      `topic write ${topics.sync(g.gatewayId)}`,
      '',
    );
  }
  return { passwd: `${passwd.join('\n')}\n`, acl: `${acl.join('\n')}\n` };
}
