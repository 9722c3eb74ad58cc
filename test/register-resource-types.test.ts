/**
 * `wattshift register` names each device as the API's ResourceType does: a heat pump is `HVAC`.
 * A heat pump registered earlier as `HotWaterTank` is moved over (the API cannot change a type, so
 * the resource is deleted and created again under the same id), and a second run changes nothing.
 * Against the sandbox over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { parseConfig } from '../src/config/load.js';
import { silentLogger } from '../src/log.js';
import { register } from '../src/registration.js';
import { startSandbox, type Sandbox } from '../src/sandbox/server.js';
import { createSparkClient, type SparkClient } from '../src/spark/client.js';
import { openStore, type Store } from '../src/store/index.js';
import type { Config } from '../src/config/schema.js';
import { configEnv } from './helpers/config-document.js';

const clock = new ManualClock(Date.UTC(2026, 0, 14, 9));
const logger = silentLogger();
let sb: Sandbox;
let spark: SparkClient;
let store: Store;
let config: Config;

const relay = (channel: number) => ({ type: 'modbus', bus: 'hp', profile: 'wattshift-sim-heat-pump', channel });

beforeAll(async () => {
  sb = await startSandbox({ clock, autoTick: false });
  const { clientId, clientSecret } = sb.credentials[0]!;
  config = parseConfig(
    {
      version: 1,
      site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 11 },
      spark: {
        baseUrl: sb.baseUrl,
        authUrl: sb.authUrl,
        forecastUrl: sb.forecastUrl,
        clientId,
        clientSecret,
        userId: 'owner-hp',
        locationId: 'home-hp',
        coordinates: { latitude: 59.9, longitude: 10.7 },
      },
      storage: { path: ':memory:' },
      mqtt: { url: 'mqtt://127.0.0.1:1883' },
      modbus: { hp: { type: 'tcp', host: '127.0.0.1' } },
      devices: [
        {
          id: 'hp',
          kind: 'heatPump',
          contacts: { relay1: relay(0), relay2: relay(1) },
          thermometer: { type: 'modbus', bus: 'hp', profile: 'wattshift-sim-heat-pump', point: 'temperatureC' },
          model: { volumeL: 200, electricKw: 0.5 },
        },
      ],
    },
    { env: configEnv },
  ).config;
  spark = createSparkClient({ ...config.spark, clock, logger });
  store = openStore({ path: ':memory:', clock });
});

afterAll(async () => {
  store?.close();
  await spark?.close();
  await sb?.close();
});

describe('register: resource types as the API names them', () => {
  it('moves a heat pump registered as HotWaterTank over to HVAC, keeping its id', async () => {
    // The registration an older wattshift made: the user, the location and the pump as a tank.
    await spark.createUser('owner-hp');
    await spark.createLocation('owner-hp', { locationId: 'home-hp', locationType: 'Residential', coordinates: { latitude: 59.9, longitude: 10.7 } });
    await spark.createLocationResource('owner-hp', 'home-hp', { resourceId: 'home-hp-hp', resourceType: 'HotWaterTank' });

    const { registration, changes } = await register(config, { spark, store, logger, nowMs: clock.nowMs() });
    expect(changes).toContain('re-created resource home-hp-hp as HVAC (was HotWaterTank)');
    expect(registration.resources).toEqual({ hp: 'home-hp-hp' });
    expect(await spark.getResource('home-hp-hp')).toMatchObject({ resourceType: 'HVAC', locationId: 'home-hp', userId: 'owner-hp' });
    const atLocation = await spark.listLocationResources('owner-hp', 'home-hp');
    expect(atLocation.map((r) => [r.resourceId, r.resourceType])).toEqual([['home-hp-hp', 'HVAC']]);
  });

  it('changes nothing on a second run', async () => {
    const again = await register(config, { spark, store, logger, nowMs: clock.nowMs() });
    expect(again.changes).toEqual([]);
    expect(await spark.getResource('home-hp-hp')).toMatchObject({ resourceType: 'HVAC' });
  });
});
