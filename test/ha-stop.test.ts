/**
 * A clean stop under load: each QoS 1 publish waits for its acknowledgement, so a stop queued
 * behind a whole view (or discovery) of them took seconds and missed the daemon's stop deadline.
 * The port here is our own interface, held by the test: each publish completes when released.
 */
import { describe, expect, it } from 'vitest';
import { createHaBridge } from '../src/ha/bridge.js';
import type { HaMqttPort } from '../src/ha/port.js';
import { haTopics } from '../src/ha/topics.js';
import { silentLogger } from '../src/log.js';
import { sampleView } from './fixtures/ha/sample-view.js';

/** A port whose publishes wait until the test releases them, one at a time. */
function heldPort() {
  const sent: { topic: string; payload: string }[] = [];
  const waiting: (() => void)[] = [];
  const port: HaMqttPort = {
    publish: (topic, payload) =>
      new Promise<void>((resolve) => {
        sent.push({ topic, payload });
        waiting.push(resolve);
      }),
    subscribe: async () => undefined,
  };
  /** Lets the bridge run until it waits again, then acknowledges what is in flight; false when nothing is. */
  async function ackNext(): Promise<boolean> {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    const ack = waiting.shift();
    ack?.();
    return ack !== undefined;
  }
  return { port, sent, ackNext };
}

describe('stopping the Home Assistant bridge', () => {
  for (const phase of ['discovery', 'state'] as const) {
    it(`publishes offline right after the message in flight, not after the rest of the ${phase}`, async () => {
      const { port, sent, ackNext } = heldPort();
      const t = haTopics('wattshift');
      const bridge = createHaBridge({
        port,
        baseTopic: 'wattshift',
        discovery: { enabled: true, prefix: 'homeassistant' },
        currency: 'NOK',
        swVersion: 't',
        logger: silentLogger(),
        getView: () => sampleView(),
        onCommand: async () => undefined,
        previousDeviceIds: ['tank', 'ev', 'main'],
      });
      const started = bridge.start();
      // Acknowledge until the bridge is inside the phase we stop in.
      const inPhase = (s: { topic: string }) =>
        phase === 'discovery' ? s.topic.startsWith('homeassistant/') : s.topic.startsWith('wattshift/') && s.topic !== t.availability;
      while (!sent.some(inPhase)) await ackNext();
      const before = sent.length;
      const stopped = bridge.stop();
      let done = false;
      void stopped.then(() => (done = true));
      while (!done && (await ackNext()));
      expect(done).toBe(true);
      const after = sent.slice(before);
      expect(after.at(-1)).toEqual({ topic: t.availability, payload: 'offline' });
      expect(after.length).toBeLessThanOrEqual(2); // at most the one in flight of the other queue, then offline
      while (await ackNext());
      await started;
    });
  }
});
