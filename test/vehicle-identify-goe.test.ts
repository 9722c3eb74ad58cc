/**
 * The car at a go-e charger, from the simulated charger over aedes: `trx` (go-eCharger-API-v2,
 * apikeys-en.md: null no transaction, 0 without a card, else the card index + 1) names the card,
 * published retained and only when it changes.
 */
import mqtt from 'mqtt';
import { describe, expect, it } from 'vitest';
import type { MqttDevice } from '../src/devices/mqtt/index.js';
import type { GoeSim, GoeSimPlug } from '../src/sandbox/devices/goe-sim.js';
import { parseConfig } from '../src/config/load.js';
import type { EvChargerConfig } from '../src/config/schema.js';
import { identifyVehicle } from '../src/jobs/vehicles.js';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';
import { startGoeDevice, stepGoe } from './helpers/goe-device.js';

const t0 = Date.UTC(2026, 0, 12, 0, 0);
const H = 3_600_000;
const quick = () => AbortSignal.timeout(500);
const battery = { capacityKwh: 60, socPct: 20 };
const w = useMqttDeviceWorld(t0, { reconnectPeriodMs: 100 });

const config = parseConfig({
  version: 1,
  site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 11 },
  spark: { clientId: 'c', clientSecret: 's' },
  storage: { path: ':memory:' },
  mqtt: { url: 'mqtt://127.0.0.1:1883' },
  vehicles: [
    { id: 'car-a', capacityKwh: 64, identify: { goeCards: [0] } },
    { id: 'car-b', capacityKwh: 40, identify: { goeCards: [3] } },
  ],
  devices: [{ id: 'garage', kind: 'evCharger', charger: { type: 'goe', topicPrefix: 'go-eCharger/9' }, model: { capacityKwh: 50 } }],
}).config;
const charger = config.devices[0] as EvChargerConfig;

describe('the car at a go-e charger', () => {
  let sim: GoeSim;
  let dev: MqttDevice;
  const start = async (plugs: GoeSimPlug[]) => {
    ({ sim, dev } = await startGoeDevice(w, { topicPrefix: 'go-eCharger/9', startMs: t0, plugs }));
  };
  const step = (ms: number) => stepGoe(w, sim, ms);
  const state = () => dev.evStateReader!.readEvState(quick());

  it('names the card of the session from trx, and no card without one', async () => {
    await start([
      { atMs: t0 + 60_000, untilMs: t0 + H, card: 3, battery },
      { atMs: t0 + 2 * H, untilMs: t0 + 3 * H, battery },
      { atMs: t0 + 4 * H, card: 0, battery },
    ]);
    expect(await state()).toEqual({ plugged: false, charging: false, sessionKwh: expect.any(Number) });
    await step(2 * 60_000);
    await eventually(async () => expect(await state()).toEqual({ plugged: true, charging: true, goeCard: 3, sessionKwh: expect.any(Number) }));
    expect(identifyVehicle(charger, config.vehicles, await state())).toMatchObject({ vehicle: { id: 'car-b' }, by: 'card' });
    await step(H);
    await eventually(async () => expect(await state()).toEqual({ plugged: false, charging: false, sessionKwh: expect.any(Number) }));
    await step(H);
    await eventually(async () => expect(await state()).toEqual({ plugged: true, charging: true, sessionKwh: expect.any(Number) }));
    expect(identifyVehicle(charger, config.vehicles, await state())).toEqual({ vehicle: null, by: 'none' });
    await step(2 * H);
    await eventually(async () => expect(await state()).toMatchObject({ plugged: true, goeCard: 0 }));
    expect(identifyVehicle(charger, config.vehicles, await state())).toMatchObject({ vehicle: { id: 'car-a' }, by: 'card' });
  });

  it('publishes trx retained, and only when it changes', async () => {
    await start([{ atMs: t0 + 60_000, untilMs: t0 + H, card: 1, battery }]);
    const seen: string[] = [];
    const watcher = await mqtt.connectAsync(w.broker.url, { reconnectPeriod: 0 });
    w.cleanups.push(() => watcher.endAsync());
    const retained: boolean[] = [];
    watcher.on('message', (_t, payload, packet) => {
      seen.push(payload.toString());
      retained.push(packet.retain);
    });
    await watcher.subscribeAsync('go-eCharger/9/trx', { qos: 1 });
    await eventually(() => expect(seen).toEqual(['null']));
    expect(retained).toEqual([true]);
    for (let i = 0; i < 6; i++) await step(10 * 60_000);
    await step(10 * 60_000);
    await eventually(() => expect(seen).toEqual(['null', '2', 'null']));
  });
});
