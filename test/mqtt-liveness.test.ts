/**
 * Per-device liveness of the Shelly and Tasmota adapters against simulators that report the way
 * the vendors document: a Shelly notifies changes only, a Tasmota sends telemetry every
 * TelePeriod (300 s as shipped). An unchanged or quiet value must not make the device stale, the
 * adapters must not flood the device with status requests, and only a silent device is stale.
 */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../src/log.js';
import { createMqttDevice, type MqttDevice } from '../src/devices/mqtt/index.js';
import { createShellySim, type ShellySim } from '../src/sandbox/devices/shelly-sim.js';
import { createTasmotaSim, type TasmotaSim } from '../src/sandbox/devices/tasmota-sim.js';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';

const t0 = Date.UTC(2025, 0, 6, 0, 0, 0);
const sig = () => new AbortController().signal;
const w = useMqttDeviceWorld(t0, { reconnectPeriodMs: 100 });

async function step(sim: { advance(ms: number): Promise<void> }, ms: number): Promise<void> {
  await w.clock.advance(ms);
  await sim.advance(ms);
}

/**
 * Counts what the daemon's connection received on `filter`: its handlers run in one dispatch, so
 * once this count has caught up with what a simulator published, the adapter has seen it too.
 */
function delivered(filter: string): () => number {
  let n = 0;
  w.cleanups.push(w.connection.subscribe(filter, () => void n++));
  return () => n;
}

/** Starts a read that needs a request to time out on the manual clock, then lets it time out. */
async function failsAfterTimeout(read: () => Promise<unknown>, code: string): Promise<void> {
  const failed = expect(read()).rejects.toMatchObject({ code });
  await new Promise((r) => setTimeout(r, 30));
  await w.clock.advance(1000);
  await failed;
}

describe.each([
  { channel: 'rpc_ntf (NotifyStatus, as shipped)', rpcNtf: true, statusNtf: false },
  { channel: 'status_ntf (whole statuses)', rpcNtf: false, statusNtf: true },
])('Shelly Plus 1PM notifying changes only over $channel', ({ rpcNtf, statusNtf }) => {
  it('keeps unchanged values current while the device is heard, without asking for its status', async () => {
    const prefix = `shelly-live-${rpcNtf ? 'rpc' : 'status'}`;
    const sim = createShellySim({
      url: w.broker.url,
      topicPrefix: prefix,
      startMs: t0,
      temperatureSensorId: 100,
      tank: { initialC: 60 },
      rpcNtf,
      statusNtf,
    });
    await sim.start();
    w.cleanups.push(() => sim.close());
    const dev = createMqttDevice(
      { type: 'shelly', topicPrefix: prefix, temperatureSensorId: 100 },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
      { staleAfterS: 120, requestTimeoutMs: 1000 },
    );
    w.cleanups.push(() => dev.close());
    const asked = () => sim.requests.get('Shelly.GetStatus') ?? 0;
    const seen = delivered(statusNtf ? `${prefix}/status/+` : `${prefix}/events/rpc`);

    await eventually(async () => expect(await dev.thermometer!.readTemperatureC(AbortSignal.timeout(500))).toBeCloseTo(60, 1));
    await dev.heaterSwitch!.block(3_600_000, sig());
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(sig())).toBe(0)); // the change's notification
    const askedAtStart = asked();
    const publishedAtStart = sim.published;
    const seenAtStart = seen();
    // 30 minutes in 10-second ticks: the blocked heater's power never changes, the tank cools by
    // far less than the 0.5 °C report threshold, only the minute energy record is notified.
    for (let i = 0; i < 180; i++) {
      await step(sim, 10_000);
      // A loaded machine delivers late: the clock moves on only once the adapter has what was sent.
      await eventually(() => expect(seen() - seenAtStart).toBeGreaterThanOrEqual(sim.published - publishedAtStart));
      expect(await dev.powerMeter!.readPowerW(sig())).toBe(0);
      expect(await dev.thermometer!.readTemperatureC(sig())).toBeCloseTo(60, 0);
      await dev.energyMeter!.readEnergyKwh(sig());
    }
    expect(asked()).toBe(askedAtStart);
    const notifications = sim.published - publishedAtStart;
    expect(notifications).toBeGreaterThanOrEqual(29);
    expect(notifications).toBeLessThanOrEqual(32);
  });
});

describe('Shelly Plus 1 without a meter, idle', () => {
  let sim: ShellySim;
  let dev: MqttDevice;
  const start = async (): Promise<void> => {
    // Above its thermostat: the element is off, the add-on's reading moves by hundredths.
    sim = createShellySim({
      url: w.broker.url,
      topicPrefix: 'shelly-plus1',
      startMs: t0,
      metered: false,
      temperatureSensorId: 101,
      tank: { initialC: 76 },
    });
    await sim.start();
    w.cleanups.push(() => sim.close());
    dev = createMqttDevice(
      { type: 'shelly', topicPrefix: 'shelly-plus1', temperatureSensorId: 101 },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
      { staleAfterS: 120, requestTimeoutMs: 1000 },
    );
    w.cleanups.push(() => dev.close());
  };

  it('asks for its status once after a silence, shared by every reader, and is stale only when that goes unanswered', async () => {
    await start();
    const asked = () => sim.requests.get('Shelly.GetStatus') ?? 0;
    await eventually(async () => expect(await dev.thermometer!.readTemperatureC(AbortSignal.timeout(500))).toBeCloseTo(76, 0));
    const before = asked();
    const quietStart = sim.published;
    await step(sim, 60_000);
    expect(await dev.thermometer!.readTemperatureC(sig())).toBeCloseTo(76, 0);
    expect(asked()).toBe(before);
    await step(sim, 61_000); // two minutes without a word from the device
    expect(sim.published).toBe(quietStart);
    const reads = await Promise.all([1, 2, 3].map(() => dev.thermometer!.readTemperatureC(sig())));
    for (const t of reads) expect(t).toBeCloseTo(76, 0);
    expect(asked()).toBe(before + 1);

    sim.setSilent(true);
    await step(sim, 121_000);
    await failsAfterTimeout(() => dev.thermometer!.readTemperatureC(sig()), 'DEVICE_STALE');
    sim.setSilent(false);
    expect(await dev.thermometer!.readTemperatureC(sig())).toBeCloseTo(76, 0);
  });
});

