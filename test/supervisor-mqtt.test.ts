/**
 * The fail-safe path end to end: supervisor + MQTT adapters + simulated devices over aedes.
 */
import { describe, expect, it } from 'vitest';
import { createLogger, silentLogger } from '../src/log.js';
import { createMqttDevice } from '../src/devices/mqtt/index.js';
import { superviseDevice } from '../src/devices/supervisor.js';
import { createShellySim } from '../src/sandbox/devices/shelly-sim.js';
import { createGoeSim } from '../src/sandbox/devices/goe-sim.js';
import { eventually, useMqttDeviceWorld } from './helpers/aedes.js';

const t0 = Date.UTC(2025, 0, 6);
const sig = () => new AbortController().signal;
/** For reads that may hit a missing value: a refresh request then ends in real time, not on the manual clock. */
const quick = () => AbortSignal.timeout(500);

function captureLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } });
  const sup = (level: string) => lines.filter((l) => l.component === 'supervisor' && l.level === level);
  return { logger, sup };
}

const w = useMqttDeviceWorld(t0, { reconnectPeriodMs: 100 });

describe('supervised Shelly heater', () => {
  it('keeps the block alive by renewing the lease, and the device allows heating when renewals stop', async () => {
    const sim = createShellySim({ url: w.broker.url, topicPrefix: 'shelly-sup', startMs: t0 });
    await sim.start();
    w.cleanups.push(() => sim.close());
    const dev = createMqttDevice(
      { type: 'shelly', topicPrefix: 'shelly-sup' },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
      { requestTimeoutMs: 5000 },
    );
    w.cleanups.push(() => dev.close());
    const leaseMs = 600_000;
    // Counts answered blocks, so the test never moves the manual clock while a command is in flight
    // (that would time it out: the clock is manual, the network is real).
    let answered = 0;
    const heaterSwitch = {
      deviceLease: true,
      allow: dev.heaterSwitch!.allow,
      block: async (ms: number, s: AbortSignal) => {
        await dev.heaterSwitch!.block(ms, s);
        answered++;
      },
    };
    const sup = superviseDevice(
      { id: 'tank', kind: 'hotWaterTank', capabilities: { heaterSwitch }, leaseMs, readTimeoutMs: 5000 },
      { clock: w.clock, logger: silentLogger() },
    );

    await sup.applyHeater(true);
    expect(sim.output).toBe(false);
    // Three lease lengths pass; the supervisor renews every half lease, so the relay stays off.
    for (let i = 0; i < 6; i++) {
      await sim.advance(leaseMs / 2);
      expect(sim.output).toBe(false);
      await w.clock.advance(leaseMs / 2);
      const before = answered;
      await eventually(async () => {
        await w.clock.advance(0); // wakes a renewal timer armed after the advance (network latency)
        expect(answered).toBe(before + 1);
      });
      expect(sim.toggleAtMs).toBe(sim.nowMs + leaseMs);
      expect(sup.health()).toMatchObject({ state: 'up', consecutiveFailures: 0, blocked: true });
    }
    // The daemon dies without a clean stop: nothing renews; the Shelly's own timer restores heating.
    await w.connection.close();
    await sim.advance(leaseMs);
    expect(sim.output).toBe(true);
    expect(sim.toggleAtMs).toBeUndefined();
    expect(sim.powerW).toBe(2000);
  });

  it('goes down on a hung device (DEVICE_STALE), logs once, and recovers once', async () => {
    const sim = createShellySim({ url: w.broker.url, topicPrefix: 'shelly-hung', startMs: t0 });
    await sim.start();
    w.cleanups.push(() => sim.close());
    const dev = createMqttDevice(
      { type: 'shelly', topicPrefix: 'shelly-hung' },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
      { staleAfterS: 60, requestTimeoutMs: 1000 },
    );
    w.cleanups.push(() => dev.close());
    const log = captureLogger();
    const sup = superviseDevice(
      { id: 'tank', kind: 'hotWaterTank', capabilities: dev, leaseMs: 600_000, readTimeoutMs: 3000 },
      { clock: w.clock, logger: log.logger },
    );
    await eventually(async () => expect((await sup.read(quick())).errors).toEqual([]));
    await sup.applyHeater(true);
    expect(sim.output).toBe(false);

    sim.setSilent(true);
    const readUntilDown = async () => {
      for (let i = 0; i < 5 && sup.health().state === 'up'; i++) {
        await w.clock.advance(61_000);
        const r = sup.read(sig());
        await new Promise((res) => setTimeout(res, 20));
        await w.clock.advance(1000);
        await r;
      }
    };
    await readUntilDown();
    expect(sup.health()).toMatchObject({ state: 'down', blocked: false, lastError: { code: 'DEVICE_STALE' } });
    expect(log.sup('warn')).toHaveLength(1);
    expect(log.sup('warn')[0]).toMatchObject({ code: 'DEVICE_STALE', device: 'tank' });
    // The hung device missed the "allow"; its own lease timer still restores heating.
    await sim.advance(600_000);
    expect(sim.output).toBe(true);

    sim.setSilent(false);
    await sim.advance(1000);
    await eventually(async () => expect((await sup.read(quick())).errors).toEqual([]));
    expect(sup.health().state).toBe('up');
    expect(log.sup('info')).toHaveLength(1);
    expect(log.sup('warn')).toHaveLength(1);
    await sup.stop();
    expect(sim.output).toBe(true);
  });

  it('releases the block on a clean stop', async () => {
    const sim = createShellySim({ url: w.broker.url, topicPrefix: 'shelly-stop', startMs: t0 });
    await sim.start();
    w.cleanups.push(() => sim.close());
    const dev = createMqttDevice(
      { type: 'shelly', topicPrefix: 'shelly-stop' },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
    );
    w.cleanups.push(() => dev.close());
    const sup = superviseDevice(
      { id: 'tank', kind: 'hotWaterTank', capabilities: dev, leaseMs: 600_000, readTimeoutMs: 3000 },
      { clock: w.clock, logger: silentLogger() },
    );
    await sup.applyHeater(true);
    expect(sim.output).toBe(false);
    await sup.stop();
    expect(sim.output).toBe(true);
    expect(sim.toggleAtMs).toBeUndefined();
  });
});

