/**
 * A heated zone with a thermostat on real peers: a zigbee2mqtt-style thermostat (a test-side MQTT
 * client that takes `{"occupied_heating_setpoint": v}` on `<name>/set` and publishes its state on
 * `<name>`) on aedes, built by the device factory, supervised, and driven by the control loop. The
 * setpoint follows the plan (band top to pre-heat, lower edge to coast, the comfort target
 * otherwise), is written only on change, and is left at the comfort target when wattshift stops.
 */
import mqtt from 'mqtt';
import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import { parseConfig } from '../src/config/load.js';
import type { Plan, ZoneSlotPlan } from '../src/core/types.js';
import { buildDevice } from '../src/devices/factory.js';
import { superviseDevice } from '../src/devices/supervisor.js';
import { brokerUrlOptions } from '../src/devices/mqtt/transport.js';
import { startControlLoop } from '../src/jobs/control-loop.js';
import { zoneComfortSetpointC } from '../src/jobs/zone-control.js';
import { silentLogger } from '../src/log.js';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';
import { noMetering, planOf, TICK_MS, tickApplied, PACE_POLL_MS } from './helpers/loop-world.js';

// Wednesday 14 January 2026, 12:00 UTC: 13:00 in Oslo, in the day band 20..22.5 °C.
const t0 = Date.UTC(2026, 0, 14, 12);
const w = useMqttDeviceWorld(t0);

/** zigbee2mqtt's `/set` payload for a thermostat's setpoint (zigbee2mqtt.io device pages, "Exposes: Climate"). */
const isSetPayload = new Ajv().compile<{ occupied_heating_setpoint: number }>({
  type: 'object',
  properties: { occupied_heating_setpoint: { type: 'number', minimum: 5, maximum: 30, multipleOf: 0.5 } },
  required: ['occupied_heating_setpoint'],
  additionalProperties: false,
});

async function startThermostat(roomC: number) {
  const client = await mqtt.connectAsync({ ...brokerUrlOptions(w.broker.url), clientId: 'z2m-bedroom-thermostat' });
  w.cleanups.push(() => client.endAsync());
  const written: number[] = [];
  let setpointC = 21;
  const publishState = () =>
    client.publishAsync(
      'zigbee2mqtt/bedroom',
      JSON.stringify({ occupied_heating_setpoint: setpointC, local_temperature: roomC, running_state: 'idle' }),
    );
  client.on('message', (_topic, payload) => {
    const body: unknown = JSON.parse(payload.toString());
    if (!isSetPayload(body)) throw new Error(`not a zigbee2mqtt setpoint: ${payload.toString()}`);
    setpointC = body.occupied_heating_setpoint;
    written.push(setpointC);
    void publishState();
  });
  await client.subscribeAsync('zigbee2mqtt/bedroom/set');
  return { written, publishState };
}

const zonePlan = (zone: ZoneSlotPlan | undefined): Plan => planOf(t0, 60, [{ price: 1, ...(zone ? { zones: { bedroom: zone } } : {}) } as never]);
const preheat: ZoneSlotPlan = { energyKwh: 0.8, powerKw: 0.8, on: true, endTempC: 22.3, minC: 20, maxC: 22.5 };
const coast: ZoneSlotPlan = { energyKwh: 0, powerKw: 0, on: false, endTempC: 20.4, minC: 20, maxC: 22.5 };

async function startZone(plan: { current: Plan }) {
  const thermostat = await startThermostat(20.8);
  const { config } = parseConfig({
    version: 1,
    site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 17 },
    spark: { clientId: 'c', clientSecret: 's' },
    storage: { path: ':memory:' },
    mqtt: { url: w.broker.url },
    devices: [
      {
        id: 'bedroom',
        kind: 'zone',
        thermostat: { type: 'mqtt', commandTopic: 'zigbee2mqtt/bedroom/set', stateTopic: 'zigbee2mqtt/bedroom', stepC: 0.5 },
        thermometer: { type: 'mqtt', stateTopic: 'zigbee2mqtt/bedroom', temperatureCPath: 'local_temperature' },
        model: { powerKw: 0.8 },
        schedule: [
          { cron: '0 6 * * *', minC: 20, maxC: 22.5 },
          { cron: '0 22 * * *', minC: 17, maxC: 21 },
        ],
      },
    ],
  });
  const d = config.devices[0]!;
  if (d.kind !== 'zone') throw new Error('kind');
  const built = buildDevice(d, { buses: new Map(), mqtt: w.connection, clock: w.clock, logger: silentLogger(), requestTimeoutMs: 2000 });
  w.cleanups.push(() => built.close());
  await thermostat.publishState();
  await eventually(() => built.capabilities.thermometer!.readTemperatureC(AbortSignal.timeout(500)), 5000, PACE_POLL_MS);
  const device = superviseDevice(
    {
      id: d.id,
      kind: d.kind,
      capabilities: built.capabilities,
      leaseMs: 10 * 60_000,
      readTimeoutMs: 2000,
      safeSetpointC: () => zoneComfortSetpointC(d, 'comfort', w.clock.nowMs(), 'Europe/Oslo')!,
    },
    { clock: w.clock, logger: silentLogger() },
  );
  const control = startControlLoop({
    devices: [{ config: d, subject: 'device:bedroom', device }],
    mainMeter: null,
    metering: noMetering,
    clock: w.clock,
    logger: silentLogger(),
    tickMs: TICK_MS,
    slotMinutes: 60,
    timezone: 'Europe/Oslo',
    inputs: {
      plan: () => plan.current,
      locationCapKw: () => 17,
      deviceCapKw: () => undefined,
      baseLoadKw: () => 0.5,
      intent: () => ({ mode: 'auto', boostUntilMs: null }),
      estimatedTankC: () => undefined,
    },
    onTick: () => undefined,
  });
  w.cleanups.push(() => control.stop());
  await tickApplied(control, t0);
  return {
    ...thermostat,
    device,
    control,
    async tick() {
      await thermostat.publishState();
      await w.clock.advance(TICK_MS);
      await tickApplied(control, w.clock.nowMs());
    },
  };
}

describe('a heated zone with a thermostat', () => {
  it('gets the band top to pre-heat, its lower edge to coast, and each setpoint once', async () => {
    const plan = { current: zonePlan(preheat) };
    const z = await startZone(plan);
    await eventually(() => expect(z.written).toEqual([22.5]), 5000, PACE_POLL_MS);
    await z.tick();
    await z.tick();
    expect(z.written).toEqual([22.5]);
    plan.current = zonePlan(coast);
    await z.tick();
    await eventually(() => expect(z.written).toEqual([22.5, 20]), 5000, PACE_POLL_MS);
    expect(z.device.health().setpointC).toBe(20);
  });

  it('holds the comfort target (the middle of the band) without a plan for it, and is left there at stop', async () => {
    const plan = { current: zonePlan(coast) };
    const z = await startZone(plan);
    await eventually(() => expect(z.written).toEqual([20]), 5000, PACE_POLL_MS);
    plan.current = zonePlan(undefined);
    await z.tick();
    await eventually(() => expect(z.written).toEqual([20, 21.5]), 5000, PACE_POLL_MS);
    plan.current = zonePlan(coast);
    await z.tick();
    await eventually(() => expect(z.written).toEqual([20, 21.5, 20]), 5000, PACE_POLL_MS);
    await z.control.stop();
    await z.device.stop();
    await eventually(() => expect(z.written.at(-1)).toBe(21.5), 5000, PACE_POLL_MS);
  });
});
