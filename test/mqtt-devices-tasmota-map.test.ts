/**
 * Tasmota and user-defined MQTT map adapters against a real aedes broker. The Tasmota peer is a
 * small scripted MQTT client answering like the firmware does (fixtures from Tasmota docs shapes).
 */
import { readFileSync } from 'node:fs';
import mqtt, { type MqttClient } from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/log.js';
import { createMqttDevice } from '../src/devices/mqtt/index.js';
import { pulseTimeForLease } from '../src/devices/mqtt/tasmota.js';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/mqtt/${name}`, import.meta.url), 'utf8');
const t0 = Date.UTC(2025, 0, 6);
const sig = () => new AbortController().signal;
/** For reads that may hit a missing value: a refresh request then ends in real time, not on the manual clock. */
const quick = () => AbortSignal.timeout(200);

const w = useMqttDeviceWorld(t0);
let peer: MqttClient;
const received: { topic: string; payload: string }[] = [];

beforeEach(async () => {
  peer = await mqtt.connectAsync(w.broker.url, { clientId: 'peer' });
  received.length = 0;
});
afterEach(async () => {
  await peer.endAsync();
});

/** A Tasmota with one relay: answers POWER1 and Status 10 like the firmware. */
async function fakeTasmota(topic: string, options: { answerStatus?: boolean; answerPower?: boolean } = {}) {
  let power = 'ON';
  let answerStatus = options.answerStatus !== false;
  peer.on('message', (t, p) => {
    const payload = p.toString();
    received.push({ topic: t, payload });
    if (t === `cmnd/${topic}/POWER1` && options.answerPower !== false) {
      if (payload === 'ON' || payload === 'OFF') power = payload;
      void peer.publishAsync(`stat/${topic}/RESULT`, JSON.stringify({ POWER: power }));
      void peer.publishAsync(`stat/${topic}/POWER`, power);
    }
    if (t === `cmnd/${topic}/STATUS` && payload === '10' && answerStatus) {
      void peer.publishAsync(`stat/${topic}/STATUS10`, fixture('tasmota-status10.json'));
    }
  });
  await peer.subscribeAsync(`cmnd/${topic}/#`);
  return { power: () => power, answerStatus: (v: boolean) => (answerStatus = v) };
}

