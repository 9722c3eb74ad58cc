/**
 * A heat pump's SG Ready contacts on two Shelly relays over a real broker, built by the device
 * factory: a relay switched on closes its contact with `toggle_after` as the lease, so a lost
 * wattshift leaves both open (normal operation, "0:0").
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { buildDevice } from '../src/devices/factory.js';
import { silentLogger } from '../src/log.js';
import { createShellySim, type ShellySim } from '../src/sandbox/devices/shelly-sim.js';
import { useMqttDeviceWorld } from './helpers/aedes.js';

const t0 = Date.UTC(2026, 0, 15, 6);
const sig = (): AbortSignal => AbortSignal.timeout(5000);
const w = useMqttDeviceWorld(t0);

describe('heat pump contacts on two Shelly relays', () => {
  let relay1: ShellySim;
  let relay2: ShellySim;

  beforeEach(async () => {
    // Relays off at power-up: both contacts open.
    relay1 = createShellySim({ url: w.broker.url, topicPrefix: 'shelly-sg1', startMs: t0, initialOn: false, metered: false });
    relay2 = createShellySim({ url: w.broker.url, topicPrefix: 'shelly-sg2', startMs: t0, initialOn: false, metered: false });
    for (const s of [relay1, relay2]) {
      await s.start();
      w.cleanups.push(() => s.close());
    }
  });

  function pump(swapped = false) {
    const { config } = parseConfig({
      version: 1,
      site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 11 },
      spark: { clientId: 'c', clientSecret: 'client-secret-inline' },
      storage: { path: ':memory:' },
      mqtt: { url: w.broker.url },
      devices: [
        {
          id: 'hp',
          kind: 'heatPump',
          model: { volumeL: 200, electricKw: 0.5 },
          contacts: { relay1: { type: 'shelly', topicPrefix: 'shelly-sg1' }, relay2: { type: 'shelly', topicPrefix: 'shelly-sg2' }, swapped },
        },
      ],
    });
    const built = buildDevice(config.devices[0]!, {
      buses: new Map(),
      mqtt: w.connection,
      clock: w.clock,
      logger: silentLogger(),
      requestTimeoutMs: 2000,
    });
    w.cleanups.push(async () => built.close());
    return built.capabilities.sgReady!;
  }

  it('closes contact 1 alone for a lock and contact 2 alone for a boost, each with toggle_after as its lease', async () => {
    const sg = pump();
    expect(sg.deviceLease).toBe(true);
    await sg.setState('block', 600_000, sig());
    expect([relay1.output, relay2.output]).toEqual([true, false]);
    expect(relay1.toggleAtMs).toBe(t0 + 600_000);
    await sg.setState('boost', 600_000, sig());
    expect([relay1.output, relay2.output]).toEqual([false, true]);
    expect(relay2.toggleAtMs).toBe(t0 + 600_000);
    // Not renewed: the relay opens by itself, back to normal operation.
    await relay2.advance(600_000);
    expect([relay1.output, relay2.output]).toEqual([false, false]);
  });

  it("follows the manufacturer's numbering when the contacts are swapped", async () => {
    const sg = pump(true);
    await sg.setState('block', 600_000, sig());
    expect([relay1.output, relay2.output]).toEqual([false, true]);
  });
});