describe('supervised go-e charger', () => {
  it('applies the safe current when values go stale and when the w.broker is lost', async () => {
    const sim = createGoeSim({
      url: w.broker.url,
      topicPrefix: 'go-eCharger/42',
      startMs: t0,
      amp: 16,
      plugs: [{ atMs: t0, battery: { capacityKwh: 60, socPct: 30 } }],
    });
    await sim.start();
    w.cleanups.push(() => sim.close());
    const dev = createMqttDevice(
      { type: 'goe', topicPrefix: 'go-eCharger/42' },
      { connection: w.connection, clock: w.clock, logger: silentLogger() },
      { staleAfterS: 60 },
    );
    w.cleanups.push(() => dev.close());
    await eventually(async () => expect(await dev.energyMeter!.readEnergyKwh(quick())).toBe(0));
    const log = captureLogger();
    const sup = superviseDevice(
      { id: 'car', kind: 'evCharger', capabilities: dev, safeCurrentA: 6, leaseMs: 600_000, readTimeoutMs: 3000, downAfterFailures: 1 },
      { clock: w.clock, logger: log.logger },
    );
    await eventually(async () => expect((await sup.read(quick())).ev).toEqual({ plugged: true, charging: true, sessionKwh: expect.any(Number) }));
    // The pushed counter carries its arrival time, which the read time does not replace.
    await w.clock.advance(5_000);
    expect(await sup.read(sig())).toMatchObject({ atMs: t0 + 5_000, energyKwh: 0, energyAtMs: t0 });
    await sup.applyCurrent(16);
    expect(sim.amp).toBe(16);

    // The charger stops publishing (nothing advances it) for longer than staleAfterS.
    await w.clock.advance(61_000);
    const r = await sup.read(sig());
    expect(r.errors.map((e) => e.code)).toContain('DEVICE_STALE');
    await eventually(() => expect(sim.amp).toBe(6));
    expect(log.sup('warn'), JSON.stringify(log.sup('warn'))).toHaveLength(1);
    // Setting the safe current made the charger republish: fresh again, recovered once.
    await eventually(async () => expect((await sup.read(quick())).errors).toEqual([]));
    expect(log.sup('info')).toHaveLength(1);
    await sup.applyCurrent(12);
    expect(sim.amp).toBe(12);

    // Broker lost: reads fail with MQTT_UNAVAILABLE; after it returns, the safe current is set.
    await w.broker.stop();
    await eventually(() => expect(w.connection.connected).toBe(false));
    const lost = await sup.read(sig());
    expect(lost.errors.map((e) => e.code)).toContain('MQTT_UNAVAILABLE');
    expect(sup.health().state).toBe('down');
    expect(log.sup('warn')).toHaveLength(2);
    await w.broker.start();
    await w.connection.waitConnected(AbortSignal.timeout(5000));
    // Offline the charger published nothing; back, it publishes everything again.
    await eventually(() => expect(sim.connected).toBe(true));
    await sim.advance(1000);
    await eventually(async () => expect((await sup.read(quick())).errors).toEqual([]));
    await sup.applyCurrent(16);
    expect(sim.amp).toBe(16);
    expect(sim.frc).toBe(2);
    await sup.stop();
    // A clean stop hands the charger back to its own logic at the safe current, never forced on.
    expect(sim.amp).toBe(6);
    expect(sim.frc).toBe(0);
  });
});
