/** `wattshift sim`: the simulated devices an installer can run, reached by real clients. */
import { EventEmitter } from 'node:events';
import { connectAsync } from 'mqtt';
import { describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/dispatch.js';
import { systemClock } from '../src/clock.js';
import { startEmbeddedBroker } from '../src/demo/broker.js';
import { createModbusBus } from '../src/devices/modbus/bus.js';
import { readNumber } from '../src/devices/modbus/points.js';
import { loadProfile } from '../src/devices/modbus/profiles.js';
import { silentLogger } from '../src/log.js';

function startSim(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const signals = new EventEmitter();
  const done = runCli(['sim', ...args], { stdout: (l) => out.push(l), stderr: (l) => err.push(l), env: {}, signals: signals as never });
  const waitFor = async (re: RegExp): Promise<RegExpExecArray> => {
    for (let i = 0; i < 400; i++) {
      const hit = out.map((l) => re.exec(l)).find((m) => m !== null);
      if (hit) return hit;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`no line matching ${re}; out: ${out.join('\n')}; err: ${err.join('\n')}`);
  };
  return { out, err, done, waitFor, stop: () => signals.emit('SIGTERM') };
}

describe('wattshift sim', { timeout: 60_000 }, () => {
  it('tank: a Modbus TCP water heater that the wattshift-sim-tank profile reads, stopped by SIGTERM', async () => {
    const sim = startSim(['tank', '--port', '0']);
    const port = Number((await sim.waitFor(/listening on port (\d+)/))[1]);
    expect(sim.out.join('\n')).toContain('profile: wattshift-sim-tank');
    const bus = createModbusBus('sim', { type: 'tcp', host: '127.0.0.1', port, timeoutMs: 2000 }, { clock: systemClock, logger: silentLogger() });
    try {
      const temp = await readNumber(bus, 1, loadProfile('wattshift-sim-tank'), 'temperatureC', 0);
      expect(temp).toBeGreaterThan(5);
      expect(temp).toBeLessThan(90);
    } finally {
      await bus.close();
    }
    sim.stop();
    expect(await sim.done).toBe(0);
  });

  /** Runs an MQTT simulator against an embedded broker; resolves with the messages seen once `until` holds. */
  async function mqttSim(args: string[], prefix: string, printed: RegExp, until: (seen: Map<string, string>) => boolean): Promise<Map<string, string>> {
    const broker = await startEmbeddedBroker();
    const client = await connectAsync(broker.url);
    try {
      const seen = new Map<string, string>();
      client.on('message', (topic, payload) => seen.set(topic, payload.toString()));
      await client.subscribeAsync(`${prefix}/#`);
      const sim = startSim([...args, '--mqtt', broker.url, '--prefix', prefix]);
      await sim.waitFor(printed);
      for (let i = 0; i < 200 && !until(seen); i++) await new Promise((r) => setTimeout(r, 25));
      sim.stop();
      expect(await sim.done).toBe(0);
      return seen;
    } finally {
      await client.endAsync();
      await broker.close();
    }
  }

  it('goe: publishes a charger with a car plugged in on the broker', async () => {
    const seen = await mqttSim(['goe', '--speed', '60'], 'go-eCharger/try1', /charger: \{ type: goe, topicPrefix: go-eCharger\/try1 \}/, (m) => m.has('go-eCharger/try1/car'));
    expect(seen.has('go-eCharger/try1/car')).toBe(true);
    expect(seen.get('go-eCharger/try1/car')).not.toBe('1');
  });

  it('shelly: publishes a relay with the tank temperature add-on its printed config names', async () => {
    const printed = /switch: \{ type: shelly, topicPrefix: shelly-try, switchId: 0, temperatureSensorId: 100 \}/;
    const seen = await mqttSim(['shelly'], 'shelly-try', printed, (m) => m.has('shelly-try/status/temperature:100'));
    expect(seen.has('shelly-try/status/switch:0')).toBe(true);
    expect(seen.has('shelly-try/status/temperature:100')).toBe(true);
  });

  it('an unknown device or a bad option is a usage error', async () => {
    const bad = startSim(['boiler']);
    expect(await bad.done).toBe(2);
    expect(bad.err.join('\n')).toContain('usage: wattshift sim tank|goe|shelly');
    const speed = startSim(['tank', '--speed', '0']);
    expect(await speed.done).toBe(2);
    expect(speed.err.join('\n')).toContain('--speed 0 must be between 1 and 100000');
  });
});
