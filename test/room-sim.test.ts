/**
 * The room simulator through a real broker: its relay switched with Shelly RPC, its sensor read as
 * zigbee2mqtt publishes it. The physics: the heater's own thermostat holds its band while the relay
 * is on; with the relay off the room cools towards the outdoor temperature at the first-order rate
 * e^(−t·UA/C) of its parameters.
 */
import mqtt, { type MqttClient } from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { brokerUrlOptions } from '../src/devices/mqtt/transport.js';
import { outdoorTempC } from '../src/sandbox/outdoor-model.js';
import { createRoomSim, type RoomSim } from '../src/sandbox/devices/room-sim.js';
import { startAedes, type TestBroker } from './helpers/aedes.js';
import { until } from './helpers/until.js';

const minuteMs = 60_000;
const hourMs = 3_600_000;
const t0 = Date.UTC(2026, 0, 15, 0);
const oslo = { latitude: 59.9139, longitude: 10.7522 };

let broker: TestBroker;
let peer: MqttClient;
const seen: { temperature: number }[] = [];
const cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  broker = await startAedes();
  peer = await mqtt.connectAsync({ ...brokerUrlOptions(broker.url), clientId: 'room-test' });
  seen.length = 0;
  peer.on('message', (topic, payload) => {
    if (topic === 'zigbee2mqtt/living-room') seen.push(JSON.parse(payload.toString()) as { temperature: number });
  });
  await peer.subscribeAsync('zigbee2mqtt/living-room');
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await peer.endAsync();
  await broker.close();
});

async function room(options: Partial<Parameters<typeof createRoomSim>[0]> = {}): Promise<RoomSim> {
  const sim = createRoomSim({
    url: broker.url,
    startMs: t0,
    seed: 3,
    place: oslo,
    relayPrefix: 'shelly-room',
    sensorName: 'living-room',
    ...options,
  });
  await sim.start();
  cleanups.push(() => sim.close());
  return sim;
}

/** Switch.Set through the broker, as wattshift's Shelly adapter sends it. */
async function switchRelay(sim: RoomSim, on: boolean): Promise<void> {
  await peer.publishAsync('shelly-room/rpc', JSON.stringify({ id: 1, src: 'room-test', method: 'Switch.Set', params: { id: 0, on } }));
  await until(() => sim.relay.output === on, `relay ${on ? 'on' : 'off'}`);
}

describe('the room simulator', () => {
  it("holds the heater's thermostat band while the relay is on, and reports as a zigbee2mqtt sensor", async () => {
    // A 2 kW panel heater: in January it cycles several times in 12 hours.
    const sim = await room({ room: { initialC: 21.8 }, heater: { powerW: 2000 } });
    const { setpointC, hysteresisK, powerW } = sim.params.heater;
    const temps: number[] = [];
    let heatingMinutes = 0;
    let starts = 0;
    for (let m = 0, was = sim.heating; m < 12 * 60; m++, was = sim.heating) {
      await sim.advance(minuteMs);
      temps.push(sim.tempC);
      if (sim.heating) heatingMinutes++;
      if (sim.heating && !was) starts++;
    }
    // From 21.8 °C it heats to the setpoint, then keeps between setpoint − hysteresis and the setpoint.
    const held = temps.slice(temps.findIndex((t) => t >= setpointC));
    expect(held.length).toBeGreaterThan(11 * 60);
    expect(Math.min(...held)).toBeGreaterThan(setpointC - hysteresisK - 0.05);
    expect(Math.max(...held)).toBeLessThan(setpointC + 0.05);
    // It cycles: on part of the time, and the meter counts exactly that.
    expect(starts).toBeGreaterThanOrEqual(3);
    expect(heatingMinutes).toBeGreaterThan(60);
    expect(heatingMinutes).toBeLessThan(12 * 60 - 60);
    const kwh = [...sim.energyKwhByHour().values()].reduce((a, b) => a + b, 0);
    expect(kwh).toBeCloseTo((heatingMinutes / 60) * (powerW / 1000), 1);

    // Reports: one at start, then at a 0.2 °C change (at most every 30 s) or every 5 minutes.
    await until(() => seen.length === sim.reports, 'every report arrived');
    expect(sim.reports).toBeGreaterThanOrEqual((12 * 60) / 5);
    expect(sim.reports).toBeLessThanOrEqual(12 * 60 + 1);
    expect(seen.every((s) => Math.round(s.temperature * 10) / 10 === s.temperature)).toBe(true);
    expect(seen.at(-1)!.temperature).toBe(Math.round(sim.tempC * 10) / 10);
    expect(Object.keys(seen[0]!).sort()).toEqual(['battery', 'humidity', 'linkquality', 'temperature', 'voltage']);
  });

  it('cools towards outdoors at the rate its model gives while the relay is off, and heats again when it is on', async () => {
    const sim = await room({ room: { initialC: 21 }, gains: 'none' });
    await switchRelay(sim, false);
    const { heatCapacityKwhPerK, heatLossKwPerK } = sim.params.room;
    for (let hour = 0; hour < 6; hour++) {
      const startC = sim.tempC;
      const startMs = sim.nowMs;
      let outdoorSum = 0;
      for (let m = 0; m < 60; m++) {
        outdoorSum += outdoorTempC(3, oslo, startMs + (m + 0.5) * minuteMs);
        await sim.advance(minuteMs);
      }
      const outdoorC = outdoorSum / 60;
      const expected = outdoorC + (startC - outdoorC) * Math.exp((-1 * heatLossKwPerK) / heatCapacityKwhPerK);
      expect(Math.abs(sim.tempC - expected)).toBeLessThan(0.005);
      expect(sim.tempC).toBeLessThan(startC);
    }
    // Below the heater's band the thermostat calls, but the open relay gives no power.
    expect(sim.tempC).toBeLessThan(sim.params.heater.setpointC - sim.params.heater.hysteresisK);
    expect(sim.heating).toBe(false);
    expect([...sim.energyKwhByHour().values()].reduce((a, b) => a + b, 0)).toBe(0);

    await switchRelay(sim, true);
    const before = sim.tempC;
    await sim.advance(hourMs);
    expect(sim.heating).toBe(true);
    expect(sim.tempC).toBeGreaterThan(before + 0.2);
    expect(sim.energyKwhByHour().get(t0 + 6 * hourMs)).toBeCloseTo(sim.params.heater.powerW / 1000, 3);
  });
});
