/**
 * The control loop (`startControlLoop`) over real simulated devices, for tests that pace it tick by
 * tick on the manual clock of a {@link MqttDeviceWorld}: the simulated hot water tank (Modbus TCP,
 * `wattshift-sim-tank`), the go-e simulator on aedes and, for a site with a main fuse, the AMS
 * reader simulator (HAN meter), each through the adapter `buildDevice` gives it and its supervisor.
 * Only our own Metering port is faked: these tests are about control, not metering.
 */
import { expect } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { Plan, PlanSlot } from '../../src/core/types.js';
import { buildDevice } from '../../src/devices/factory.js';
import { createModbusBuses } from '../../src/devices/modbus/bus.js';
import { superviseDevice, type DeviceCapabilities } from '../../src/devices/supervisor.js';
import { startControlLoop, type ControlledDevice, type ControlSnapshot, type DeviceIntent } from '../../src/jobs/control-loop.js';
import { createFuseGuard } from '../../src/jobs/fuse-guard.js';
import type { Metering } from '../../src/jobs/metering.js';
import { silentLogger } from '../../src/log.js';
import { createAmsReaderSim, type AmsReaderSim } from '../../src/sandbox/devices/amsreader-sim.js';
import { createGoeSim, type GoeSim } from '../../src/sandbox/devices/goe-sim.js';
import { startSimulatedTank, type SimulatedTank } from '../../src/sandbox/devices/modbus-tank.js';
import { memoryLogger } from '../fixtures/modbus/servers.js';
import { eventually, type MqttDeviceWorld } from './aedes.js';

export const TICK_MS = 10_000;

/*
 * Pacing on the manual clock: the clock moves only once every peer has been heard and the last
 * tick has ended. A device call still in flight when the clock jumps would see its deadline pass
 * in no time (a timeout no device caused), and a tick would act on what an adapter had not heard yet.
 * The waits poll often: a paced test waits on them several times a simulated tick.
 */
export const PACE_POLL_MS = 2;

/** Waits until a go-e adapter has what its simulator shows now: power, counter, car state and phases. */
export async function goeHeard(caps: DeviceCapabilities, goe: GoeSim): Promise<void> {
  await eventually(
    async () => {
      const signal = AbortSignal.timeout(500);
      expect(await caps.powerMeter!.readPowerW(signal)).toBe(goe.powerW);
      expect(await caps.energyMeter!.readEnergyKwh(signal)).toBe(Math.floor(goe.totalWh) / 1000);
      const ev = await caps.evStateReader!.readEvState(signal);
      // A simulator without phase switching does not say its phases.
      expect({ plugged: ev.plugged, charging: ev.charging, phases: ev.phases ?? goe.phasesNow }).toEqual({
        plugged: goe.car !== 1,
        charging: goe.car === 2,
        phases: goe.phasesNow,
      });
    },
    5000,
    PACE_POLL_MS,
  );
}

/**
 * Waits until the HAN adapter has the list its meter just published: stamped `atMs` (its arrival on
 * the clock) and, where given, with these currents (A, to the hundredth as the meter lists them).
 */
export async function listHeard(caps: DeviceCapabilities, expected: { atMs: number; currentsA?: readonly number[] }): Promise<void> {
  await eventually(async () => expect(await caps.phaseMeter!.readPhases(AbortSignal.timeout(500))).toMatchObject(expected), 5000, PACE_POLL_MS);
}

/** Waits until the control loop's tick at `atMs` has ended: its commands confirmed by the devices (or failed). */
export async function tickApplied(control: { last(): ControlSnapshot | null }, atMs: number): Promise<void> {
  await eventually(() => expect(control.last()?.atMs).toBe(atMs), 5000, PACE_POLL_MS);
}

/** Our own metering port, doing nothing. */
export const noMetering: Metering = {
  feed: () => undefined,
  tick: () => undefined,
  flush: () => undefined,
  openHours: () => new Map(),
  lastValue: () => undefined,
  hourWrites: () => 0,
  health: () => ({ ok: true, lastError: null, buffered: 0 }),
};

/** A plan of consecutive slots of `slotMinutes` from `startMs`, each with its tank and car targets. */
export function planOf(startMs: number, slotMinutes: number, slots: Pick<PlanSlot, 'tanks' | 'evs' | 'price'>[]): Plan {
  const ms = slotMinutes * 60_000;
  return {
    createdMs: startMs,
    currency: 'NOK',
    slotMinutes,
    startMs,
    endMs: startMs + slots.length * ms,
    mode: 'optimal',
    slots: slots.map((s, i) => ({
      startMs: startMs + i * ms,
      endMs: startMs + (i + 1) * ms,
      delta: 0,
      source: 'actual',
      headroomKw: 16,
      binding: [],
      reason: 'test',
      ...s,
    })),
    cost: 0,
    baselineCost: 0,
    baselineRespectsLimits: true,
    incentiveEarned: 0,
    shortfalls: [],
  } as unknown as Plan;
}

