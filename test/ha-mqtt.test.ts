import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import { createHaBridge } from '../src/ha/bridge.js';
import { discoveryMessages } from '../src/ha/discovery.js';
import type { DeviceCommand } from '../src/ha/commands.js';
import { mqttJsPort, sharedConnectionPort } from '../src/ha/port.js';
import { createMqttConnection } from '../src/devices/mqtt/connection.js';
import { createHaPublisher, haWill } from '../src/ha/publisher.js';
import { haTopics } from '../src/ha/topics.js';
import type { HomeView } from '../src/view/model.js';
import { WattshiftError } from '../src/errors.js';
import { silentLogger } from '../src/log.js';
import { checkDiscovery } from './fixtures/ha/discovery-check.js';
import { sampleView } from './fixtures/ha/sample-view.js';
import { client, recorder, retained, startBroker } from './helpers/ha-broker.js';
import type { TestBroker } from './helpers/ha-broker.js';

const base = 'wattshift';
const t = haTopics(base);

describe.each(['aedes', 'mosquitto'] as const)('Home Assistant MQTT layer on %s', (brokerName) => {
  let broker: TestBroker;
  const clients: MqttClient[] = [];

  beforeAll(async () => {
    broker = await startBroker(brokerName);
  });
  afterAll(async () => {
    await broker.close();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.endAsync(true).catch(() => undefined);
  });

  async function connect(options: Parameters<typeof client>[1] = {}): Promise<MqttClient> {
    const c = await client(broker.url, options);
    clients.push(c);
    return c;
  }

  /** A bridge on its own connection (with the will set), with a mutable view and a command log. */
  async function startBridge(
    opts: { previousDeviceIds?: string[]; reject?: boolean; updatesDuringStart?: number; onMessage?: (topic: string) => void } = {},
  ) {
    const daemon = await connect({ will: { ...haWill(base), payload: Buffer.from(haWill(base).payload) } });
    if (opts.onMessage) daemon.on('message', (topic) => opts.onMessage!(topic));
    let view: HomeView = sampleView();
    const commands: DeviceCommand[] = [];
    const saved: string[][] = [];
    const bridge = createHaBridge({
      port: mqttJsPort(daemon),
      baseTopic: base,
      discovery: { enabled: true, prefix: 'homeassistant' },
      currency: 'EUR',
      swVersion: '0.1.0-test',
      logger: silentLogger(),
      getView: () => view,
      onCommand: async (cmd) => {
        if (opts.reject) throw new WattshiftError('DEVICE_UNREACHABLE', 'charger does not answer');
        commands.push(cmd);
      },
      previousDeviceIds: opts.previousDeviceIds ?? [],
      saveDeviceIds: (ids) => void saved.push(ids),
    });
    await Promise.all([bridge.start(), ...Array.from({ length: opts.updatesDuringStart ?? 0 }, () => bridge.update())]);
    return { daemon, bridge, commands, saved, setView: (v: HomeView) => (view = v) };
  }

  it('publishes retained availability, state, plan, price, health and valid discovery', async () => {
    const { bridge } = await startBridge();
    const state = await retained(broker.url, `${base}/#`);
    expect(state.get(t.availability)).toBe('online');
    expect(JSON.parse(state.get(t.device('tank'))!)).toMatchObject({ temperature: 52.3, mode: 'auto', planned_on: false, energy: 1234.568 });
    expect(state.get(t.deviceField('tank', 'temperature'))).toBe('52.3');
    expect(state.get(t.deviceField('tank', 'next_start'))).toBe('2026-03-02T02:00:00.000Z');
    expect(state.get(t.deviceField('ev', 'planned_on'))).toBe('true');
    expect(state.get(t.deviceField('ev', 'departure'))).toBe('2026-03-02T07:00:00.000Z');
    expect(state.get(t.priceTotal)).toBe('1.2345');
    expect(state.get(t.priceDelta)).toBe('-0.25');
    const plan = JSON.parse(state.get(t.plan)!) as { slots: { start: string }[]; savings: number };
    expect(plan.slots).toHaveLength(48); // the current slot and the next 47 hours
    expect(plan.savings).toBeCloseTo(14.63, 2);
    expect(JSON.parse(state.get(t.health)!)).toMatchObject({ ok: true, outbox: { pending: 2 } });
    expect(state.has(t.deviceField('main', 'temperature'))).toBe(false);

    const configs = await retained(broker.url, 'homeassistant/#');
    expect(configs.size).toBeGreaterThan(20);
    const problems = [...configs].flatMap(([topic, payload]) => checkDiscovery(topic, JSON.parse(payload) as Record<string, unknown>));
    expect(problems).toEqual([]);
    await bridge.stop();
  });

  it('shows a heater block that no device timer would end (blockWithoutLease) as a problem sensor', async () => {
    const { bridge, setView } = await startBridge();
    const before = await retained(broker.url, `${base}/#`);
    expect(before.get(t.deviceField('tank', 'block_without_lease'))).toBe('false');
    expect(JSON.parse(before.get(t.device('tank'))!)).toMatchObject({ block_without_lease: false });
    expect(before.has(t.deviceField('ev', 'block_without_lease'))).toBe(false);
    const v = sampleView();
    v.devices[0]!.blockWithoutLease = true;
    setView(v);
    await bridge.update();
    const after = await retained(broker.url, `${base}/#`);
    expect(after.get(t.deviceField('tank', 'block_without_lease'))).toBe('true');
    expect(JSON.parse(after.get(t.device('tank'))!)).toMatchObject({ block_without_lease: true });
    const configs = [...(await retained(broker.url, 'homeassistant/#')).values()].map((p) => JSON.parse(p) as Record<string, unknown>);
    expect(configs.find((c) => c.state_topic === t.deviceField('tank', 'block_without_lease'))).toMatchObject({
      device_class: 'problem',
      entity_category: 'diagnostic',
      payload_on: 'true',
      payload_off: 'false',
    });
    await bridge.stop();
  });

  it('publishes on change only', async () => {
    const { bridge, setView } = await startBridge();
    const watcher = await connect();
    const rec = await recorder(watcher, `${base}/#`);
    await bridge.update(); // nothing changed
    const v = sampleView();
    v.devices[0]!.temperatureC = 52.31; // below display precision: no change
    setView(v);
    await bridge.update();
    const v2 = sampleView();
    v2.devices[0]!.temperatureC = 55;
    setView(v2);
    await bridge.update();
    await rec.next((m) => m.topic === t.deviceField('tank', 'temperature') && !m.retain);
    await new Promise((r) => setTimeout(r, 200)); // room for anything that should not come
    // Live deliveries only (retained replays to the new subscriber carry the retain flag).
    const live = rec.messages
      .filter((m) => !m.retain)
      .map((m) => m.topic)
      .sort();
    expect(live).toEqual([t.device('tank'), t.deviceField('tank', 'temperature')].sort());
  });

  it('announces a renamed device again, its entities only', async () => {
    const { bridge, setView } = await startBridge();
    const ha = await connect();
    const rec = await recorder(ha, 'homeassistant/+/+/+/config');
    await bridge.update(); // nothing changed: no discovery
    const v = sampleView();
    v.devices[0]!.name = 'Bathroom tank';
    setView(v);
    await bridge.update();
    const expected = discoveryMessages({
      baseTopic: base,
      prefix: 'homeassistant',
      location: v.location,
      devices: v.devices,
      currency: 'NOK',
      swVersion: '0.1.0-test',
    })
      .map((m) => m.topic)
      .filter((topic) => topic.includes(`/${v.devices[0]!.id}_`))
      .sort();
    const live = () => rec.messages.filter((m) => !m.retain);
    await rec.next(() => live().length >= expected.length);
    await new Promise((r) => setTimeout(r, 200)); // room for anything that should not come
    expect(
      live()
        .map((m) => m.topic)
        .sort(),
    ).toEqual(expected);
    expect(live().every((m) => (JSON.parse(m.payload) as { device: { name: string } }).device.name === 'Bathroom tank')).toBe(true);
  });

  it('round-trips commands: request/response with transaction, JSON set, scalar set, bare mode', async () => {
    const { commands } = await startBridge();
    const app = await connect();
    const rec = await recorder(app, `${base}/response/#`);
    await app.publishAsync(`${base}/request/ev/set`, JSON.stringify({ transaction: 'abc-1', departure: '2026-03-02T06:30:00Z', targetKwh: 25 }));
    const ok = await rec.next((m) => m.payload.includes('abc-1'));
    expect(ok.topic).toBe(t.response('ev'));
    expect(JSON.parse(ok.payload)).toEqual({ status: 'ok', data: { departure: '2026-03-02T06:30:00Z', targetKwh: 25 }, transaction: 'abc-1' });

    await app.publishAsync(t.set('tank'), JSON.stringify({ mode: 'boost', boostMinutes: 45 }));
    await app.publishAsync(t.setField('tank', 'floor'), '48.5');
    await app.publishAsync(t.set('ev'), 'off');
    await app.publishAsync(t.set('ev'), '{"mode":"boost"}'); // what the HA button sends
    await app.publishAsync(t.setField('ev', 'target_soc'), '90');
    await rec.next(() => rec.messages.length >= 6);
    expect(commands).toEqual([
      { deviceId: 'ev', departure: '2026-03-02T06:30:00Z', targetKwh: 25 },
      { deviceId: 'tank', mode: 'boost', boostMinutes: 45 },
      { deviceId: 'tank', floorC: 48.5 },
      { deviceId: 'ev', mode: 'off' },
      { deviceId: 'ev', mode: 'boost' },
      { deviceId: 'ev', targetSocPct: 90 },
    ]);
    expect(rec.messages.every((m) => JSON.parse(m.payload).status === 'ok')).toBe(true);
  });

  it('answers bad commands with an error and changes nothing', async () => {
    const { commands } = await startBridge();
    const app = await connect();
    const rec = await recorder(app, `${base}/response/#`);
    const bad: [string, string, RegExp][] = [
      [`${base}/request/ev/set`, '{"transaction":1,"targetSocPct":140}', /targetSocPct/],
      [`${base}/request/tank/set`, '{"transaction":2,"targetKwh":10}', /not supported by a hotWaterTank/],
      [`${base}/request/ghost/set`, '{"transaction":3,"mode":"off"}', /unknown device/],
      [`${base}/request/ev/set`, '{"transaction":4,"departure":"tomorrow"}', /departure/],
      [`${base}/request/ev/set`, '{"transaction":5,"mode":"turbo"}', /mode/],
      [`${base}/request/ev/set`, '{"transaction":6}', /sets nothing/],
      [`${base}/request/ev/set`, '{"transaction":7,"mode":"auto","extra":true}', /extra|Unrecognized/i],
      [`${base}/request/main/set`, '{"transaction":8,"mode":"off"}', /not supported by a meter/],
      [`${base}/request/tank/set`, '{"transaction":9,"mode":"off","boostMinutes":30}', /boostMinutes needs mode boost/],
    ];
    for (const [topic, payload] of bad) await app.publishAsync(topic, payload);
    await app.publishAsync(t.set('ev'), '{not json');
    await app.publishAsync(t.setField('tank', 'floor'), 'warm');
    await rec.next(() => rec.messages.length >= bad.length + 2);
    const responses = rec.messages.map(
      (m) => JSON.parse(m.payload) as { status: string; error: { code: string; message: string }; transaction?: number },
    );
    expect(responses.every((r) => r.status === 'error' && r.error.code === 'MQTT_COMMAND_INVALID')).toBe(true);
    for (const [i, [, , re]] of bad.entries()) {
      const r = responses.find((x) => x.transaction === i + 1);
      expect(r?.error.message, `transaction ${i + 1}`).toMatch(re);
    }
    expect(commands).toEqual([]);
  });

  it('answers a command to an unknown sub-topic, and takes modes in any case', async () => {
    const { commands } = await startBridge();
    const app = await connect();
    const rec = await recorder(app, `${base}/response/#`);
    await app.publishAsync(`${base}/ev/set/target_sco`, '80');
    const refused = JSON.parse((await rec.next(() => true)).payload) as { status: string; error: { code: string; message: string } };
    expect(refused).toMatchObject({ status: 'error', error: { code: 'MQTT_COMMAND_INVALID' } });
    expect(refused.error.message).toMatch(/^unknown command 'target_sco' \(did you mean "target_soc"\?\); commands: mode, /);
    await app.publishAsync(t.set('ev'), 'Boost');
    await app.publishAsync(t.setField('tank', 'mode'), 'OFF');
    await app.publishAsync(t.set('ev'), '{"mode":"Auto"}');
    await rec.next(() => rec.messages.length >= 4);
    expect(commands).toEqual([
      { deviceId: 'ev', mode: 'boost' },
      { deviceId: 'tank', mode: 'off' },
      { deviceId: 'ev', mode: 'auto' },
    ]);
  });

  it('turns a failing command handler into an error response', async () => {
    await startBridge({ reject: true });
    const app = await connect();
    const rec = await recorder(app, `${base}/response/#`);
    await app.publishAsync(`${base}/request/ev/set`, '{"transaction":"t9","mode":"off"}');
    const r = JSON.parse((await rec.next(() => true)).payload);
    expect(r).toMatchObject({ status: 'error', transaction: 't9', error: { code: 'DEVICE_UNREACHABLE' } });
  });

  it('re-publishes discovery when Home Assistant announces online', async () => {
    await startBridge();
    const v = sampleView();
    const expected = discoveryMessages({
      baseTopic: base,
      prefix: 'homeassistant',
      location: v.location,
      devices: v.devices,
      currency: 'NOK',
      swVersion: '0.1.0-test',
    })
      .map((m) => m.topic)
      .sort();
    const ha = await connect();
    const rec = await recorder(ha, 'homeassistant/+/+/+/config');
    await ha.publishAsync('homeassistant/status', 'online');
    const live = () => rec.messages.filter((m) => !m.retain);
    await rec.next(() => live().length >= expected.length);
    expect(
      live()
        .map((m) => m.topic)
        .sort(),
    ).toEqual(expected);
  });

  it('announces discovery once per start: overlapping updates and a retained HA birth send nothing twice', async () => {
    const v = sampleView();
    const expected = discoveryMessages({
      baseTopic: base,
      prefix: 'homeassistant',
      location: v.location,
      devices: v.devices,
      currency: 'NOK',
      swVersion: '0.1.0-test',
    })
      .map((m) => m.topic)
      .sort();
    const ha = await connect();
    await ha.publishAsync('homeassistant/status', 'online', { retain: true, qos: 1 }); // a set-up that retains HA's birth
    const rec = await recorder(ha, 'homeassistant/+/+/+/config');
    let birthSeen!: () => void;
    const birth = new Promise<void>((resolve) => (birthSeen = resolve));
    const { daemon, bridge } = await startBridge({ updatesDuringStart: 2, onMessage: (topic) => topic === 'homeassistant/status' && birthSeen() });
    try {
      await birth; // the bridge's handler has seen the retained birth (it runs before this listener)
      await bridge.update(); // runs after any update that birth started
      const marker = 'homeassistant/sensor/zz_marker/end/config';
      await daemon.publishAsync(marker, 'end', { qos: 1 }); // same connection: the broker keeps its order
      await rec.next((m) => m.topic === marker);
      const live = rec.messages
        .filter((m) => !m.retain && m.topic !== marker)
        .map((m) => m.topic)
        .sort();
      expect(live).toEqual(expected);
    } finally {
      await ha.publishAsync('homeassistant/status', '', { retain: true, qos: 1 });
    }
  });

  it('removes a device that left the config: empty retained configs and state', async () => {
    const seeder = await connect();
    const old = 'homeassistant/sensor/wattshift_loc-1/oldtank_temperature/config';
    await seeder.publishAsync(old, '{"name":"x"}', { retain: true, qos: 1 });
    await seeder.publishAsync(t.deviceField('oldtank', 'temperature'), '40', { retain: true, qos: 1 });
    const { saved } = await startBridge({ previousDeviceIds: ['tank', 'oldtank'] });
    const configs = await retained(broker.url, 'homeassistant/#');
    expect([...configs.keys()].some((k) => k.includes('/oldtank_'))).toBe(false);
    expect(configs.has('homeassistant/sensor/wattshift_loc-1/tank_temperature/config')).toBe(true);
    const state = await retained(broker.url, `${base}/oldtank/#`);
    expect(state.size).toBe(0);
    expect(saved).toEqual([['tank', 'ev', 'main']]);
  });

  it('resync after a reconnect announces online again and republishes unchanged state', async () => {
    const { bridge } = await startBridge();
    const other = await connect();
    await other.publishAsync(t.availability, 'offline', { retain: true, qos: 1 }); // as the will would
    await other.publishAsync(t.deviceField('tank', 'mode'), '', { retain: true, qos: 1 }); // broker lost it
    await bridge.update(); // nothing changed from the bridge's point of view: nothing sent
    expect((await retained(broker.url, t.deviceField('tank', 'mode'))).size).toBe(0);
    await bridge.resync();
    const state = await retained(broker.url, `${base}/#`);
    expect(state.get(t.availability)).toBe('online');
    expect(state.get(t.deviceField('tank', 'mode'))).toBe('auto');
  });

  it("works over the daemon's shared MQTT connection, with the will from haWill", async () => {
    const conn = createMqttConnection({ url: broker.url, will: haWill(base), reconnectPeriodMs: 60_000 }, { logger: silentLogger() });
    await conn.waitConnected(AbortSignal.timeout(5000));
    const commands: DeviceCommand[] = [];
    const bridge = createHaBridge({
      port: sharedConnectionPort(conn),
      baseTopic: base,
      discovery: { enabled: true, prefix: 'homeassistant' },
      currency: 'EUR',
      swVersion: '0.1.0-test',
      logger: silentLogger(),
      getView: () => sampleView(),
      onCommand: async (cmd) => void commands.push(cmd),
      previousDeviceIds: [],
    });
    try {
      await bridge.start();
      const app = await connect();
      const rec = await recorder(app, `${base}/response/#`);
      await app.publishAsync(t.setField('ev', 'target_kwh'), '12.5');
      await rec.next(() => true);
      expect(commands).toEqual([{ deviceId: 'ev', targetKwh: 12.5 }]);
      expect((await retained(broker.url, t.availability)).get(t.availability)).toBe('online');
      await bridge.stop();
      expect((await retained(broker.url, t.availability)).get(t.availability)).toBe('offline');
    } finally {
      await conn.close();
    }
  });

  it('shows offline when the daemon dies (last will) and on a clean stop', async () => {
    const observer = await connect();
    const { daemon } = await startBridge();
    const rec = await recorder(observer, t.availability);
    await rec.next((m) => m.payload === 'online');
    daemon.stream.destroy(); // no DISCONNECT: the broker sends the will
    const will = await rec.next((m) => m.payload === 'offline');
    expect(will.topic).toBe(t.availability);
    expect((await retained(broker.url, t.availability)).get(t.availability)).toBe('offline');

    const second = await connect();
    const pub = createHaPublisher({ port: mqttJsPort(second), baseTopic: base, logger: silentLogger() });
    await pub.start();
    expect((await retained(broker.url, t.availability)).get(t.availability)).toBe('online');
    await pub.stop();
    await second.endAsync();
    expect((await retained(broker.url, t.availability)).get(t.availability)).toBe('offline');
  });
});
