/**
 * The name under which hub instances share the gateways' reports and sync requests. The broker
 * lets any client join a shared subscription, and a member that may not read a message drops it
 * for the whole group (see broker-conf.ts): a gateway that joined the group would take reports
 * away from the hub. The name is the configured group with a suffix derived from the hub's broker
 * password, which every instance has and no gateway does; a gateway can then only make a group of
 * its own, which gets nothing it may not read.
 */
import { createHmac } from 'node:crypto';

export function hubShareGroup(configured: string, hubBrokerPassword: string): string {
  const secret = createHmac('sha256', hubBrokerPassword).update(`wattshift fleet share group ${configured}`).digest('hex').slice(0, 32);
  return `${configured.slice(0, 95)}-${secret}`;
}
