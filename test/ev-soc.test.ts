/**
 * The car's state of charge from an MQTT topic (aedes): merged into the charger's car state while
 * fresh, unknown when stale or unusable, and what the planner's need and `plan --explain` rest on.
 */
import mqtt from 'mqtt';
import { describe, expect, it } from 'vitest';
import { planView } from '../src/app-view.js';
import { renderPlan } from '../src/cli/plan-render.js';
import { defaultConfig } from '../src/config/load.js';
import { plan } from '../src/core/planner.js';
import { buildPriceSeries } from '../src/core/prices.js';
import type { EvParams, PlanInput } from '../src/core/types.js';
import { createSocTopic, withSoc } from '../src/devices/mqtt/soc-topic.js';
import { buildDevice } from '../src/devices/factory.js';
import { silentLogger } from '../src/log.js';
import type { EvState } from '../src/ports.js';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';

const t0 = Date.parse('2026-01-14T23:00:00Z');
const H = 3_600_000;
const never = new AbortController().signal;
const w = useMqttDeviceWorld(t0);

async function publisher(): Promise<(topic: string, payload: string) => Promise<void>> {
  const c = await mqtt.connectAsync(w.broker.url);
  w.cleanups.push(() => c.endAsync());
  return async (topic, payload) => {
    await c.publishAsync(topic, payload, { qos: 1, retain: true });
  };
}

const charger = (state: EvState) => ({ readEvState: async () => state });

describe('SoC from an MQTT topic', () => {
  it("adds a fresh SoC (JSON path, scale) to the charger's car state, and drops it once stale", async () => {
    const publish = await publisher();
    const soc = createSocTopic(
      { topic: 'car/state', path: 'battery.level', scale: 100, staleAfterS: 600 },
      { connection: w.connection, clock: w.clock, logger: silentLogger(), device: 'car' },
    );
    w.cleanups.push(() => soc.close());
    const reader = withSoc(charger({ plugged: true, charging: false }), soc);
    expect(await reader.readEvState(never)).toEqual({ plugged: true, charging: false });
    await publish('car/state', JSON.stringify({ battery: { level: 0.42 } }));
    await eventually(async () => expect(await reader.readEvState(never)).toEqual({ plugged: true, charging: false, socPct: 42 }));
    await w.clock.advance(601_000);
    expect(await reader.readEvState(never)).toEqual({ plugged: true, charging: false });
  });

  it("an unusable payload makes the SoC unknown, never a guess; the charger's own SoC wins", async () => {
    const publish = await publisher();
    const soc = createSocTopic(
      { topic: 'car/soc', path: '', scale: 1, staleAfterS: 600 },
      { connection: w.connection, clock: w.clock, logger: silentLogger(), device: 'car' },
    );
    w.cleanups.push(() => soc.close());
    await publish('car/soc', '55');
    await eventually(() => expect(soc.socPct()).toBe(55));
    await publish('car/soc', '140'); // not a percentage
    await eventually(() => expect(soc.socPct()).toBeUndefined());
    await publish('car/soc', 'unavailable');
    await publish('car/soc', '61');
    await eventually(() => expect(soc.socPct()).toBe(61));
    expect(await withSoc(charger({ plugged: true, charging: true, socPct: 70 }), soc).readEvState(never)).toMatchObject({ socPct: 70 });
  });

  it("is wired by the device factory from the charger's soc config", async () => {
    const publish = await publisher();
    const config = defaultConfig({
      mqtt: { url: w.broker.url },
      devices: [
        {
          id: 'car',
          kind: 'evCharger',
          charger: { type: 'goe', topicPrefix: 'go-eCharger/1' },
          soc: { topic: 'car/soc' },
          model: { capacityKwh: 60 },
        },
      ],
    });
    const built = buildDevice(config.devices[0]!, { buses: new Map(), mqtt: w.connection, clock: w.clock, logger: silentLogger() });
    w.cleanups.push(() => built.close());
    await publish('go-eCharger/1/car', '2');
    await publish('car/soc', '37.5');
    await eventually(async () =>
      expect(await built.capabilities.evStateReader?.readEvState(never)).toEqual({ plugged: true, charging: true, socPct: 37.5 }),
    );
  });
});

describe("the car's need in the plan", () => {
  const prices = Array.from({ length: 24 }, (_, i) => 0.1 + (i % 6) * 0.05);
  const slots = buildPriceSeries({
    slotMinutes: 60,
    fromMs: t0,
    toMs: t0 + 24 * H,
    timezone: 'Europe/Oslo',
    currency: 'EUR',
    spot: {
      actual: {
        units: { currency: 'EUR', energyUnit: 'kWh' },
        resolutionMinutes: 60,
        points: prices.map((p, i) => ({ startMs: t0 + i * H, price: p })),
      },
    },
    deltas: [],
    fees: { gridFeePerKwh: 0, taxPerKwh: 0 },
  });
  const input = (ev: Partial<EvParams>): PlanInput => ({
    slots,
    timezone: 'Europe/Oslo',
    currency: 'EUR',
    tank: null,
    location: { limitKw: 17, baseLoadKw: 0 },
    ev: { departureMs: t0 + 20 * H, minPowerKw: 4.14, maxPowerKw: 11, efficiency: 0.9, ...ev },
  });
  const config = defaultConfig({
    devices: [{ id: 'car', kind: 'evCharger', charger: { type: 'goe', topicPrefix: 'go-eCharger/1' }, model: { capacityKwh: 60 } }],
    mqtt: { url: 'mqtt://127.0.0.1' },
  });

  it('with a SoC the need is target SoC × capacity minus the SoC, and --explain says so', () => {
    const p = plan(input({ socPct: 30, targetSocPct: 80, capacityKwh: 60 }), t0);
    expect(p.evs?.ev?.energyNeededKwh).toBeCloseTo(30, 6); // (80 % − 30 %) × 60 kWh into the battery
    const text = renderPlan(planView(p, config, t0), { explain: true, timezone: 'Europe/Oslo' });
    expect(text).toContain("Car's need: state of charge 30 % → 80 % of 60 kWh: 30.0 kWh into the battery");
  });

  it('without a SoC it is the energy estimate, and --explain says that no SoC is known', () => {
    const p = plan(input({ energyNeededKwh: 24 }), t0);
    expect(p.evs?.ev?.energyNeededKwh).toBeCloseTo(24, 6);
    const text = renderPlan(planView(p, config, t0), { explain: true, timezone: 'Europe/Oslo' });
    expect(text).toContain("Car's need: no state of charge known: today's energy estimate, 24.0 kWh into the battery");
    expect(renderPlan(planView(p, config, t0), { explain: false, timezone: 'Europe/Oslo' })).not.toContain("Car's need");
  });
});
