/**
 * The main fuse in real-time control, on real devices over real sockets: the AMS reader simulator
 * (HAN meter) on aedes, a charger (the go-e simulator on aedes, or the OCPP charge point simulator
 * on the central system's WebSocket), the supervised adapters and the control loop. A heavy load on
 * L1 must bring the charger down so L1 stays under the fuse; a phase the meter does not measure
 * holds the charger at its safe current.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import type { DeviceConfig } from '../src/config/schema.js';
import { createMqttDevice } from '../src/devices/mqtt/index.js';
import { superviseDevice } from '../src/devices/supervisor.js';
import { startControlLoop } from '../src/jobs/control-loop.js';
import { createFuseGuard } from '../src/jobs/fuse-guard.js';
import { silentLogger } from '../src/log.js';
import type { DeviceCapabilities } from '../src/devices/supervisor.js';
import { createCentralSystem } from '../src/devices/ocpp/central-system.js';
import { createOcppCharger } from '../src/devices/ocpp/ocpp-charger.js';
import { createOcppChargePointSim } from '../src/sandbox/devices/ocpp-charge-point-sim.js';
import { createAmsReaderSim } from '../src/sandbox/devices/amsreader-sim.js';
import { createGoeSim } from '../src/sandbox/devices/goe-sim.js';
import { memoryLogger } from './fixtures/modbus/servers.js';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';
import { goeHeard, noMetering, PACE_POLL_MS, tickApplied } from './helpers/loop-world.js';
import { password } from './helpers/ocpp-world.js';

const t0 = Date.UTC(2026, 0, 12, 17, 0, 0);
const minute = 60_000;
const w = useMqttDeviceWorld(t0, { reconnectPeriodMs: 100 });

const fuseConfig = (supply: 'TN' | 'IT') =>
  parseConfig(
    {
      version: 1,
      site: {
        timezone: 'Europe/Oslo',
        priceArea: 'NO1',
        currency: 'NOK',
        locationLimitKw: 17,
        fuse: { mainFuseA: 25, phases: 3, supply, meter: 'han', raiseAfterS: 60, staleAfterS: 30 },
      },
      spark: { clientId: 'c', clientSecret: { env: 'CS' } },
      storage: { path: ':memory:' },
      mqtt: { url: 'mqtt://127.0.0.1:1883' },
      devices: [
        { id: 'han', kind: 'meter', meter: { type: 'amsreader', topic: 'ams/meter' }, staleAfterS: 60 },
        {
          id: 'car',
          kind: 'evCharger',
          charger: { type: 'goe', topicPrefix: 'go-eCharger/fuse01' },
          safeCurrentA: 6,
          model: { capacityKwh: 60, phases: 3, maxCurrentA: 16 },
        },
      ],
    },
    { env: { CS: 'client-secret-from-env' } },
  ).config;
const config = fuseConfig('TN');
const deviceOf = (id: string): DeviceConfig => config.devices.find((d) => d.id === id)!;

/** The house without the car, A per phase: a 2.3 kW oven on L1 from 17:02:30 to 17:10. */
const houseA = (atMs: number): number[] => (atMs >= t0 + 150_000 && atMs < t0 + 10 * minute ? [14, 2, 2] : [4, 2, 2]);

/** A 3-phase charger with a plugged car, through its real adapter. */
interface Car {
  capabilities: DeviceCapabilities;
  /** The current the charger offers now, A. */
  amp(): number;
  powerW(): number;
  /** Runs the charger `ms` ahead; resolves once its adapter has heard what it reports. */
  advance(ms: number): Promise<void>;
}

async function goeCar(): Promise<Car> {
  const goe = createGoeSim({
    url: w.broker.url,
    topicPrefix: 'go-eCharger/fuse01',
    startMs: t0,
    phases: 3,
    amp: 16,
    plugs: [{ atMs: t0, battery: { capacityKwh: 60, socPct: 20 } }],
  });
  await goe.start();
  const dev = createMqttDevice(
    { type: 'goe', topicPrefix: 'go-eCharger/fuse01' },
    { connection: w.connection, clock: w.clock, logger: silentLogger() },
    { staleAfterS: 120, requestTimeoutMs: 2000 },
  );
  w.cleanups.push(
    () => goe.close(),
    () => dev.close(),
  );
  await goeHeard(dev, goe);
  const advance = async (ms: number): Promise<void> => {
    await goe.advance(ms);
    await goeHeard(dev, goe);
  };
  return { capabilities: dev, amp: () => goe.amp, powerW: () => goe.powerW, advance };
}

