/**
 * The hourly energy guard with real devices on an accelerated clock: the simulated Modbus tank, the
 * simulated go-e charger over a real MQTT broker and a grid meter (Modbus, SDM120 registers) that
 * measures a 1 kW base load (±0.4 kW, switching every 40 s, as a home's small loads do) plus both.
 * The plan holds the first hour to 6 kWh and runs the tank (2 kW) and the car (11 kW) in both
 * hours; the second hour is not held.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceleratedClock } from '../src/clock.js';
import { parseConfig } from '../src/config/load.js';
import type { Plan, PlanSlot } from '../src/core/types.js';
import { buildDevice } from '../src/devices/factory.js';
import { createModbusBuses } from '../src/devices/modbus/bus.js';
import { createMqttConnection, type MqttConnection } from '../src/devices/mqtt/index.js';
import { superviseDevice } from '../src/devices/supervisor.js';
import { startControlLoop, type ControlledDevice } from '../src/jobs/control-loop.js';
import { createMetering, meteringOptionsFor, type MeteredSubject } from '../src/jobs/metering.js';
import { createLogger } from '../src/log.js';
import { createGoeSim, type GoeSim } from '../src/sandbox/devices/goe-sim.js';
import { startSimulatedTank, type SimulatedTank } from '../src/sandbox/devices/modbus-tank.js';
import { openStore, type Store } from '../src/store/index.js';
import { startAedes, type TestBroker } from './helpers/aedes.js';
import { startGridMeter, type GridMeter } from './helpers/grid-meter.js';

const H = 3_600_000;
const speed = 300;
/** 14 Jan 2026, 09:00 UTC: the held hour; 10:00 the free one (08:50–09:00 is not planned: all off). */
const h0 = Date.UTC(2026, 0, 14, 9);
const allowanceKwh = 6;

function slot(startMs: number, held: boolean): PlanSlot {
  return {
    startMs,
    endMs: startMs + H,
    price: 1,
    spot: 0.5,
    delta: 0,
    source: 'actual',
    headroomKw: 16,
    binding: [],
    reason: 'test',
    tanks: { tank: { on: true, powerKw: 2, energyKwh: 2, endTempC: 65 } },
    evs: { car: { on: true, powerKw: 11, energyKwh: 11, chargedKwh: 11 } },
    ...(held ? { hourAllowanceKwh: allowanceKwh } : {}),
  };
}
const plan: Plan = {
  createdMs: h0 - H,
  currency: 'NOK',
  slotMinutes: 60,
  startMs: h0,
  endMs: h0 + 2 * H,
  mode: 'optimal',
  slots: [slot(h0, true), slot(h0 + H, false)],
  cost: 0,
  baselineCost: 0,
  incentiveEarned: 0,
  shortfalls: [],
} as unknown as Plan;