describe('Tasmota adapter', () => {
  it('reads ENERGY.Total, ENERGY.Power and DS18B20 from tele/SENSOR', async () => {
    const tas = await fakeTasmota('tasmota_A1B2C3', { answerStatus: false });
    const dev = createMqttDevice({ type: 'tasmota', topic: 'tasmota_A1B2C3' }, { connection: w.connection, clock: w.clock, logger: silentLogger() });
    await peer.publishAsync('tele/tasmota_A1B2C3/LWT', 'Online', { retain: true });
    // Retained so that it reaches the adapter even if its SUBSCRIBE is still in flight.
    await peer.publishAsync('tele/tasmota_A1B2C3/SENSOR', fixture('tasmota-sensor.json'), { retain: true });
    await eventually(async () => expect(await dev.energyMeter!.readEnergyKwh(quick())).toBe(1234.567));
    expect(await dev.powerMeter!.readPowerW(sig())).toBe(1987);
    expect(await dev.thermometer!.readTemperatureC(sig())).toBe(61.4);
    // Stale: the adapter asks for Status 10 and uses the answer.
    tas.answerStatus(true);
    await w.clock.advance(121_000);
    // The refreshed value is stamped with its arrival (now), the stale one was not used.
    expect(await dev.energyMeter!.readStampedEnergyKwh!(sig())).toEqual({ kwh: 1234.6, atMs: w.clock.nowMs() });
    expect(received.some((r) => r.topic === 'cmnd/tasmota_A1B2C3/STATUS' && r.payload === '10')).toBe(true);
    // Offline via LWT: unreachable, not "off".
    await peer.publishAsync('tele/tasmota_A1B2C3/LWT', 'Offline', { retain: true });
    await eventually(() => expect(dev.powerMeter!.readPowerW(sig())).rejects.toMatchObject({ code: 'DEVICE_UNREACHABLE' }));
    dev.close();
  });

  it('blocks with POWER1 OFF (default wiring) and confirms from stat', async () => {
    const tas = await fakeTasmota('t1');
    const dev = createMqttDevice({ type: 'tasmota', topic: 't1' }, { connection: w.connection, clock: w.clock, logger: silentLogger() });
    await dev.heaterSwitch!.block(3_900_000, sig());
    expect(tas.power()).toBe('OFF');
    expect(received.some((r) => r.topic.startsWith('cmnd/t1/PulseTime'))).toBe(false);
    await dev.heaterSwitch!.allow(sig());
    expect(tas.power()).toBe('ON');
    dev.close();
  });

  it('uses PulseTime as a device-side lease when blocking means relay ON', async () => {
    const tas = await fakeTasmota('t2');
    const dev = createMqttDevice(
      { type: 'tasmota', topic: 't2', blockedState: 'on' },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
    );
    await dev.heaterSwitch!.allow(sig());
    expect(tas.power()).toBe('OFF');
    await dev.heaterSwitch!.block(3_900_000, sig());
    expect(tas.power()).toBe('ON');
    expect(received.find((r) => r.topic === 'cmnd/t2/PulseTime1')?.payload).toBe('4000');
    expect(pulseTimeForLease(1000)).toBe(112);
    expect(pulseTimeForLease(1e9)).toBe(64_900);
    dev.close();
  });

  it('times out an unconfirmed command and rejects garbage SENSOR payloads', async () => {
    await fakeTasmota('t3', { answerPower: false, answerStatus: false });
    const dev = createMqttDevice(
      { type: 'tasmota', topic: 't3' },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
      { requestTimeoutMs: 1000 },
    );
    const block = expect(dev.heaterSwitch!.block(60_000, sig())).rejects.toMatchObject({ code: 'DEVICE_TIMEOUT' });
    await new Promise((r) => setTimeout(r, 20));
    await w.clock.advance(1000);
    await block;
    await peer.publishAsync('tele/t3/SENSOR', '{"ENERGY":{"Total":"lots","Power":5}}');
    await eventually(() => expect(dev.energyMeter!.readEnergyKwh(quick())).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' }));
    await peer.publishAsync('tele/t3/SENSOR', '<html>');
    await eventually(() => expect(dev.thermometer!.readTemperatureC(quick())).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' }));
    await peer.publishAsync('tele/t3/SENSOR', fixture('tasmota-sensor.json'));
    await eventually(async () => expect(await dev.thermometer!.readTemperatureC(quick())).toBe(61.4));
    dev.close();
  });
});

describe('user-defined MQTT map', () => {
  it('reads dot paths with scales and sends configured payloads', async () => {
    const dev = createMqttDevice(
      {
        type: 'mqtt',
        stateTopic: 'home/boiler/state',
        energyKwhPath: 'meter.total_wh',
        energyScale: 0.001,
        powerWPath: 'meter.power',
        temperatureCPath: 'temp',
        commandTopic: 'home/boiler/set',
        blockPayload: '{"heat":false}',
        allowPayload: '{"heat":true}',
      },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
      { staleAfterS: 60 },
    );
    await peer.subscribeAsync('home/boiler/set');
    peer.on('message', (topic, p) => received.push({ topic, payload: p.toString() }));
    await peer.publishAsync('home/boiler/state', JSON.stringify({ meter: { total_wh: 123456, power: '1500.5' }, temp: 58.2 }), { retain: true });
    await eventually(async () => expect(await dev.energyMeter!.readEnergyKwh(sig())).toBeCloseTo(123.456, 9));
    const arrivedAtMs = w.clock.nowMs();
    await w.clock.advance(20_000);
    expect((await dev.energyMeter!.readStampedEnergyKwh!(sig())).atMs).toBe(arrivedAtMs);
    expect(await dev.powerMeter!.readPowerW(sig())).toBe(1500.5);
    expect(await dev.thermometer!.readTemperatureC(sig())).toBe(58.2);
    await dev.heaterSwitch!.block(60_000, sig());
    await dev.heaterSwitch!.allow(sig());
    await eventually(() => expect(received.map((r) => r.payload)).toEqual(['{"heat":false}', '{"heat":true}']));
    await peer.publishAsync('home/boiler/state', JSON.stringify({ meter: { total_wh: null, power: 1 }, temp: 999 }));
    await eventually(() => expect(dev.energyMeter!.readEnergyKwh(sig())).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' }));
    await expect(dev.thermometer!.readTemperatureC(sig())).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' });
    expect(await dev.powerMeter!.readPowerW(sig())).toBe(1);
    await w.clock.advance(61_000);
    await expect(dev.powerMeter!.readPowerW(sig())).rejects.toMatchObject({ code: 'DEVICE_STALE' });
    dev.close();
  });

  it('refuses power and energy out of their physical bounds, after scaling', async () => {
    const dev = createMqttDevice(
      { type: 'mqtt', stateTopic: 'bounded/state', powerWPath: 'p', energyKwhPath: 'e', energyScale: 0.001 },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
    );
    await peer.publishAsync('bounded/state', JSON.stringify({ p: 2300, e: 1_234_000 }), { retain: true });
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(sig())).toBe(2300));
    expect(await dev.energyMeter!.readEnergyKwh(sig())).toBe(1234);
    // 500 MW through a home, and a counter below zero.
    await peer.publishAsync('bounded/state', JSON.stringify({ p: 5e8, e: -5000 }));
    await eventually(() => expect(dev.powerMeter!.readPowerW(sig())).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' }));
    await expect(dev.energyMeter!.readEnergyKwh(sig())).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' });
  });

  it('reads a bare number payload with an empty path and an EV state; templates the current', async () => {
    const dev = createMqttDevice(
      { type: 'mqtt', stateTopic: 'ev/power', powerWPath: '', currentTopic: 'ev/current/set', currentPayloadTemplate: '{"amps":{{value}}}' },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
    );
    expect(dev.energyMeter).toBeUndefined();
    expect(dev.heaterSwitch).toBeUndefined();
    await peer.subscribeAsync('ev/current/set');
    peer.on('message', (topic, p) => received.push({ topic, payload: p.toString() }));
    await peer.publishAsync('ev/power', '7360', { retain: true });
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(sig())).toBe(7360));
    await dev.chargeCurrentLimit!.setCurrentA(10, sig());
    await eventually(() => expect(received).toContainEqual({ topic: 'ev/current/set', payload: '{"amps":10}' }));
    await expect(dev.chargeCurrentLimit!.setCurrentA(Number.NaN, sig())).rejects.toMatchObject({ code: 'MQTT_COMMAND_INVALID' });
    await peer.publishAsync('ev/power', 'unavailable');
    await eventually(() => expect(dev.powerMeter!.readPowerW(sig())).rejects.toMatchObject({ code: 'DEVICE_BAD_VALUE' }));

    const ev = createMqttDevice(
      { type: 'mqtt', stateTopic: 'ev/state', pluggedPath: 'plug', chargingPath: 'state' },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
    );
    await peer.publishAsync('ev/state', JSON.stringify({ plug: 'on', state: 1 }), { retain: true });
    await eventually(async () => expect(await ev.evStateReader!.readEvState(sig())).toEqual({ plugged: true, charging: true }));
    await peer.publishAsync('ev/state', JSON.stringify({ plug: false, state: 1 }));
    await eventually(async () => expect(await ev.evStateReader!.readEvState(sig())).toEqual({ plugged: false, charging: false }));
    dev.close();
    ev.close();
  });

  it('with availability and refresh topics, a device publishing on change is asked once per quiet spell and is stale only when it does not answer', async () => {
    // A zigbee2mqtt-style plug: state on change, `/availability` as JSON, `/get` to ask.
    const dev = createMqttDevice(
      {
        type: 'mqtt',
        stateTopic: 'z2m/boiler',
        powerWPath: 'power',
        energyKwhPath: 'energy',
        availabilityTopic: 'z2m/boiler/availability',
        refreshTopic: 'z2m/boiler/get',
        refreshPayload: '{"state":""}',
      },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
      { staleAfterS: 120, requestTimeoutMs: 1000 },
    );
    let answering = true;
    const state = JSON.stringify({ power: 2000, energy: 12.5 });
    await peer.subscribeAsync('z2m/boiler/get');
    peer.on('message', (topic, p) => {
      received.push({ topic, payload: p.toString() });
      if (topic === 'z2m/boiler/get' && answering) void peer.publishAsync('z2m/boiler', state);
    });
    await peer.publishAsync('z2m/boiler/availability', JSON.stringify({ state: 'online' }), { retain: true });
    await peer.publishAsync('z2m/boiler', state, { retain: true });
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(sig())).toBe(2000));
    const askedBefore = received.filter((r) => r.topic === 'z2m/boiler/get').length; // a read before the first state asks too
    const asked = () => received.filter((r) => r.topic === 'z2m/boiler/get').slice(askedBefore);
    await w.clock.advance(60_000);
    expect(await dev.powerMeter!.readPowerW(sig())).toBe(2000);
    expect(asked()).toHaveLength(0);
    await w.clock.advance(61_000); // unchanged for longer than staleAfterS: asked, once for all readers
    const reads = await Promise.all([dev.powerMeter!.readPowerW(sig()), dev.energyMeter!.readEnergyKwh(sig()), dev.powerMeter!.readPowerW(sig())]);
    expect(reads).toEqual([2000, 12.5, 2000]);
    expect(asked()).toEqual([{ topic: 'z2m/boiler/get', payload: '{"state":""}' }]);

    answering = false;
    await w.clock.advance(121_000);
    const stale = expect(dev.powerMeter!.readPowerW(sig())).rejects.toMatchObject({ code: 'DEVICE_STALE' });
    await new Promise((r) => setTimeout(r, 30));
    await w.clock.advance(1000);
    await stale;
    await peer.publishAsync('z2m/boiler/availability', JSON.stringify({ state: 'offline' }), { retain: true });
    // Until the offline word arrives a read still asks, and would wait for the manual clock: quick() ends it.
    await eventually(() => expect(dev.powerMeter!.readPowerW(quick())).rejects.toMatchObject({ code: 'DEVICE_UNREACHABLE' }));
    await peer.publishAsync('z2m/boiler/availability', 'online', { retain: true, qos: 1 });
    await peer.publishAsync('z2m/boiler', state);
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(quick())).toBe(2000));
    dev.close();
  });
});