describe('Tasmota with an energy monitor and a DS18B20, TelePeriod 300 s as shipped', () => {
  let sim: TasmotaSim;
  let dev: MqttDevice;
  const start = async (blockedState: 'on' | 'off' = 'off'): Promise<void> => {
    sim = createTasmotaSim({ url: w.broker.url, topic: 'tas-heater', startMs: t0, blockedState, tank: { initialC: 50 } });
    await sim.start();
    w.cleanups.push(() => sim.close());
    dev = createMqttDevice(
      { type: 'tasmota', topic: 'tas-heater', blockedState },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
      { staleAfterS: 120, requestTimeoutMs: 1000 },
    );
    w.cleanups.push(() => dev.close());
  };
  const statusAsked = () => sim.commands.get('STATUS') ?? 0;

  it('reads through the quiet spells between telemetry with one Status 10 per spell, never failing', async () => {
    await start();
    const seen = delivered('tele/tas-heater/SENSOR');
    await eventually(async () => expect(await dev.energyMeter!.readEnergyKwh(AbortSignal.timeout(500))).toBeGreaterThanOrEqual(0));
    await new Promise((r) => setTimeout(r, 50));
    const askedAtStart = statusAsked();
    const sentAtStart = sim.telemetry;
    const seenAtStart = seen();
    let previousKwh = 0;
    // 15 minutes in 10-second ticks, the heater drawing 2 kW throughout.
    for (let i = 0; i < 90; i++) {
      await step(sim, 10_000);
      await eventually(() => expect(seen() - seenAtStart).toBeGreaterThanOrEqual(sim.telemetry - sentAtStart));
      const [kwh, watts, celsius] = await Promise.all([
        dev.energyMeter!.readEnergyKwh(sig()),
        dev.powerMeter!.readPowerW(sig()),
        dev.thermometer!.readTemperatureC(sig()),
      ]);
      expect(kwh).toBeGreaterThanOrEqual(previousKwh);
      expect(watts).toBe(2000);
      expect(celsius).toBeGreaterThan(49);
      previousKwh = kwh;
    }
    // Telemetry at 300, 600 and 900 s; between them a value passes 120 s twice: 6 requests at most
    // (one per quiet spell, shared by the three readers), against 270 reads.
    const asked = statusAsked() - askedAtStart;
    expect(asked).toBeGreaterThanOrEqual(3);
    expect(asked).toBeLessThanOrEqual(7);
    // The last reading is at most one quiet spell old: 2 kW for ~130 s.
    expect(sim.tank.counterKwh - previousKwh).toBeGreaterThanOrEqual(-0.0005); // Total has 3 decimals
    expect(sim.tank.counterKwh - previousKwh).toBeLessThanOrEqual((2 * 130) / 3600);
  });

  it('is unreachable while its LWT says Offline, and stale when it stops answering', async () => {
    await start();
    await eventually(async () => expect(await dev.powerMeter!.readPowerW(AbortSignal.timeout(500))).toBe(2000));
    sim.setSilent(true);
    await step(sim, 121_000);
    await failsAfterTimeout(() => dev.powerMeter!.readPowerW(sig()), 'DEVICE_STALE');
    sim.setSilent(false);
    await sim.crash();
    await eventually(() => expect(dev.powerMeter!.readPowerW(AbortSignal.timeout(200))).rejects.toMatchObject({ code: 'DEVICE_UNREACHABLE' }));
  });

  it('leases a block with PulseTime, written to flash once; the relay releases itself when renewals stop', async () => {
    await start('on');
    await eventually(() => expect(sim.connected).toBe(true));
    await dev.heaterSwitch!.allow(sig());
    expect(sim.relayOn).toBe(false);
    const savesBefore = sim.flashSaves;
    const switched = () => [...sim.commands].filter(([name]) => /^POWER\d*$/.test(name)).reduce((n, [, count]) => n + count, 0);
    for (let i = 0; i < 4; i++) {
      const before = switched();
      await dev.heaterSwitch!.block(600_000, sig()); // renewed at half the lease, as the supervisor does
      // Time moves only once the relay has the renewal: its PulseTime restarts from the command.
      await eventually(() => expect(switched()).toBeGreaterThan(before));
      expect(sim.relayOn).toBe(true);
      expect(sim.tank.powerW).toBe(0);
      await step(sim, 300_000);
    }
    expect(sim.pulseTime).toBe(700);
    expect(sim.commands.get('PULSETIME1')).toBe(1);
    // PulseTime once, the relay on once: re-asserting ON restarts the timer without a flash write.
    expect(sim.flashSaves - savesBefore).toBe(2);
    await step(sim, 301_000);
    expect(sim.relayOn).toBe(false);
    expect(sim.tank.powerW).toBe(2000);
  });
});