/** The OCPP charge point reports its power in MeterValues every 10 s; wattshift limits it with SetChargingProfile. */
async function ocppCar(): Promise<Car> {
  const cs = createCentralSystem({
    host: '127.0.0.1',
    port: 0,
    heartbeatIntervalS: 30,
    meterValueSampleIntervalS: 10,
    chargePoints: [{ id: 'cp1', password }],
    requestTimeoutMs: 2000,
    clock: w.clock,
    logger: silentLogger(),
  });
  const port = await cs.listen();
  const charger = createOcppCharger(cs.link('cp1'), {
    id: 'car',
    connectorId: 1,
    idTag: 'wattshift',
    maxCurrentA: 16,
    safeCurrentA: 6,
    leaseS: 600,
    staleAfterS: 120,
    clock: w.clock,
    logger: silentLogger(),
  });
  const sim = createOcppChargePointSim({
    url: `ws://127.0.0.1:${port}/ocpp`,
    identity: 'cp1',
    password,
    startMs: t0,
    maxCurrentA: 16,
    plugs: [{ atMs: t0, battery: { capacityKwh: 60, socPct: 20 } }],
    reconnectMs: { initial: 50, max: 200 },
  });
  w.cleanups.push(
    () => cs.close(),
    async () => charger.close(),
    () => sim.close(),
  );
  await sim.start();
  await eventually(async () => {
    await sim.settle();
    expect(sim.config('MeterValueSampleInterval')).toBe('10');
  });
  // The charge point's advance waits until the central system has answered all it sent.
  return { capabilities: charger, amp: () => sim.offeredA, powerW: () => sim.powerW, advance: (ms) => sim.advance(ms) };
}

/** `forgeL1`: what the meter lists for L1 at a time instead of the truth (undefined: the truth). */
async function fuseWorld(car: Car, opts: { supply?: 'TN' | 'IT'; unmeasuredLines?: number[]; forgeL1?: (atMs: number) => number | undefined } = {}) {
  const carA = (): number => car.powerW() / (3 * 230);
  const han = createAmsReaderSim({
    url: w.broker.url,
    topic: 'ams/meter',
    startMs: t0,
    ...(opts.unmeasuredLines ? { unmeasuredLines: opts.unmeasuredLines } : {}),
    load: (at) => {
      const currentsA = houseA(at).map((a) => a + carA());
      const importW = currentsA.reduce((s, a) => s + a * 230, 0);
      const forged = opts.forgeL1?.(at);
      return { importW, currentsA: forged === undefined ? currentsA : [forged, ...currentsA.slice(1)] };
    },
  });
  await han.start();
  w.cleanups.push(() => han.close());

  const hanDev = createMqttDevice(
    { type: 'amsreader', topic: 'ams/meter' },
    { connection: w.connection, clock: w.clock, logger: silentLogger() },
    { staleAfterS: 60 },
  );
  w.cleanups.push(() => hanDev.close());
  const sup = (id: string, kind: 'meter' | 'evCharger', capabilities: DeviceCapabilities) =>
    superviseDevice({ id, kind, capabilities, safeCurrentA: 6, leaseMs: 600_000, readTimeoutMs: 2000 }, { clock: w.clock, logger: silentLogger() });
  const hanSup = sup('han', 'meter', hanDev);
  const carSup = sup('car', 'evCharger', car.capabilities);
  // The meter's first list, published until the adapter's subscription takes it, before the first tick.
  await eventually(async () => {
    await han.publishRaw('', '{"data":{"P":0,"I1":0,"I2":0,"I3":0}}');
    expect(await hanDev.phaseMeter!.readPhases(AbortSignal.timeout(200))).toMatchObject({ atMs: t0, currentsA: [0, 0, 0] });
    expect((await car.capabilities.evStateReader!.readEvState(AbortSignal.timeout(200))).plugged).toBe(true);
  });

  const log = memoryLogger();
  const cfg = fuseConfig(opts.supply ?? 'TN');
  const control = startControlLoop({
    devices: [{ config: deviceOf('car'), subject: 'device:car', device: carSup }],
    mainMeter: { config: deviceOf('han'), subject: 'location', device: hanSup },
    fuse: { guard: createFuseGuard(cfg.site.fuse!, log.logger), meter: hanSup, meterId: 'han' },
    metering: noMetering,
    clock: w.clock,
    logger: silentLogger(),
    tickMs: 10_000,
    slotMinutes: 60,
    inputs: {
      plan: () => null,
      locationCapKw: () => 17,
      deviceCapKw: () => undefined,
      baseLoadKw: () => 0.5,
      // Boost asks for the charger's maximum: the fuse must hold whatever is asked.
      intent: () => ({ mode: 'boost', boostUntilMs: null }),
      estimatedTankC: () => undefined,
    },
    onTick: () => undefined,
  });
  w.cleanups.push(() => control.stop());
  await tickApplied(control, t0);

  const l1 = new Map<number, number>();
  let hanSilent = false;
  const step = async (ms: number): Promise<void> => {
    for (let t = 0; t < ms; t += 10_000) {
      // The meter lists L1 as it will be at the next tick.
      const at = w.clock.nowMs() + 10_000;
      const forged = opts.forgeL1?.(at);
      const listed = forged ?? Math.round((houseA(at)[0]! + carA()) * 100) / 100;
      await han.advance(10_000);
      // Pacing, not a timed assertion: the control tick must see this list, so wait for it to land.
      if (!hanSilent) {
        await eventually(
          async () => {
            const heard = await hanDev.phaseMeter!.readPhases(AbortSignal.timeout(200)).then(
              (r) => ({ atMs: r.atMs, l1: r.currentsA[0] }),
              (err: { code?: string }) => err.code,
            );
            // A forged list is read as listed or refused. Refused, the phase currents are missing, as a
            // refused list before it may have made them already: the tick sees none either way, and
            // the list lands before the next one (the broker keeps one publisher's order).
            if (forged !== undefined && heard === 'DEVICE_BAD_VALUE') return;
            expect(heard).toEqual({ atMs: w.clock.nowMs(), l1: listed });
          },
          5000,
          PACE_POLL_MS,
        );
      }
      await car.advance(10_000);
      await w.clock.advance(10_000);
      await tickApplied(control, at);
      l1.set(at, houseA(at)[0]! + carA());
    }
  };
  return {
    han,
    log,
    l1,
    step,
    silence() {
      han.setSilent(true);
      hanSilent = true;
    },
    setpoint: () => control.last()!.decision.setpoints.find((s) => s.kind === 'charger'),
  };
}