export interface LoopWorldOptions {
  /** The tank: element power, start temperature, thermostat (default 75 °C), model floor and maximum. */
  tank: { elementKw: number; initialC: number; thermostatC?: number; floorC?: number; maxC?: number };
  /** With a main fuse (25 A, TN, 3 phases): the house's own current per line, A; the tank hangs on L1. */
  fuse?: { houseA: [number, number, number] };
  plan: Plan;
  /** min(location limit, LPC caps), kW. */
  capKw: number;
  /** Forecast base load (used where no main meter measures the location), kW. */
  baseLoadKw: number;
  intent?: (deviceId: string) => DeviceIntent;
  slotMinutes: number;
  /** A second go-e charger (`car2`, on all three lines) with a car plugged in that the plan leaves idle. */
  idleCharger?: boolean;
}

export interface LoopWorld {
  tank: SimulatedTank;
  goe: GoeSim;
  han: AmsReaderSim | undefined;
  control: ReturnType<typeof startControlLoop>;
  /** The setpoint of a device in the last tick. */
  setpoint(id: string): ControlSnapshot['decision']['setpoints'][number] | undefined;
  /** Current per line now, A, at the simulators (the house's own, the car's, the tank's on L1). */
  linesA(): number[];
  /** Runs the car simulator `ms` ahead and waits until its adapter has heard its power and counter. */
  car(ms: number): Promise<void>;
  /** The HAN meter publishes its next list now; waits until its adapter has it (stamped now). */
  meter(): Promise<void>;
  /** Moves the clock; landing on a tick time, waits for that tick to have applied its commands. */
  advance(ms: number): Promise<void>;
}

