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
import { createSunSpecInverter } from '../src/devices/modbus/sunspec.js';
import { silentLogger } from '../src/log.js';
import { createCentralSystem } from '../src/devices/ocpp/central-system.js';

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
    // The tank's own figures, so the plan's model matches the simulated water.
    expect(sim.out.join('\n')).toContain('  model: { volumeL: 200, elementKw: 2, coldWaterC: 8, ambientC: 20, lossWPerK: 1.6, maxC: 75 }');
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

  it('heatpump: an SG Ready heat pump behind two Modbus relays that the wattshift-sim-heat-pump profile reads', async () => {
    const sim = startSim(['heatpump', '--port', '0']);
    const port = Number((await sim.waitFor(/listening on port (\d+)/))[1]);
    expect(sim.out.join('\n')).toMatch(/relay2: \{ type: modbus, bus: hp, unitId: 1, profile: wattshift-sim-heat-pump, channel: 1 \}/);
    const bus = createModbusBus('hp', { type: 'tcp', host: '127.0.0.1', port, timeoutMs: 2000 }, { clock: systemClock, logger: silentLogger() });
    try {
      const profile = loadProfile('wattshift-sim-heat-pump');
      expect(await readNumber(bus, 1, profile, 'temperatureC', 0)).toBeGreaterThan(30);
      expect(await readNumber(bus, 1, profile, 'relayLeaseS', 1)).toBe(0);
    } finally {
      await bus.close();
    }
    sim.stop();
    expect(await sim.done).toBe(0);
  });

  it('solar: a SunSpec PV inverter on Modbus TCP that a solar device finds and reads', async () => {
    const sim = startSim(['solar', '--port', '0']);
    const port = Number((await sim.waitFor(/listening on port (\d+)/))[1]);
    expect(sim.out.join('\n')).toContain('kind: solar, source: { type: sunspec, bus: pv, unitId: 1 }');
    const bus = createModbusBus('pv', { type: 'tcp', host: '127.0.0.1', port, timeoutMs: 2000 }, { clock: systemClock, logger: silentLogger() });
    try {
      const inverter = createSunSpecInverter(bus, 1);
      const r = await inverter.read();
      expect(inverter.info()).toMatchObject({ baseAddress: 40000, modelId: 103 });
      expect(r.energyKwh).toBeGreaterThanOrEqual(0);
      expect(r.powerW).toBeLessThanOrEqual(6000);
    } finally {
      await bus.close();
    }
    sim.stop();
    expect(await sim.done).toBe(0);
  });

  /** Runs an MQTT simulator against an embedded broker; resolves with the messages seen once `until` holds. */
  async function mqttSim(
    args: string[],
    prefix: string,
    printed: RegExp | RegExp[],
    until: (seen: Map<string, string>) => boolean,
    subscription = `${prefix}/#`,
  ): Promise<Map<string, string>> {
    const broker = await startEmbeddedBroker();
    const client = await connectAsync(broker.url);
    try {
      const seen = new Map<string, string>();
      client.on('message', (topic, payload) => seen.set(topic, payload.toString()));
      await client.subscribeAsync(subscription);
      const sim = startSim([...args, '--mqtt', broker.url, '--prefix', prefix]);
      for (const line of [printed].flat()) await sim.waitFor(line);
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
    const seen = await mqttSim(
      ['goe', '--speed', '60'],
      'go-eCharger/try1',
      [/charger: \{ type: goe, topicPrefix: go-eCharger\/try1 \}/, /^ {2}# no meter line: the charger's own energy counter \(eto\) meters it$/],
      (m) => m.has('go-eCharger/try1/car'),
    );
    expect(seen.has('go-eCharger/try1/car')).toBe(true);
    expect(seen.get('go-eCharger/try1/car')).not.toBe('1');
  });

  it('shelly: publishes a relay with the tank temperature add-on its printed config names', async () => {
    const printed = /switch: \{ type: shelly, topicPrefix: shelly-try, switchId: 0, temperatureSensorId: 100 \}/;
    const seen = await mqttSim(['shelly'], 'shelly-try', printed, (m) => m.has('shelly-try/status/temperature:100'));
    expect(seen.has('shelly-try/status/switch:0')).toBe(true);
    expect(seen.has('shelly-try/status/temperature:100')).toBe(true);
  });

  it('tasmota: sends its last will and telemetry under the topic its printed config names', async () => {
    const seen = await mqttSim(
      ['tasmota', '--speed', '60'],
      'tas-try',
      /switch: \{ type: tasmota, topic: tas-try \}/,
      (m) => m.has('tele/tas-try/SENSOR'),
      '+/tas-try/#',
    );
    expect(seen.get('tele/tas-try/LWT')).toBe('Online');
    const sensor = JSON.parse(seen.get('tele/tas-try/SENSOR')!) as { ENERGY: { Total: number }; DS18B20: { Temperature: number } };
    expect(sensor.ENERGY.Total).toBeGreaterThanOrEqual(0);
    expect(sensor.DS18B20.Temperature).toBeGreaterThan(5);
  });

  it("ams: publishes the HAN meter's lists with per-phase currents at the topic its printed config names", async () => {
    const seen = await mqttSim(['ams', '--speed', '60'], 'ams/try', /meter: \{ type: amsreader, topic: ams\/try \}/, (m) => m.has('ams/try'));
    const list = JSON.parse(seen.get('ams/try')!) as { data: Record<string, number> };
    expect(list.data['P']).toBeGreaterThan(0);
    expect([list.data['I1'], list.data['I2'], list.data['I3']].every((a) => typeof a === 'number')).toBe(true);
  });

  it('ams beside goe: the HAN meter counts the simulated car charging on the same broker', async () => {
    const broker = await startEmbeddedBroker();
    const client = await connectAsync(broker.url);
    const goe = startSim(['goe', '--speed', '60', '--mqtt', broker.url, '--prefix', 'go-eCharger/try2']);
    const ams = startSim(['ams', '--speed', '60', '--mqtt', broker.url, '--prefix', 'ams/try2']);
    try {
      await ams.waitFor(/^ {2}# its meter also counts the go-e chargers publishing under go-eCharger\/\+ on this broker \(wattshift sim goe\)$/);
      let list: Record<string, number> | undefined;
      client.on('message', (_topic, payload) => void (list = (JSON.parse(payload.toString()) as { data: Record<string, number> }).data));
      await client.subscribeAsync('ams/try2');
      // The car charges at 16 A on three lines: 11 kW on top of the house's 1.5 to 4.3 kW.
      const withCar = (l: Record<string, number> | undefined): boolean =>
        l !== undefined && l['P']! > 11_000 && [l['I1'], l['I2'], l['I3']].every((a) => a! >= 16);
      for (let i = 0; i < 400 && !withCar(list); i++) await new Promise((r) => setTimeout(r, 25));
      expect(list).toBeDefined();
      expect(withCar(list), JSON.stringify(list)).toBe(true);
    } finally {
      goe.stop();
      ams.stop();
      expect(await goe.done).toBe(0);
      expect(await ams.done).toBe(0);
      await client.endAsync();
      await broker.close();
    }
  });

  it('ocpp: a charge point with a car plugged in connects to the central system its printed config describes', async () => {
    const password = 'try-it-password-123';
    const cs = createCentralSystem({
      host: '127.0.0.1',
      port: 0,
      heartbeatIntervalS: 300,
      meterValueSampleIntervalS: 60,
      chargePoints: [{ id: 'cp-try', password }],
      clock: systemClock,
      logger: silentLogger(),
    });
    const port = await cs.listen();
    try {
      const statuses: string[] = [];
      cs.link('cp-try').subscribe((e) => {
        if (e.type === 'status' && e.connectorId === 1) statuses.push(e.status);
      });
      const sim = startSim(['ocpp', '--url', `ws://127.0.0.1:${port}/ocpp`, '--prefix', 'cp-try', '--password', password]);
      await sim.waitFor(/charger: \{ type: ocpp, chargePointId: cp-try, password: try-it-password-123 \}/);
      for (let i = 0; i < 200 && !statuses.includes('Preparing'); i++) await new Promise((r) => setTimeout(r, 25));
      expect(cs.link('cp-try').connected).toBe(true);
      expect(statuses).toContain('Preparing'); // plugged in, no session yet
      sim.stop();
      expect(await sim.done).toBe(0);
    } finally {
      await cs.close();
    }
  });

  it('an unknown device or a bad option is a usage error', async () => {
    const bad = startSim(['boiler']);
    expect(await bad.done).toBe(2);
    expect(bad.err.join('\n')).toContain('usage: wattshift sim tank|goe|shelly|tasmota|ams|ocpp');
    const speed = startSim(['tank', '--speed', '0']);
    expect(await speed.done).toBe(2);
    expect(speed.err.join('\n')).toContain('--speed 0 must be between 1 and 100000');
    const pw = startSim(['ocpp', '--password', 'short']);
    expect(await pw.done).toBe(2);
    expect(pw.err.join('\n')).toContain('--password must be 16 to 40 characters');
  });
});
