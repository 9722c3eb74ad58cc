/**
 * The TeslaMate-style SoC logger against a real in-process broker: `battery_level` (whole percent,
 * rounded down) and `plugged_in` are retained and published when they change; after losing the
 * broker it tells its state again, and a subscriber that comes late gets the retained values.
 */
import mqtt from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { EvBattery } from '../src/sandbox/devices/ev-battery.js';
import { createTeslaMateSim, type TeslaMateSim } from '../src/sandbox/devices/teslamate-sim.js';
import { eventually, startAedes, type TestBroker } from './helpers/aedes.js';
import { startTcpRelay } from './helpers/ocpp-world.js';

interface Heard {
  topic: string;
  payload: string;
  retain: boolean;
}

let broker: TestBroker;
const cleanups: (() => Promise<unknown>)[] = [];
beforeEach(async () => {
  broker = await startAedes();
});
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
  await broker.close();
});

/** A plain subscriber to car 1's topics; `of(key)` is what it heard on one of them, in order. */
async function listen(url = broker.url) {
  const client = await mqtt.connectAsync(url, { clientId: `listener-${Math.random().toString(16).slice(2, 8)}`, reconnectPeriod: 0 });
  cleanups.push(() => client.endAsync(true));
  const heard: Heard[] = [];
  client.on('message', (topic, payload, packet) => heard.push({ topic, payload: payload.toString(), retain: packet.retain }));
  await client.subscribeAsync('teslamate/cars/1/#', { qos: 1 });
  return {
    heard,
    of: (key: 'battery_level' | 'plugged_in') => heard.filter((h) => h.topic === `teslamate/cars/1/${key}`).map((h) => h.payload),
  };
}

/** A car of 100 kWh charged at efficiency 1: one kWh is one percent. */
function car(socPct: number): EvBattery {
  return new EvBattery({ capacityKwh: 100, socPct, efficiency: 1 });
}

async function logger(battery: EvBattery, pluggedIn: () => boolean, url = broker.url): Promise<TeslaMateSim> {
  const sim = createTeslaMateSim({ url, carId: 1, battery, pluggedIn });
  cleanups.push(() => sim.close());
  await sim.start();
  return sim;
}

describe('TeslaMate SoC logger', () => {
  it('keeps the SoC in whole percent, rounded down, and whether the car is plugged in, retained for late subscribers', async () => {
    const sim = await logger(car(57.9), () => true);
    expect(sim.topic('battery_level')).toBe('teslamate/cars/1/battery_level');

    const late = await listen();
    await eventually(() => expect(late.heard).toHaveLength(2));
    expect(late.heard).toEqual(
      expect.arrayContaining([
        { topic: 'teslamate/cars/1/battery_level', payload: '57', retain: true },
        { topic: 'teslamate/cars/1/plugged_in', payload: 'true', retain: true },
      ]),
    );
  });

  it('publishes only when the whole percent (or the plug) changes', async () => {
    const live = await listen();
    const battery = car(40);
    let plugged = true;
    const sim = await logger(battery, () => plugged);

    battery.charge(0.9); // 40.9 %: still 40
    await sim.update();
    battery.charge(0.3); // 41.2 %
    await sim.update();
    await sim.update();
    battery.drive(0.7); // 40.5 %: down is a change too
    await sim.update();
    battery.charge(0.2); // 40.7 %: still 40
    await sim.update();
    plugged = false;
    await sim.update();

    // The logger publishes in order on one connection: once the unplug is heard, all before it was.
    await eventually(() => expect(live.of('plugged_in')).toEqual(['true', 'false']));
    expect(live.of('battery_level')).toEqual(['40', '41', '40']);

    const late = await listen();
    await eventually(() => expect(late.heard).toHaveLength(2));
    expect(late.heard).toEqual(
      expect.arrayContaining([
        { topic: 'teslamate/cars/1/battery_level', payload: '40', retain: true },
        { topic: 'teslamate/cars/1/plugged_in', payload: 'false', retain: true },
      ]),
    );
  });

  it('follows a clock, publishing what changed at each step until stopped', async () => {
    const live = await listen();
    const battery = car(70);
    const sim = await logger(battery, () => true);
    const clock = new ManualClock(Date.UTC(2026, 0, 12));
    const stop = new AbortController();
    const running = sim.run(clock, 60_000, stop.signal);

    battery.drive(1.5);
    await clock.advance(60_000);
    await eventually(() => expect(live.of('battery_level')).toEqual(['70', '68']));
    battery.drive(1);
    await clock.advance(60_000);
    await eventually(() => expect(live.of('battery_level')).toEqual(['70', '68', '67']));

    stop.abort();
    await running;
  });

  it('tells its state again after its connection drops, though nothing changed', async () => {
    const relay = await startTcpRelay(broker.port);
    cleanups.push(() => relay.close());
    const live = await listen();
    await logger(car(57.9), () => true, `mqtt://127.0.0.1:${relay.port}`);
    await eventually(() => expect(live.of('plugged_in')).toEqual(['true']));

    relay.cut();
    relay.restore();
    await eventually(() => expect(live.of('plugged_in')).toEqual(['true', 'true']));
    expect(live.of('battery_level')).toEqual(['57', '57']);
  });

  it('after a broker restart that lost the retained values, publishes them again, with what changed meanwhile', async () => {
    const battery = car(57.9);
    const sim = await logger(battery, () => true);

    await broker.stop();
    battery.charge(3.5); // 61.4 %; the plug stays as it was
    await sim.update(); // nobody to tell
    await broker.start();

    const first = await listen();
    await eventually(() => expect(first.of('battery_level')).toContain('61'));
    await eventually(() => expect(first.of('plugged_in')).toContain('true'));
    const late = await listen();
    await eventually(() => expect(late.heard).toHaveLength(2));
    expect(late.heard).toEqual(
      expect.arrayContaining([
        { topic: 'teslamate/cars/1/battery_level', payload: '61', retain: true },
        { topic: 'teslamate/cars/1/plugged_in', payload: 'true', retain: true },
      ]),
    );
  });
});