export async function startLoopWorld(w: MqttDeviceWorld, o: LoopWorldOptions): Promise<LoopWorld> {
  const t0 = w.clock.nowMs();
  const tank = await startSimulatedTank({
    clock: w.clock,
    startMs: t0,
    initialC: o.tank.initialC,
    draws: [],
    params: { volumeL: 200, elementKw: o.tank.elementKw, thermostatC: o.tank.thermostatC ?? 75 },
  });
  w.cleanups.push(() => tank.close());
  const goe = createGoeSim({
    url: w.broker.url,
    topicPrefix: 'go-eCharger/loop',
    startMs: t0,
    phases: 3,
    amp: 16,
    maxCurrentA: 16,
    plugs: [{ atMs: t0, battery: { capacityKwh: 60, socPct: 20 } }],
  });
  await goe.start();
  w.cleanups.push(() => goe.close());
  const idle = o.idleCharger
    ? createGoeSim({
        url: w.broker.url,
        topicPrefix: 'go-eCharger/idle',
        startMs: t0,
        phases: 3,
        amp: 6,
        maxCurrentA: 16,
        plugs: [{ atMs: t0, battery: { capacityKwh: 60, socPct: 50 } }],
      })
    : undefined;
  if (idle) {
    await idle.start();
    w.cleanups.push(() => idle.close());
  }

  const houseA = o.fuse?.houseA;
  const linesA = (): number[] => {
    const carA = (goe.powerW + (idle?.powerW ?? 0)) / (3 * 230);
    const tankA = tank.state().powerW / 230;
    return (houseA ?? [0, 0, 0]).map((a, l) => a + carA + (l === 0 ? tankA : 0));
  };
  const han = houseA
    ? createAmsReaderSim({
        url: w.broker.url,
        topic: 'ams/loop',
        startMs: t0,
        load: () => {
          const currentsA = linesA();
          return { importW: currentsA.reduce((s, a) => s + a * 230, 0), currentsA };
        },
      })
    : undefined;
  if (han) {
    await han.start();
    w.cleanups.push(() => han.close());
  }

  const { config } = parseConfig({
    version: 1,
    site: {
      timezone: 'Europe/Oslo',
      priceArea: 'NO1',
      currency: 'NOK',
      locationLimitKw: 17,
      ...(han ? { fuse: { mainFuseA: 25, phases: 3, supply: 'TN', meter: 'han', raiseAfterS: 60, staleAfterS: 30 } } : {}),
    },
    spark: { clientId: 'c', clientSecret: 's' },
    storage: { path: ':memory:' },
    mqtt: { url: w.broker.url },
    modbus: { sim: { type: 'tcp', host: tank.host, port: tank.port, timeoutMs: 2000 } },
    devices: [
      {
        id: 'tank',
        kind: 'hotWaterTank',
        switch: { type: 'modbus', bus: 'sim', unitId: 1, profile: 'wattshift-sim-tank' },
        meter: { type: 'modbus', bus: 'sim', unitId: 1, profile: 'wattshift-sim-tank' },
        thermometer: { type: 'modbus', bus: 'sim', unitId: 1, profile: 'wattshift-sim-tank' },
        model: { volumeL: 200, elementKw: o.tank.elementKw, floorC: o.tank.floorC ?? 40, maxC: o.tank.maxC ?? 75 },
      },
      {
        id: 'car',
        kind: 'evCharger',
        charger: { type: 'goe', topicPrefix: 'go-eCharger/loop' },
        safeCurrentA: 6,
        model: { capacityKwh: 60, phases: 3, minCurrentA: 6, maxCurrentA: 16 },
      },
      ...(idle
        ? [
            {
              id: 'car2',
              kind: 'evCharger',
              charger: { type: 'goe', topicPrefix: 'go-eCharger/idle' },
              safeCurrentA: 6,
              model: { capacityKwh: 60, phases: 3, minCurrentA: 6, maxCurrentA: 16 },
            },
          ]
        : []),
      ...(han ? [{ id: 'han', kind: 'meter', meter: { type: 'amsreader', topic: 'ams/loop' }, staleAfterS: 60 }] : []),
    ],
  });

  const buses = createModbusBuses(config.modbus, { clock: w.clock, logger: silentLogger() });
  w.cleanups.push(async () => {
    for (const b of buses.values()) await b.close();
  });
  const caps = new Map<string, DeviceCapabilities>();
  const controlled = new Map<string, ControlledDevice>();
  for (const d of config.devices) {
    const built = buildDevice(d, { buses, mqtt: w.connection, clock: w.clock, logger: silentLogger(), requestTimeoutMs: 2000 });
    w.cleanups.push(() => built.close());
    const device = superviseDevice(
      {
        id: d.id,
        kind: d.kind,
        capabilities: built.capabilities,
        leaseMs: 10 * 60_000,
        readTimeoutMs: 2000,
        ...(d.kind === 'evCharger' ? { safeCurrentA: d.safeCurrentA } : {}),
      },
      { clock: w.clock, logger: silentLogger() },
    );
    caps.set(d.id, built.capabilities);
    controlled.set(d.id, { config: d, subject: d.kind === 'meter' ? 'location' : `device:${d.id}`, device });
  }
  const carCaps = caps.get('car')!;
  const hanCaps = caps.get('han');

  const car = async (ms: number): Promise<void> => {
    await goe.advance(ms);
    await goeHeard(carCaps, goe);
  };
  const meter = async (): Promise<void> => {
    await han!.advance(TICK_MS);
    await listHeard(hanCaps!, { atMs: w.clock.nowMs() });
  };

  // Every adapter hears its simulator before the loop's first tick.
  await car(0);
  if (idle) await goeHeard(caps.get('car2')!, idle);
  await eventually(async () => expect((await controlled.get('tank')!.device.read(AbortSignal.timeout(2000))).errors).toEqual([]));
  if (han) await meter();

  const fuseLog = memoryLogger();
  const main = controlled.get('han') ?? null;
  const control = startControlLoop({
    devices: [controlled.get('tank')!, controlled.get('car')!, ...(idle ? [controlled.get('car2')!] : [])],
    mainMeter: main,
    ...(main && config.site.fuse ? { fuse: { guard: createFuseGuard(config.site.fuse, fuseLog.logger), meter: main.device, meterId: 'han' } } : {}),
    metering: noMetering,
    clock: w.clock,
    logger: silentLogger(),
    tickMs: TICK_MS,
    slotMinutes: o.slotMinutes,
    inputs: {
      plan: () => o.plan,
      locationCapKw: () => o.capKw,
      deviceCapKw: () => undefined,
      baseLoadKw: () => o.baseLoadKw,
      intent: o.intent ?? (() => ({ mode: 'auto', boostUntilMs: null })),
      estimatedTankC: () => undefined,
    },
    onTick: () => undefined,
  });
  w.cleanups.push(() => control.stop());
  await tickApplied(control, t0);

  return {
    tank,
    goe,
    han,
    control,
    linesA,
    car,
    meter,
    setpoint: (id) => control.last()?.decision.setpoints.find((s) => s.id === id),
    async advance(ms) {
      const target = w.clock.nowMs() + ms;
      const nextTick = (Math.floor(w.clock.nowMs() / TICK_MS) + 1) * TICK_MS;
      // Pacing only lands on tick times, so each tick sees exactly what the test has set up.
      expect(target <= nextTick).toBe(true);
      await w.clock.advance(ms);
      if (target < nextTick) return;
      await tickApplied(control, target);
    },
  };
}