describe('main fuse control with a HAN meter', () => {
  for (const [name, makeCar] of [
    ['a go-e charger', goeCar],
    ['an OCPP charger (SetChargingProfile)', ocppCar],
  ] as const) {
    it(`${name}: lowered when L1 is loaded, L1 kept under the fuse, raised only after a quiet minute, the safe current when the meter goes silent`, async () => {
      const car = await makeCar();
      const f = await fuseWorld(car);

      await f.step(2 * minute);
      expect(car.amp()).toBe(16);
      expect(f.setpoint()).toMatchObject({ currentA: 16, reason: 'boost' });

      // The oven on L1: 14 A + 16 A = 30 A. The charger comes down to 25 − 1 − 14 = 10 A.
      await f.step(8 * minute - 10_000);
      expect(car.amp()).toBe(10);
      expect(f.setpoint()?.reason).toMatch(/^main fuse 25 A: L1 at 24\.0 A/);
      const heavy = [...f.l1].filter(([at]) => at >= t0 + 150_000 + 30_000 && at < t0 + 10 * minute);
      expect(heavy.length).toBeGreaterThan(40);
      expect(Math.max(...heavy.map(([, a]) => a))).toBeLessThanOrEqual(25);
      expect(f.log.lines.filter((l) => l.code === 'FUSE_LIMIT')).toHaveLength(1);

      // The oven is off at 17:10: the charger waits a quiet minute before going back up.
      await f.step(40_000);
      expect(f.setpoint()?.reason).toMatch(/^main fuse 25 A: L1 at 14\.0 A/);
      expect(car.amp()).toBe(10);
      await f.step(50_000);
      expect(car.amp()).toBe(16);
      expect(f.setpoint()?.reason).toBe('boost');

      // The meter goes silent: no headroom credit after 30 s, the charger gets its safe current.
      f.silence();
      await f.step(50_000);
      expect(car.amp()).toBe(6);
      expect(f.setpoint()?.reason).toMatch(/phase currents stale/);
      expect(f.log.lines.filter((l) => l.code === 'FUSE_PHASES_UNKNOWN').map((l) => l['why'])).toEqual(['phase currents stale']);
    });
  }

  it('an IT meter that does not measure L2: a 3-phase charger is held at its safe current, FUSE_PHASES_UNKNOWN logged once', async () => {
    const car = await goeCar();
    const f = await fuseWorld(car, { supply: 'IT', unmeasuredLines: [2] });
    await f.step(minute);
    expect(car.amp()).toBe(6);
    expect(f.setpoint()?.reason).toBe('main fuse: L2 current not measured, safe current');
    expect(f.log.lines.filter((l) => l.code === 'FUSE_PHASES_UNKNOWN').map((l) => l['why'])).toEqual(['L2 current not measured']);
  });

  it('a meter listing -1000 A on L1 (an "empty" line) does not give the charger more current', async () => {
    const car = await goeCar();
    // From 17:04 to 17:09, while the oven loads L1, the meter lists L1 at -1000 A.
    const forged = (at: number): number | undefined => (at >= t0 + 4 * minute && at < t0 + 9 * minute ? -1000 : undefined);
    const f = await fuseWorld(car, { forgeL1: forged });
    await f.step(4 * minute - 10_000);
    expect(car.amp()).toBe(10);
    const amps: number[] = [];
    for (let i = 0; i < 30; i++) {
      await f.step(10_000);
      amps.push(car.amp());
    }
    // Never above what the fuse allowed before; the safe current once the good reading went stale.
    expect(Math.max(...amps)).toBeLessThanOrEqual(10);
    expect(amps.at(-1)).toBe(6);
    expect(f.setpoint()?.reason).toMatch(/phase currents stale|not measured/);
    expect(Math.max(...f.l1.values())).toBeLessThanOrEqual(25);
  });
});
