/**
 * A heated zone on real peers: the room simulator (a panel heater with its own thermostat behind the
 * Shelly simulator's relay, a zigbee2mqtt temperature sensor) on aedes, built by the device factory
 * and driven by the control loop on the manual clock. The zone heats in planned (cheap) slots, is
 * blocked in an unplanned (expensive) slot while the room is within its band, is released when
 * the room falls to the band's lower edge, and its frost floor outranks a cap on it.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import type { Plan, ZoneSlotPlan } from '../src/core/types.js';
import { buildDevice } from '../src/devices/factory.js';
import { superviseDevice } from '../src/devices/supervisor.js';
import { startControlLoop } from '../src/jobs/control-loop.js';
import { silentLogger } from '../src/log.js';
import { createRoomSim, type RoomSim } from '../src/sandbox/devices/room-sim.js';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';
import { noMetering, planOf, TICK_MS, tickApplied, PACE_POLL_MS } from './helpers/loop-world.js';
import { memoryLogger } from './fixtures/modbus/servers.js';

// Wednesday 14 January 2026, 12:00 UTC.
const t0 = Date.UTC(2026, 0, 14, 12);
const w = useMqttDeviceWorld(t0);
const oslo = { latitude: 59.91, longitude: 10.75 };

const zonePlan = (on: boolean): Plan => {
  const zone: ZoneSlotPlan = { energyKwh: on ? 1 : 0, powerKw: on ? 1 : 0, on, endTempC: 21, minC: 20, maxC: 22 };
  return planOf(t0, 60, [{ price: on ? 0.2 : 3, zones: { living: zone } } as never]);
};

async function startZone(o: { initialC: number; plan: Plan; capKw?: number }) {
  // A small, leaky room: it cools by about 0.4 K a minute with the heater off, so the test needs few ticks.
  const room: RoomSim = createRoomSim({
    url: w.broker.url,
    startMs: t0,
    seed: 11,
    place: oslo,
    relayPrefix: 'shelly-living',
    sensorName: 'living-sensor',
    room: { heatCapacityKwhPerK: 0.05, heatLossKwPerK: 0.05, initialC: o.initialC },
    heater: { powerW: 1000, setpointC: 24 },
    reporting: { changeC: 0.1, minIntervalS: 0, maxIntervalS: 10 },
    gains: 'none',
  });
  const { config } = parseConfig({
    version: 1,
    site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 17 },
    spark: { clientId: 'c', clientSecret: 's' },
    storage: { path: ':memory:' },
    mqtt: { url: w.broker.url },
    devices: [
      {
        id: 'living',
        kind: 'zone',
        switch: { type: 'shelly', topicPrefix: 'shelly-living' },
        thermometer: { type: 'mqtt', stateTopic: 'zigbee2mqtt/living-sensor', temperatureCPath: 'temperature' },
        model: { powerKw: 1 },
        frostC: 7,
      },
    ],
  });
  const d = config.devices[0]!;
  const built = buildDevice(d, { buses: new Map(), mqtt: w.connection, clock: w.clock, logger: silentLogger(), requestTimeoutMs: 2000 });
  w.cleanups.push(() => built.close());
  // The sensor's first report comes at its start: the adapter listens before it.
  await room.start();
  w.cleanups.push(() => room.close());
  const device = superviseDevice(
    { id: d.id, kind: d.kind, capabilities: built.capabilities, leaseMs: 10 * 60_000, readTimeoutMs: 2000 },
    { clock: w.clock, logger: silentLogger() },
  );
  const heard = async (): Promise<void> => {
    const want = Math.round(room.tempC * 10) / 10;
    await eventually(
      async () => expect(await built.capabilities.thermometer!.readTemperatureC(AbortSignal.timeout(500))).toBe(want),
      5000,
      PACE_POLL_MS,
    );
  };
  await heard();
  const log = memoryLogger();
  const control = startControlLoop({
    devices: [{ config: d, subject: 'device:living', device }],
    mainMeter: null,
    metering: noMetering,
    clock: w.clock,
    logger: log.logger,
    tickMs: TICK_MS,
    slotMinutes: 60,
    timezone: 'Europe/Oslo',
    inputs: {
      plan: () => o.plan,
      locationCapKw: () => 17,
      deviceCapKw: () => o.capKw,
      baseLoadKw: () => 0.5,
      intent: () => ({ mode: 'auto', boostUntilMs: null }),
      estimatedTankC: () => undefined,
    },
    onTick: () => undefined,
  });
  w.cleanups.push(() => control.stop());
  await tickApplied(control, t0);
  return {
    room,
    log,
    setpoint: () => control.last()?.decision.setpoints.find((s) => s.id === 'living'),
    /** One tick: the room runs on, its sensor is heard, then the loop ticks on it. */
    async tick() {
      await room.advance(TICK_MS);
      await heard();
      await w.clock.advance(TICK_MS);
      await tickApplied(control, w.clock.nowMs());
    },
  };
}

describe('a heated zone behind a relay', () => {
  it('heats in a planned (cheap) slot', async () => {
    const z = await startZone({ initialC: 20.5, plan: zonePlan(true) });
    expect(z.setpoint()).toMatchObject({ kind: 'heater', allow: true, reason: 'planned 1.00 kWh this slot' });
    await z.tick();
    expect(z.room.relay.output).toBe(true);
    expect(z.room.heating).toBe(true);
  });

  it('is blocked in an unplanned (expensive) slot while within its band, and released at its lower edge', async () => {
    const z = await startZone({ initialC: 20.6, plan: zonePlan(false) });
    expect(z.setpoint()).toMatchObject({ allow: false, reason: 'not planned' });
    expect(z.room.relay.output).toBe(false);
    const reasons: string[] = [];
    for (let i = 0; i < 30 && z.setpoint()?.reason === 'not planned'; i++) {
      expect(z.room.tempC).toBeGreaterThan(19.8);
      await z.tick();
      reasons.push(z.setpoint()?.reason ?? '');
    }
    expect(z.setpoint()).toMatchObject({ allow: true, reason: 'below comfort floor 20 °C' });
    expect(z.room.relay.output).toBe(true);
    // It cooled while blocked: the block lasted more than a tick.
    expect(reasons.length).toBeGreaterThan(1);
  });

  it('heats below its frost floor under a zone cap that blocks it within the band', async () => {
    const cold = await startZone({ initialC: 6.5, plan: zonePlan(false), capKw: 0 });
    expect(cold.setpoint()).toMatchObject({ allow: true, reason: 'below frost floor 7 °C: heating whatever the price or cap' });
    expect(cold.room.relay.output).toBe(true);
    expect(cold.log.lines.filter((l) => l.code === 'ZONE_FROST_FLOOR')).toHaveLength(1);
    await cold.tick();
    expect(cold.log.lines.filter((l) => l.code === 'ZONE_FROST_FLOOR')).toHaveLength(1);
  });

  it('is held off by a zone cap below its band but above its frost floor', async () => {
    const z = await startZone({ initialC: 15, plan: zonePlan(true), capKw: 0 });
    expect(z.setpoint()).toMatchObject({ allow: false, heldByCap: true });
    expect(z.room.relay.output).toBe(false);
  });
});
