/**
 * 1-phase/3-phase switching in real-time control, on real devices over a real broker: the AMS
 * reader simulator (HAN meter) and the go-e simulator on aedes, the supervised adapters, the fuse
 * guard and the control loop. A heavy load on L2 and L3 leaves 3 phases less than 6 A: the charger
 * goes to 1 phase on L1 (a fixed 3-phase charger would pause), and back to 3 phases when the room
 * returns, no sooner than the minimum interval, with no line over the fuse during a switch.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import type { DeviceConfig } from '../src/config/schema.js';
import { createMqttDevice } from '../src/devices/mqtt/index.js';
import { superviseDevice, type DeviceCapabilities } from '../src/devices/supervisor.js';
import { startControlLoop } from '../src/jobs/control-loop.js';
import { createFuseGuard } from '../src/jobs/fuse-guard.js';
import { silentLogger } from '../src/log.js';
import { createAmsReaderSim } from '../src/sandbox/devices/amsreader-sim.js';
import { createGoeSim } from '../src/sandbox/devices/goe-sim.js';
import { memoryLogger } from './fixtures/modbus/servers.js';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';
import { goeHeard, listHeard, noMetering, tickApplied } from './helpers/loop-world.js';

const t0 = Date.UTC(2026, 0, 12, 17, 0, 0);
const minute = 60_000;
const w = useMqttDeviceWorld(t0, { reconnectPeriodMs: 100 });

const configWith = (phaseSwitching: boolean) =>
  parseConfig(
    {
      version: 1,
      site: {
        timezone: 'Europe/Oslo',
        priceArea: 'NO1',
        currency: 'NOK',
        locationLimitKw: 17,
        fuse: { mainFuseA: 25, phases: 3, supply: 'TN', meter: 'han', raiseAfterS: 60, staleAfterS: 30 },
      },
      spark: { clientId: 'c', clientSecret: { env: 'CS' } },
      storage: { path: ':memory:' },
      mqtt: { url: 'mqtt://127.0.0.1:1883' },
      devices: [
        { id: 'han', kind: 'meter', meter: { type: 'amsreader', topic: 'ams/meter' }, staleAfterS: 60 },
        {
          id: 'car',
          kind: 'evCharger',
          charger: { type: 'goe', topicPrefix: 'go-eCharger/ps2' },
          safeCurrentA: 6,
          model: { capacityKwh: 60, phases: 3, maxCurrentA: 16, ...(phaseSwitching ? { phaseSwitching: { enabled: true, minIntervalS: 300 } } : {}) },
        },
      ],
    },
    { env: { CS: 'client-secret-from-env' } },
  ).config;

/** The house without the car, A per line: a 20 A load on L2 and L3 from 17:02 to 17:08. */
const heavyFrom = t0 + 2 * minute;
const heavyUntil = t0 + 8 * minute;
const houseA = (atMs: number): number[] => (atMs >= heavyFrom && atMs < heavyUntil ? [4, 20, 20] : [4, 2, 2]);

async function world(phaseSwitching: boolean) {
  const config = configWith(phaseSwitching);
  const deviceOf = (id: string): DeviceConfig => config.devices.find((d) => d.id === id)!;
  const goe = createGoeSim({
    url: w.broker.url,
    topicPrefix: 'go-eCharger/ps2',
    startMs: t0,
    phases: 3,
    amp: 16,
    phaseSwitch: true,
    psm: 2,
    minToggleWaitMs: 30_000,
    switchPauseMs: 5_000,
    plugs: [{ atMs: t0, battery: { capacityKwh: 60, socPct: 20 } }],
  });
  await goe.start();
  w.cleanups.push(() => goe.close());
  // The car's current on each line (TN: 1-phase on L1).
  const carA = (): number[] => [0, 1, 2].map((l) => (l < goe.phasesNow && goe.powerW > 0 ? goe.powerW / (goe.phasesNow * 230) : 0));
  const lineA = (at: number): number[] => houseA(at).map((a, l) => a + carA()[l]!);
  const han = createAmsReaderSim({
    url: w.broker.url,
    topic: 'ams/meter',
    startMs: t0,
    load: (at) => ({ importW: lineA(at).reduce((s, a) => s + a * 230, 0), currentsA: lineA(at) }),
  });
  await han.start();
  w.cleanups.push(() => han.close());

  const dev = (source: Parameters<typeof createMqttDevice>[0]) => {
    const d = createMqttDevice(
      source,
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
      { staleAfterS: 120, requestTimeoutMs: 2000 },
    );
    w.cleanups.push(() => d.close());
    return d;
  };
  const hanDev = dev({ type: 'amsreader', topic: 'ams/meter' });
  const goeDev = dev({ type: 'goe', topicPrefix: 'go-eCharger/ps2' });
  const sup = (id: string, kind: 'meter' | 'evCharger', capabilities: DeviceCapabilities) =>
    superviseDevice({ id, kind, capabilities, safeCurrentA: 6, leaseMs: 600_000, readTimeoutMs: 2000 }, { clock: w.clock, logger: silentLogger() });
  const hanSup = sup('han', 'meter', hanDev);
  const carSup = sup('car', 'evCharger', goeDev);
  // The meter's first list (published until the adapter's subscription takes it) and all the
  // charger publishes, heard before the first tick.
  await eventually(async () => {
    await han.publishRaw('', '{"data":{"P":0,"I1":0,"I2":0,"I3":0}}');
    expect(await hanDev.phaseMeter!.readPhases(AbortSignal.timeout(200))).toMatchObject({ atMs: t0, currentsA: [0, 0, 0] });
  });
  await goeHeard(goeDev, goe);

  const log = memoryLogger();
  const control = startControlLoop({
    devices: [{ config: deviceOf('car'), subject: 'device:car', device: carSup }],
    mainMeter: { config: deviceOf('han'), subject: 'location', device: hanSup },
    fuse: { guard: createFuseGuard(config.site.fuse!, log.logger), meter: hanSup, meterId: 'han' },
    metering: noMetering,
    clock: w.clock,
    logger: log.logger,
    tickMs: 10_000,
    slotMinutes: 60,
    inputs: {
      plan: () => null,
      locationCapKw: () => 17,
      deviceCapKw: () => undefined,
      baseLoadKw: () => 0.5,
      intent: () => ({ mode: 'boost', boostUntilMs: null }),
      estimatedTankC: () => undefined,
    },
    onTick: () => undefined,
  });
  w.cleanups.push(() => control.stop());
  await tickApplied(control, t0);

  /** Every line's current at each sampled instant (after the tick applied its setpoint). */
  const samples: { at: number; lines: number[]; phases: number; powerW: number }[] = [];
  const step = async (ms: number): Promise<void> => {
    for (let t = 0; t < ms; t += 10_000) {
      const at = w.clock.nowMs() + 10_000;
      // The meter lists the lines as they will be at the next tick (to the hundredth); the clock
      // moves once the adapters have that list and the charger's state, and the tick has ended.
      await han.advance(10_000);
      await listHeard(hanDev, { atMs: w.clock.nowMs(), currentsA: lineA(at).map((a) => Math.round(a * 100) / 100) });
      await goe.advance(10_000);
      await goeHeard(goeDev, goe);
      await w.clock.advance(10_000);
      await tickApplied(control, at);
      samples.push({ at, lines: lineA(at), phases: goe.phasesNow, powerW: goe.powerW });
    }
  };
  return { goe, log, step, samples, setpoint: () => control.last()!.decision.setpoints.find((s) => s.kind === 'charger') };
}

