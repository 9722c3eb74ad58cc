/**
 * The car at an OCPP charger, from the simulated charge point over a real WebSocket: a car plugged
 * with its card is authorised and starts its own transaction with that id tag; the tag names the
 * car until it is unplugged; wattshift's own remote start names none.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import type { EvChargerConfig } from '../src/config/schema.js';
import { identifyVehicle } from '../src/jobs/vehicles.js';
import { eventually } from './helpers/aedes.js';
import { closeOpened, never, startMs, world } from './helpers/ocpp-world.js';

afterEach(closeOpened);

const H = 3_600_000;
const battery = { capacityKwh: 60, socPct: 20 };

const config = parseConfig({
  version: 1,
  site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 11 },
  spark: { clientId: 'c', clientSecret: 's' },
  storage: { path: ':memory:' },
  ocpp: {},
  vehicles: [
    { id: 'car-a', capacityKwh: 64, identify: { idTags: ['TAG-A'] } },
    { id: 'car-b', capacityKwh: 40, identify: { idTags: ['TAG-B'] } },
  ],
  devices: [
    { id: 'car', kind: 'evCharger', charger: { type: 'ocpp', chargePointId: 'cp1', password: 'home-charger-secret-1' }, model: { capacityKwh: 50 } },
  ],
}).config;
const charger = config.devices[0] as EvChargerConfig;

describe('the car at an OCPP charger', () => {
  it('is named by the id tag of its Authorize and StartTransaction, until it is unplugged', async () => {
    const w = await world({
      plugs: [
        { atMs: startMs + 60_000, untilMs: startMs + H, idTag: 'TAG-B', battery },
        { atMs: startMs + 2 * H, untilMs: startMs + 3 * H, battery },
        { atMs: startMs + 4 * H, idTag: 'TAG-X', battery },
      ],
    });
    expect((await w.charger.evStateReader!.readEvState(never)).idTag).toBeUndefined();
    await w.step(2 * 60_000);
    expect(w.sim.received()).not.toContain('RemoteStartTransaction');
    await eventually(async () => expect(await w.charger.evStateReader!.readEvState(never)).toMatchObject({ plugged: true, idTag: 'TAG-B' }));
    // The charge point started the session itself, with the card's tag.
    expect(w.sim.transactionId).toBeDefined();
    expect(identifyVehicle(charger, config.vehicles, await w.charger.evStateReader!.readEvState(never))).toMatchObject({
      vehicle: { id: 'car-b' },
      by: 'idTag',
    });

    await w.step(H);
    await eventually(async () => expect(await w.charger.evStateReader!.readEvState(never)).toMatchObject({ plugged: false }));
    expect((await w.charger.evStateReader!.readEvState(never)).idTag).toBeUndefined();

    // A car without a card, started by wattshift under its own tag: no car is named.
    await w.step(H + 60_000);
    await w.charger.chargeCurrentLimit.setCurrentA(10, never);
    await w.step(60_000);
    await eventually(async () => expect(await w.charger.evStateReader!.readEvState(never)).toMatchObject({ plugged: true, charging: true }));
    expect((await w.charger.evStateReader!.readEvState(never)).idTag).toBeUndefined();
    expect(identifyVehicle(charger, config.vehicles, await w.charger.evStateReader!.readEvState(never))).toEqual({ vehicle: null, by: 'none' });

    // A card no car claims: the charger's own model, with the tag to log.
    await w.step(2 * H);
    await eventually(async () => expect(await w.charger.evStateReader!.readEvState(never)).toMatchObject({ plugged: true, idTag: 'TAG-X' }));
    expect(identifyVehicle(charger, config.vehicles, await w.charger.evStateReader!.readEvState(never))).toEqual({
      vehicle: null,
      by: 'none',
      unknownTag: 'TAG-X',
    });
  });

  it('a charger serving one car, or with a default, needs no tag', () => {
    expect(identifyVehicle({ ...charger, vehicles: ['car-a'] }, config.vehicles, {})).toMatchObject({ vehicle: { id: 'car-a' }, by: 'only' });
    expect(identifyVehicle({ ...charger, defaultVehicle: 'car-b' }, config.vehicles, {})).toMatchObject({ vehicle: { id: 'car-b' }, by: 'default' });
    expect(identifyVehicle({ ...charger, defaultVehicle: 'car-b' }, config.vehicles, { idTag: 'TAG-A' })).toMatchObject({
      vehicle: { id: 'car-a' },
      by: 'idTag',
    });
    expect(identifyVehicle(charger, [], { idTag: 'TAG-A' })).toEqual({ vehicle: null, by: 'none' });
  });
});
