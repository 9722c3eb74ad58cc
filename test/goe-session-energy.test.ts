/**
 * A go-e charger's session energy, from the simulated charger over aedes: go-e's API v2 publishes
 * `wh` ("energy in Wh since car connected", a double; go-eCharger-API-v2, apikeys-en.md), which
 * the adapter reads as the car's session energy, the figure Home Assistant's session sensor shows.
 */
import mqtt from 'mqtt';
import { describe, expect, it } from 'vitest';
import { homeView } from '../src/app-view.js';
import { defaultConfig } from '../src/config/load.js';
import type { MqttDevice } from '../src/devices/mqtt/index.js';
import { stateMessages } from '../src/ha/state.js';
import { haTopics } from '../src/ha/topics.js';
import type { ControlSnapshot } from '../src/jobs/control-loop.js';
import type { EvState } from '../src/ports.js';
import type { GoeSim, GoeSimPlug } from '../src/sandbox/devices/goe-sim.js';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';
import { startGoeDevice, stepGoe } from './helpers/goe-device.js';

const t0 = Date.UTC(2026, 0, 12, 0, 0);
const H = 3_600_000;
const prefix = 'go-eCharger/424242';
const quick = () => AbortSignal.timeout(500);
const battery = { capacityKwh: 80, socPct: 10 };
const w = useMqttDeviceWorld(t0, { reconnectPeriodMs: 100 });

describe('the session energy of a go-e charger', () => {
  let sim: GoeSim;
  let dev: MqttDevice;
  const start = async (plugs: GoeSimPlug[]) => {
    ({ sim, dev } = await startGoeDevice(w, { topicPrefix: prefix, startMs: t0, phases: 3, amp: 16, plugs }));
  };
  const step = (ms: number) => stepGoe(w, sim, ms);
  const state = () => dev.evStateReader!.readEvState(quick());

  it('the simulator publishes wh in Wh since the car connected, to the hundredth as a double, restarting with the next car', async () => {
    await start([
      { atMs: t0 + 60_000, untilMs: t0 + H, battery },
      { atMs: t0 + 2 * H, battery },
    ]);
    const watcher = await mqtt.connectAsync(w.broker.url, { reconnectPeriod: 0 });
    w.cleanups.push(() => watcher.endAsync());
    let wh: number | undefined;
    watcher.on('message', (_topic, payload) => void (wh = JSON.parse(payload.toString()) as number));
    await watcher.subscribeAsync(`${prefix}/wh`, { qos: 1 });
    await eventually(() => expect(wh).toBe(0));
    await step(H / 2 + 7_777);
    // The first car's session is all the charger has metered so far.
    await eventually(() => expect(wh).toBeCloseTo(sim.totalWh, 2));
    await step(2 * H);
    const first = sim.totalWh;
    expect(first).toBeGreaterThan(5_000);
    // Past the second car's arrival: its own energy only.
    await eventually(() => expect(wh).toBeCloseTo(sim.totalWh - firstSession(sim), 2));
    expect(wh).toBeLessThan(first);
  });

  it("reads wh as the car's session energy in kWh: while charging, after the car left, and anew for the next car", async () => {
    await start([
      { atMs: t0 + 60_000, untilMs: t0 + H, battery },
      { atMs: t0 + 2 * H, battery },
    ]);
    await eventually(async () => expect(await state()).toEqual({ plugged: false, charging: false, sessionKwh: 0 }));
    await step(H / 2);
    await eventually(async () => expect((await state()).sessionKwh).toBeCloseTo(sim.totalWh / 1000, 4));
    expect((await state()).sessionKwh).toBeGreaterThan(5);
    await step(H / 2 + 10 * 60_000);
    const firstKwh = sim.totalWh / 1000;
    // The car has gone: the session's energy stays what it was when it left.
    await eventually(async () => expect(await state()).toMatchObject({ plugged: false, sessionKwh: expect.closeTo(firstKwh, 4) }));
    await step(H + 10 * 60_000);
    await eventually(async () =>
      expect(await state()).toMatchObject({ plugged: true, charging: true, sessionKwh: expect.closeTo(sim.totalWh / 1000 - firstKwh, 4) }),
    );
    expect((await state()).sessionKwh).toBeLessThan(firstKwh);
    // Home Assistant's session energy sensor of the charger shows it.
    const ev = await state();
    const published = stateMessages(haTopics('wattshift'), viewOf(ev)).get('wattshift/car/session_energy');
    expect(Number(published)).toBeCloseTo(ev.sessionKwh!, 3);
  });
});

/** The daemon's view of a home whose charger `car` reads `ev`. */
function viewOf(ev: EvState) {
  const config = defaultConfig({
    mqtt: { url: 'mqtt://127.0.0.1:1883' },
    devices: [{ id: 'car', kind: 'evCharger', charger: { type: 'goe', topicPrefix: prefix }, model: { capacityKwh: 80 } }],
  });
  const control = { readings: new Map([['car', { atMs: t0, ev, errors: [] }]]), decision: { setpoints: [] } } as unknown as ControlSnapshot;
  return homeView({
    config,
    nowMs: t0,
    plan: null,
    control,
    devices: new Map(),
    jobs: [],
    locationId: 'loc',
    events: [],
    resources: new Map(),
    wishes: () => ({ mode: 'auto', boostUntilMs: null, floorC: null, departureMs: null, targetKwh: null, targetSocPct: null }),
    outbox: { pending: 0, sending: 0, accepted: 0, rejected: 0, oldestPendingDeadlineMs: null, nextAttemptMs: null },
  });
}

/** The first car's energy, Wh: everything metered before the second car came at t0 + 2 h. */
function firstSession(sim: GoeSim): number {
  let wh = 0;
  for (const [hour, kwh] of sim.energyKwhByHour()) if (hour < t0 + 2 * H) wh += kwh * 1000;
  return wh;
}
