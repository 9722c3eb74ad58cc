/**
 * The broker set-up docs/fleet.md documents is the one the hub renders and the fleet tests run,
 * and the hub's shared-subscription group is one no gateway can name.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fleetTopics } from '../../src/fleet/wire.js';
import { mosquittoConf } from '../../src/hub/broker-conf.js';
import { hubShareGroup } from '../../src/hub/share-group.js';

describe('the fleet broker config', () => {
  it('docs/fleet.md shows exactly what mosquittoConf renders for its example', () => {
    const doc = readFileSync(new URL('../../docs/fleet.md', import.meta.url), 'utf8');
    const block = /```conf\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(block).toBeDefined();
    expect(block).toBe(
      mosquittoConf({
        gateways: { port: 8883, tls: { certfile: '/etc/mosquitto/certs/fleet.crt', keyfile: '/etc/mosquitto/certs/fleet.key' } },
        hub: { port: 1884, host: '10.0.0.2' },
        files: { passwd: '/etc/mosquitto/wattshift/passwd', acl: '/etc/mosquitto/wattshift/acl' },
        persistenceDir: '/var/lib/mosquitto',
      }),
    );
  });

  it("the hub's share group: the same for every instance, another for another password, a valid topic level", () => {
    const group = hubShareGroup('wattshift-hub', 'hub-pw');
    expect(group).toBe(hubShareGroup('wattshift-hub', 'hub-pw'));
    expect(group).not.toBe(hubShareGroup('wattshift-hub', 'other-pw'));
    expect(group).toMatch(/^wattshift-hub-[0-9a-f]{32}$/);
    expect(fleetTopics().sharedReports(hubShareGroup('g'.repeat(128), 'pw'))).toMatch(/^\$share\/g{95}-[0-9a-f]{32}\//);
  });
});
