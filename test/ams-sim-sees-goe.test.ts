/**
 * The try-out world's HAN meter sees the simulated car: the AMS reader simulator, following the
 * go-e simulator on the same aedes broker, adds the charger's published `nrg` (currents and total
 * power) to the home's draw, and wattshift's AMS reader adapter reads the sum.
 */
import mqtt from 'mqtt';
import { describe, expect, it } from 'vitest';
import { createMqttDevice } from '../src/devices/mqtt/index.js';
import { silentLogger } from '../src/log.js';
import { createAmsReaderSim } from '../src/sandbox/devices/amsreader-sim.js';
import { createGoeSim } from '../src/sandbox/devices/goe-sim.js';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';

const t0 = Date.UTC(2026, 0, 12, 0, 0, 0);
const hourMs = 3_600_000;
const quick = () => AbortSignal.timeout(500);
const w = useMqttDeviceWorld(t0, { reconnectPeriodMs: 100 });
/** The house: 1380 W, 2 A on each line. */
const homeW = 1380;
/** The car: 16 A on three lines at 230 V. */
const carW = 16 * 3 * 230;

describe('the simulated HAN meter beside the simulated go-e charger', () => {
  it('counts the charging car in its power, its phase currents and its energy, and drops it when the car pauses', async () => {
    const goe = createGoeSim({
      url: w.broker.url,
      topicPrefix: 'go-eCharger/777',
      startMs: t0,
      phases: 3,
      amp: 16,
      plugs: [{ atMs: t0, battery: { capacityKwh: 80, socPct: 10 } }],
    });
    await goe.start();
    w.cleanups.push(() => goe.close());
    const ams = createAmsReaderSim({
      url: w.broker.url,
      topic: 'ams/home',
      startMs: t0,
      load: () => ({ importW: homeW }),
      chargers: 'go-eCharger/+',
    });
    await ams.start();
    w.cleanups.push(() => ams.close());
    const meter = createMqttDevice(
      { type: 'amsreader', topic: 'ams/home' },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
      { staleAfterS: 60 },
    );
    w.cleanups.push(() => meter.close());
    const step = async (ms: number): Promise<void> => {
      await w.clock.advance(ms);
      await goe.advance(ms);
      await ams.advance(ms);
      await new Promise((r) => setTimeout(r, 5));
    };

    await eventually(async () => {
      await step(10_000);
      expect(await meter.powerMeter!.readPowerW(quick())).toBe(homeW + carW);
    });
    const phases = await meter.phaseMeter!.readPhases(quick());
    expect(phases.currentsA).toEqual([18, 18, 18]);

    // An hour of charging: the meter's import is the house and the car, as the charger metered it.
    const fromKwh = ams.importKwh;
    const carFromWh = goe.totalWh;
    for (let t = 0; t < hourMs; t += 60_000) await step(60_000);
    const carKwh = (goe.totalWh - carFromWh) / 1000;
    expect(carKwh).toBeGreaterThan(10);
    expect(ams.importKwh - fromKwh).toBeCloseTo(homeW / 1000 + carKwh, 1);

    // Paused, the car draws nothing, and the meter sees the house alone.
    const client = await mqtt.connectAsync(w.broker.url, { reconnectPeriod: 0 });
    w.cleanups.push(() => client.endAsync());
    await client.publishAsync('go-eCharger/777/frc/set', '1', { qos: 1 });
    await eventually(async () => {
      await step(10_000);
      expect(await meter.powerMeter!.readPowerW(quick())).toBe(homeW);
    });
    expect((await meter.phaseMeter!.readPhases(quick())).currentsA).toEqual([2, 2, 2]);
  });
});