describe('the hourly energy guard with real devices', () => {
  // Control takes over ten minutes before the held hour: its energy is metered from the start.
  const clock = acceleratedClock(h0 - 10 * 60_000, speed);
  const lines: { code?: string; device?: string }[] = [];
  const logger = createLogger({ destination: { write: (l: string) => void lines.push(JSON.parse(l) as { code?: string }) }, level: 'info' });
  let broker: TestBroker;
  let tank: SimulatedTank;
  let car: GoeSim;
  let grid: GridMeter;
  let mqtt: MqttConnection;
  let store: Store;
  let dir = '';
  const stopSims = new AbortController();
  let tankKwh: number[] = [];
  /** The car's starts (0 → charging) and stops within the held hour. */
  const carSwitches = { starts: 0, stops: 0 };
  let carWasOn: boolean | null = null;

  beforeAll(async () => {
    broker = await startAedes();
    tank = await startSimulatedTank({
      clock,
      startMs: clock.nowMs(),
      initialC: 55,
      params: { volumeL: 200, elementKw: 2, thermostatC: 75 },
      draws: [],
    });
    car = createGoeSim({
      url: broker.url,
      topicPrefix: 'go-eCharger/guard',
      startMs: clock.nowMs(),
      phases: 3,
      amp: 16,
      maxCurrentA: 16,
      plugs: [{ atMs: h0 - H, battery: { capacityKwh: 60, socPct: 20, targetSocPct: 100, efficiency: 0.9 } }],
    });
    await car.start();
    void car.run(clock, 10_000, stopSims.signal).catch(() => undefined);
    const wobbleW = (): number => (Math.floor(clock.nowMs() / 40_000) % 2 === 0 ? 400 : -400);
    grid = await startGridMeter({ clock, baseLoadW: 1000, loadsW: () => wobbleW() + tank.state().powerW + car.powerW });
    const { config } = parseConfig({
      version: 1,
      site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 17 },
      spark: { clientId: 'c', clientSecret: 's' },
      storage: { path: ':memory:' },
      mqtt: { url: broker.url },
      modbus: {
        sim: { type: 'tcp', host: tank.host, port: tank.port, timeoutMs: 2000 },
        grid: { type: 'tcp', host: '127.0.0.1', port: grid.port, timeoutMs: 2000 },
      },
      devices: [
        {
          id: 'tank',
          kind: 'hotWaterTank',
          switch: { type: 'modbus', bus: 'sim', unitId: 1, profile: 'wattshift-sim-tank' },
          meter: { type: 'modbus', bus: 'sim', unitId: 1, profile: 'wattshift-sim-tank' },
          thermometer: { type: 'modbus', bus: 'sim', unitId: 1, profile: 'wattshift-sim-tank' },
          model: { volumeL: 200, elementKw: 2, floorC: 45, maxC: 75 },
        },
        {
          id: 'car',
          kind: 'evCharger',
          charger: { type: 'goe', topicPrefix: 'go-eCharger/guard' },
          safeCurrentA: 6,
          model: { capacityKwh: 60, targetEnergyKwh: 40, departure: '07:00', minCurrentA: 6, maxCurrentA: 16, phases: 3 },
        },
        { id: 'main', kind: 'meter', meter: { type: 'modbus', bus: 'grid', unitId: 1, profile: 'eastron-sdm120' }, model: { main: true } },
      ],
    });
    mqtt = createMqttConnection({ url: broker.url }, { logger });
    await mqtt.waitConnected(AbortSignal.timeout(5_000));
    const buses = createModbusBuses(config.modbus, { clock, logger });
    dir = mkdtempSync(join(tmpdir(), 'wattshift-guard-'));
    store = openStore({ path: join(dir, 'w.db'), clock });
    const controlled: ControlledDevice[] = [];
    const subjects: MeteredSubject[] = [];
    let main: ControlledDevice | null = null;
    for (const d of config.devices) {
      const b = buildDevice(d, { buses, mqtt, clock, logger, requestTimeoutMs: 2_000 * speed });
      const device = superviseDevice(
        {
          id: d.id,
          kind: d.kind,
          capabilities: b.capabilities,
          leaseMs: 10 * 60_000,
          readTimeoutMs: 2_000 * speed,
          ...(d.kind === 'evCharger' ? { safeCurrentA: d.safeCurrentA } : {}),
        },
        { clock, logger },
      );
      const subject = d.kind === 'meter' ? 'location' : `device:${d.id}`;
      if (b.capabilities.energyMeter) subjects.push({ subject, method: 'counter', options: meteringOptionsFor(d, config.site) });
      if (d.kind === 'meter') main = { config: d, subject, device };
      else controlled.push({ config: d, subject, device });
    }
    const metering = createMetering({ store, subjects, clock, logger });
    const control = startControlLoop({
      devices: controlled,
      mainMeter: main,
      metering,
      clock,
      logger,
      tickMs: 10_000,
      slotMinutes: 60,
      inputs: {
        plan: () => plan,
        locationCapKw: () => 17,
        deviceCapKw: () => undefined,
        intent: () => ({ mode: 'auto', boostUntilMs: null }),
        baseLoadKw: () => 1,
        estimatedTankC: () => undefined,
      },
      onTick: () => {
        const hour = Math.floor(clock.nowMs() / H) - Math.floor(h0 / H);
        if (hour >= 0 && hour < 2) tankKwh[hour] = tank.state().counterKwh;
        const on = car.powerW > 0;
        if (hour === 0 && carWasOn !== null && on !== carWasOn) carSwitches[on ? 'starts' : 'stops'] += 1;
        carWasOn = on;
      },
    });
    const startCounter = tank.state().counterKwh;
    tankKwh = [startCounter, startCounter];
    await clock.sleep(h0 + 2 * H + 30_000 - clock.nowMs());
    await control.stop();
    metering.tick(clock.nowMs());
    metering.flush();
    tankKwh = [tankKwh[0]! - startCounter, tankKwh[1]! - tankKwh[0]!];
  }, 120_000);

  afterAll(async () => {
    stopSims.abort();
    await mqtt?.close();
    await car?.close();
    await tank?.close();
    await grid?.close();
    store?.close();
    await broker?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("keeps the held hour's metered energy within its allowance, shedding the car and keeping the tank", () => {
    const held = grid.energyKwhByHour().get(h0)!;
    const stored = store.readHourly('location', h0, h0 + H)[0]!;
    expect(held).toBeLessThanOrEqual(allowanceKwh + 0.1);
    // The guard uses the room it has: the car charges once the hour's pace allows it.
    expect(held).toBeGreaterThan(allowanceKwh - 0.6);
    expect(stored.kwh).toBeCloseTo(held, 1);
    // The tank (2 kW, heated first) ran the whole hour; the car took what was left.
    expect(tankKwh[0]).toBeGreaterThan(1.8);
    const guarded = lines.filter((l) => l.code === 'HOUR_GUARD').map((l) => l.device);
    expect(guarded).toContain('car');
    expect(guarded).not.toContain('tank');
  });

  it("does not switch the car on and off as the base load wobbles around the limit (the guard's hysteresis)", () => {
    // Measured: 1 start, 0 stops; with GUARD_RESUME_MARGIN = 0, 12 starts and 11 stops.
    expect(carSwitches.starts).toBeLessThanOrEqual(2);
    expect(carSwitches.stops).toBeLessThanOrEqual(2);
  });

  it('does not touch an hour the plan does not hold', () => {
    // Base 1 + tank 2 + car 11 kW for most of the hour.
    expect(grid.energyKwhByHour().get(h0 + H)!).toBeGreaterThan(11);
  });
});