/** Samples outside the control loop's reaction to a step of the house load (one tick plus the meter's list). */
const outsideReaction = (at: number): boolean => !(at >= heavyFrom && at < heavyFrom + 30_000);

describe('phase switching under the main fuse', () => {
  it('runs 1-phase while L2/L3 leave 3 phases under 6 A, 3-phase when room returns; no line over the fuse; psm written twice', async () => {
    const f = await world(true);
    await f.step(2 * minute);
    expect([f.goe.phasesNow, f.goe.amp]).toEqual([3, 16]);
    expect(f.goe.setsOf('psm')).toBe(0); // it already forces 3 phases

    // 20 A on L2 and L3: 3 phases get 25 − 1 − 20 = 4 A < 6 A. To 1 phase on L1, at 16 A (L1: 4 + 16 = 20 A).
    await f.step(3 * minute);
    expect(f.goe.phasesNow).toBe(1);
    expect(f.goe.powerW).toBe(16 * 230);
    expect(f.goe.psm).toBe(1);
    expect(f.setpoint()).toMatchObject({ currentA: 16, phases: 1 });

    // The load ends at 17:08; the fuse raises after its quiet minute, the switch waits for 300 s since the last.
    await f.step(6 * minute);
    expect(f.goe.phasesNow).toBe(3);
    expect(f.goe.powerW).toBe(16 * 3 * 230);
    expect(f.goe.setsOf('psm')).toBe(2);

    const switches = f.log.lines.filter((l) => l.msg === 'phase switch');
    expect(switches.map((l) => [l.from, l.to])).toEqual([
      [3, 1],
      [1, 3],
    ]);
    expect(switches[0]?.reason).toMatch(/fuse leaves 3-phase less than 6 A/);
    expect(f.log.lines.filter((l) => l.msg === 'phase switch done')).toHaveLength(2);
    // At least the minimum interval (300 s) between the two toggles the charger made.
    const oneToThree = f.samples.find((s) => s.at > t0 + 5 * minute && s.phases === 3)!.at;
    const threeToOne = f.samples.find((s) => s.phases === 1)!.at;
    expect(oneToThree - threeToOne).toBeGreaterThanOrEqual(300_000 - 30_000);

    // No line over the fuse at any sampled instant (but the one tick the loop needs to see the load step).
    const over = f.samples.filter((s) => outsideReaction(s.at) && s.lines.some((a) => a > 25 + 1e-9));
    expect(over).toEqual([]);
    // It charged through the heavy load instead of pausing.
    const heavy = f.samples.filter((s) => s.at >= heavyFrom + 60_000 && s.at < heavyUntil);
    expect(heavy.filter((s) => s.powerW > 0).length).toBeGreaterThan(heavy.length - 3);
  });

  it('without phaseSwitching the same load pauses the 3-phase charger and psm is never written', async () => {
    const f = await world(false);
    await f.step(5 * minute);
    expect(f.goe.phasesNow).toBe(3);
    expect(f.goe.powerW).toBe(0);
    expect(f.goe.setsOf('psm')).toBe(0);
    expect(f.setpoint()).not.toHaveProperty('phases');
  });
});
