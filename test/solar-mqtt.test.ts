/** A solar device on MQTT, through the device factory, against a real broker: its energy (in Wh or kWh) and power topics. */
import { describe, expect, it } from 'vitest';
import { connectAsync } from 'mqtt';
import { solarSchema } from '../src/config/schema.js';
import { buildDevice } from '../src/devices/factory.js';
import { silentLogger } from '../src/log.js';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';

const T0 = Date.UTC(2026, 5, 21, 12);
const signal = new AbortController().signal;

describe('solar over MQTT', () => {
  const world = useMqttDeviceWorld(T0);

  async function publisher() {
    const client = await connectAsync(world.broker.url);
    world.cleanups.push(() => client.endAsync());
    return client;
  }

  it('reads a Wh counter from a JSON path and a bare power number as production', async () => {
    const config = solarSchema.parse({
      id: 'pv',
      kind: 'solar',
      source: { type: 'mqtt', energyTopic: 'inverter/energy', energyPath: 'total', energyUnit: 'Wh', powerTopic: 'inverter/power' },
    });
    const built = buildDevice(config, { buses: new Map(), mqtt: world.connection, clock: world.clock, logger: silentLogger() });
    world.cleanups.push(() => built.close());
    const { energyMeter, powerMeter } = built.capabilities;
    expect(energyMeter && powerMeter).toBeTruthy();
    const pub = await publisher();
    await pub.publishAsync('inverter/energy', JSON.stringify({ total: 1_234_567 }), { retain: true });
    await pub.publishAsync('inverter/power', '2510', { retain: true });
    expect(await eventually(() => energyMeter!.readEnergyKwh(signal))).toBeCloseTo(1234.567, 6);
    expect(await eventually(() => powerMeter!.readPowerW(signal))).toBe(2510);
  });

  it('reads a kWh counter as the payload itself, and has no power without a power topic', async () => {
    const config = solarSchema.parse({ id: 'pv', kind: 'solar', source: { type: 'mqtt', energyTopic: 'inverter/kwh' } });
    const built = buildDevice(config, { buses: new Map(), mqtt: world.connection, clock: world.clock, logger: silentLogger() });
    world.cleanups.push(() => built.close());
    expect(built.capabilities.powerMeter).toBeUndefined();
    const pub = await publisher();
    await pub.publishAsync('inverter/kwh', '812.5', { retain: true });
    expect(await eventually(() => built.capabilities.energyMeter!.readEnergyKwh(signal))).toBe(812.5);
  });
});
