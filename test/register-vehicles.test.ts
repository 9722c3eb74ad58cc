/**
 * `wattshift register` with a vehicles section against the sandbox over HTTP: each car becomes a
 * Vehicle of the user (POST /users/{userId}/vehicles, no location), its id is kept in the
 * registration and the identity, and a second run changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { parseConfig } from '../src/config/load.js';
import { identityOf, loadRegistration } from '../src/identity.js';
import { silentLogger } from '../src/log.js';
import { register } from '../src/registration.js';
import { startSandbox, type Sandbox } from '../src/sandbox/server.js';
import { createSparkClient, type SparkClient } from '../src/spark/client.js';
import { openStore, type Store } from '../src/store/index.js';
import type { Config } from '../src/config/schema.js';

const clock = new ManualClock(Date.UTC(2026, 0, 14, 9));
const logger = silentLogger();
let sb: Sandbox;
let spark: SparkClient;
let store: Store;
let config: Config;

beforeAll(async () => {
  sb = await startSandbox({ clock, autoTick: false });
  const { clientId, clientSecret } = sb.credentials[0]!;
  config = parseConfig({
    version: 1,
    site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 11 },
    spark: {
      baseUrl: sb.baseUrl,
      authUrl: sb.authUrl,
      forecastUrl: sb.forecastUrl,
      clientId,
      clientSecret,
      userId: 'owner-1',
      locationId: 'home-1',
      coordinates: { latitude: 59.9, longitude: 10.7 },
    },
    storage: { path: ':memory:' },
    mqtt: { url: 'mqtt://127.0.0.1:1883' },
    vehicles: [
      { id: 'car-a', name: 'Car A', capacityKwh: 64, identify: { goeCards: [0] } },
      { id: 'car-b', capacityKwh: 40, resourceId: 'my-van', identify: { goeCards: [1] } },
    ],
    devices: [{ id: 'garage', kind: 'evCharger', charger: { type: 'goe', topicPrefix: 'go-eCharger/1' }, model: { capacityKwh: 60 } }],
  }).config;
  spark = createSparkClient({ ...config.spark, clock, logger });
  store = openStore({ path: ':memory:', clock });
});

afterAll(async () => {
  store?.close();
  await spark?.close();
  await sb?.close();
});

describe('register with vehicles', () => {
  it('creates each car as a Vehicle of the user, without a location, and keeps its id', async () => {
    const { registration, changes } = await register(config, { spark, store, logger, nowMs: clock.nowMs() });
    expect(changes).toEqual(expect.arrayContaining(['created vehicle owner-1-car-a (car-a)', 'created vehicle my-van (car-b)']));
    expect(registration.resources).toEqual({ garage: 'home-1-garage', 'car-a': 'owner-1-car-a', 'car-b': 'my-van' });
    const { resources } = await spark.listUserResources('owner-1');
    const vehicles = resources
      .filter((r) => r.resourceType === 'Vehicle')
      .map((r) => ({ resourceId: r.resourceId, locationId: r.locationId ?? null, userId: r.userId }));
    expect(vehicles.sort((a, b) => a.resourceId.localeCompare(b.resourceId))).toEqual([
      { resourceId: 'my-van', locationId: null, userId: 'owner-1' },
      { resourceId: 'owner-1-car-a', locationId: null, userId: 'owner-1' },
    ]);
    expect(resources.find((r) => r.resourceId === 'home-1-garage')).toMatchObject({ resourceType: 'Charger', locationId: 'home-1' });
  });

  it("changes nothing on a second run, and the identity maps each car's resource to the car", async () => {
    const again = await register(config, { spark, store, logger, nowMs: clock.nowMs() });
    expect(again.changes).toEqual([]);
    const me = identityOf(config, loadRegistration(store));
    expect(me.resources.get('owner-1-car-a')).toBe('car-a');
    expect(me.resources.get('my-van')).toBe('car-b');
    expect(me.resources.get('home-1-garage')).toBe('garage');
  });
});
