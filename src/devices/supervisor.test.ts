import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { WattshiftError } from '../errors.js';
import { createLogger } from '../log.js';
import type { ChargeCurrentLimit, HeaterSwitch } from '../ports.js';
import { superviseDevice, type DeviceCapabilities } from './supervisor.js';

const t0 = Date.UTC(2025, 0, 6);

function captureLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } });
  const at = (level: string) => lines.filter((l) => l.level === level && l.component === 'supervisor');
  return { logger, lines, at };
}

function fakeHeater(deviceLease = true, maxLeaseMs?: number) {
  const calls: string[] = [];
  let fail: WattshiftError | undefined;
  const sw: HeaterSwitch = {
    deviceLease,
    ...(maxLeaseMs !== undefined ? { maxLeaseMs } : {}),
    block: async (leaseMs) => {
      if (fail) throw fail;
      calls.push(`block:${leaseMs}`);
    },
    allow: async () => {
      if (fail) throw fail;
      calls.push('allow');
    },
  };
  return { sw, calls, setFail: (e: WattshiftError | undefined) => (fail = e) };
}

/** A meter whose next reads are scripted; `hang` never answers. */
function scriptedMeter() {
  let mode: 'ok' | 'stale' | 'hang' = 'ok';
  let value = 100;
  return {
    caps: {
      energyMeter: {
        readEnergyKwh: (signal: AbortSignal) => {
          if (mode === 'hang') return new Promise<number>(() => void signal);
          if (mode === 'stale') return Promise.reject(new WattshiftError('DEVICE_STALE', 'old'));
          return Promise.resolve((value += 0.5));
        },
      },
      thermometer: { readTemperatureC: async () => 55 },
    } satisfies DeviceCapabilities,
    set: (m: typeof mode) => (mode = m),
  };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('superviseDevice', () => {
  it('reads every capability and reports values', async () => {
    const clock = new ManualClock(t0);
    const meter = scriptedMeter();
    const dev = superviseDevice(
      { id: 'tank', kind: 'hotWaterTank', capabilities: meter.caps, leaseMs: 60_000, readTimeoutMs: 1000 },
      { clock, logger: captureLogger().logger },
    );
    const r = await dev.read(new AbortController().signal);
    expect(r).toEqual({ atMs: t0, energyKwh: 100.5, energyAtMs: t0, temperatureC: 55, errors: [] });
    expect(dev.health().state).toBe('up');
  });

  it('says a device is unheard until it first answers, also once it has gone down without answering', async () => {
    const clock = new ManualClock(t0);
    const meter = scriptedMeter();
    const dev = superviseDevice(
      { id: 'tank', kind: 'hotWaterTank', capabilities: meter.caps, leaseMs: 60_000, readTimeoutMs: 1000 },
      { clock, logger: captureLogger().logger },
    );
    expect(dev.health()).toMatchObject({ state: 'up', unheard: true });
    meter.set('stale');
    for (let i = 0; i < 3; i++) await dev.read(new AbortController().signal);
    expect(dev.health()).toMatchObject({ state: 'down', unheard: true });
    meter.set('ok');
    await dev.read(new AbortController().signal);
    expect(dev.health().state).toBe('up');
    expect(dev.health().unheard).toBeUndefined();
    meter.set('stale');
    for (let i = 0; i < 3; i++) await dev.read(new AbortController().signal);
    expect(dev.health().state).toBe('down');
    expect(dev.health().unheard).toBeUndefined();
  });

  it('stamps a polled counter when its answer arrives, not when the read was queued', async () => {
    const clock = new ManualClock(t0);
    const caps: DeviceCapabilities = {
      // The counter's answer waits 40 s behind other requests on its bus.
      energyMeter: { readEnergyKwh: async (signal) => (await clock.sleep(40_000, signal), 12.5) },
      thermometer: { readTemperatureC: async () => 55 },
    };
    const dev = superviseDevice(
      { id: 'tank', kind: 'hotWaterTank', capabilities: caps, leaseMs: 60_000, readTimeoutMs: 60_000 },
      { clock, logger: captureLogger().logger },
    );
    const reading = dev.read(new AbortController().signal);
    await settle();
    await clock.advance(40_000);
    expect(await reading).toMatchObject({ atMs: t0, energyKwh: 12.5, energyAtMs: t0 + 40_000 });
  });

  it('goes down after repeated failures, allows the heater, logs once each way', async () => {
    const clock = new ManualClock(t0);
    const meter = scriptedMeter();
    const heater = fakeHeater();
    const log = captureLogger();
    const dev = superviseDevice(
      { id: 'tank', kind: 'hotWaterTank', capabilities: { ...meter.caps, heaterSwitch: heater.sw }, leaseMs: 60_000, readTimeoutMs: 1000 },
      { clock, logger: log.logger },
    );
    await dev.applyHeater(true);
    expect(heater.calls).toEqual(['block:60000']);
    meter.set('stale');
    const r1 = await dev.read(new AbortController().signal);
    expect(r1.errors).toEqual([{ capability: 'energyMeter', code: 'DEVICE_STALE' }]);
    expect(r1.temperatureC).toBe(55);
    expect(dev.health().state).toBe('up'); // one failure is tolerated
    for (let i = 0; i < 3; i++) await dev.read(new AbortController().signal);
    await settle();
    expect(dev.health()).toMatchObject({ state: 'down', blocked: false, lastError: { code: 'DEVICE_STALE' } });
    expect(heater.calls.at(-1)).toBe('allow');
    expect(log.at('warn')).toHaveLength(1);
    expect(log.at('warn')[0]).toMatchObject({ code: 'DEVICE_STALE', device: 'tank' });

    // While down, a block request is held back as "allowed".
    await dev.applyHeater(true);
    expect(heater.calls.at(-1)).toBe('allow');
    expect(dev.health().blocked).toBe(false);

    meter.set('ok');
    await dev.read(new AbortController().signal);
    await dev.read(new AbortController().signal);
    expect(dev.health().state).toBe('up');
    expect(log.at('info')).toHaveLength(1);
    expect(log.at('warn')).toHaveLength(1);
    await dev.applyHeater(true);
    expect(heater.calls.at(-1)).toBe('block:60000');
  });

  it('times a hung read out with DEVICE_TIMEOUT on the injected clock', async () => {
    const clock = new ManualClock(t0);
    const meter = scriptedMeter();
    meter.set('hang');
    const dev = superviseDevice(
      { id: 'm', kind: 'meter', capabilities: meter.caps, leaseMs: 60_000, readTimeoutMs: 2000, downAfterFailures: 1 },
      { clock, logger: captureLogger().logger },
    );
    const p = dev.read(new AbortController().signal);
    await settle();
    await clock.advance(1999);
    let done = false;
    void p.then(() => (done = true));
    await settle();
    expect(done).toBe(false);
    await clock.advance(1);
    const r = await p;
    expect(r.errors).toEqual([{ capability: 'energyMeter', code: 'DEVICE_TIMEOUT' }]);
    expect(r.temperatureC).toBe(55);
    expect(dev.health().state).toBe('down');
  });

  it('renews the block lease every half lease while healthy and releases it on stop', async () => {
    const clock = new ManualClock(t0);
    const heater = fakeHeater();
    const dev = superviseDevice(
      { id: 'tank', kind: 'hotWaterTank', capabilities: { heaterSwitch: heater.sw }, leaseMs: 600_000, readTimeoutMs: 1000 },
      { clock, logger: captureLogger().logger },
    );
    await dev.applyHeater(true);
    await clock.advance(299_999);
    expect(heater.calls).toEqual(['block:600000']);
    await clock.advance(1);
    await settle();
    expect(heater.calls).toEqual(['block:600000', 'block:600000']);
    await clock.advance(3_000_000);
    await settle();
    expect(heater.calls.filter((c) => c.startsWith('block'))).toHaveLength(12);
    await dev.applyHeater(false);
    const n = heater.calls.length;
    await clock.advance(3_000_000);
    expect(heater.calls).toHaveLength(n); // no renewal once allowed
    await dev.applyHeater(true);
    await dev.stop();
    expect(heater.calls.at(-1)).toBe('allow');
    const m = heater.calls.length;
    await clock.advance(3_000_000);
    expect(heater.calls).toHaveLength(m);
    await dev.applyHeater(true); // ignored after stop
    expect(heater.calls).toHaveLength(m);
  });

  it("writes a cap's block to the device's timer until the cap ends, and leaves it there on stop or when the device stops answering", async () => {
    const clock = new ManualClock(t0);
    const heater = fakeHeater(true, 18 * 3_600_000);
    const capEndMs = t0 + 2 * 3_600_000;
    const meter = scriptedMeter();
    const dev = superviseDevice(
      { id: 'tank', kind: 'hotWaterTank', capabilities: { ...meter.caps, heaterSwitch: heater.sw }, leaseMs: 600_000, readTimeoutMs: 1000 },
      { clock, logger: captureLogger().logger },
    );
    await dev.applyHeater(true, capEndMs);
    expect(heater.calls).toEqual(['block:7200000']);
    expect(dev.health().capHeldUntilMs).toBe(capEndMs);
    await dev.applyHeater(true, capEndMs);
    await clock.advance(2 * 3_600_000 - 300_001); // no renewal while the device's timer runs to the cap's end
    await settle();
    expect(heater.calls).toEqual(['block:7200000']);
    await clock.advance(1); // half a lease before its end: an ordinary lease from then on
    await settle();
    expect(heater.calls).toEqual(['block:7200000', 'block:600000']);

    // A second cap; the device stops answering (down): neither its safe state nor stop() releases the cap.
    const nextEndMs = clock.nowMs() + 3_600_000;
    await dev.applyHeater(true, nextEndMs);
    expect(heater.calls.at(-1)).toBe('block:3600000');
    meter.set('stale');
    await dev.read(new AbortController().signal);
    await dev.read(new AbortController().signal);
    await settle();
    expect(dev.health().state).toBe('down');
    await dev.applyHeater(true, nextEndMs);
    await dev.stop();
    expect(heater.calls.filter((c) => c === 'allow')).toEqual([]);
  });

  it("writes no more than the device's timer takes, and renews a cap's block within it", async () => {
    const clock = new ManualClock(t0);
    const heater = fakeHeater(true, 3_600_000);
    const dev = superviseDevice(
      { id: 'tank', kind: 'hotWaterTank', capabilities: { heaterSwitch: heater.sw }, leaseMs: 600_000, readTimeoutMs: 1000 },
      { clock, logger: captureLogger().logger },
    );
    await dev.applyHeater(true, t0 + 3 * 3_600_000);
    expect(heater.calls).toEqual(['block:3600000']);
    expect(dev.health().capHeldUntilMs).toBeUndefined(); // the device alone would not reach the cap's end
    await clock.advance(3_300_000);
    await settle();
    expect(heater.calls).toEqual(['block:3600000', 'block:3600000']);
    await dev.stop();
    expect(heater.calls.at(-1)).toBe('allow');
  });

  it('retries a failed renewal within the lease still running, so one lost write does not let the block lapse', async () => {
    const clock = new ManualClock(t0);
    const heater = fakeHeater();
    const dev = superviseDevice(
      { id: 'tank', kind: 'hotWaterTank', capabilities: { heaterSwitch: heater.sw }, leaseMs: 600_000, readTimeoutMs: 1000 },
      { clock, logger: captureLogger().logger },
    );
    await dev.applyHeater(true);
    heater.setFail(new WattshiftError('DEVICE_TIMEOUT', 'lost'));
    await clock.advance(300_000); // the renewal at half the lease is lost
    await settle();
    heater.setFail(undefined);
    await clock.advance(30_000); // tried again a twentieth of the lease later, 270 s before the first lease ends
    await settle();
    expect(heater.calls).toEqual(['block:600000', 'block:600000']);
    expect(dev.health().state).toBe('up');
    await clock.advance(299_999); // then every half lease from that renewal again
    await settle();
    expect(heater.calls).toHaveLength(2);
    await clock.advance(1);
    await settle();
    expect(heater.calls).toHaveLength(3);
  });

  it('counts failed renewals and stops renewing when the device goes down', async () => {
    const clock = new ManualClock(t0);
    const heater = fakeHeater();
    const log = captureLogger();
    const dev = superviseDevice(
      { id: 'tank', kind: 'hotWaterTank', capabilities: { heaterSwitch: heater.sw }, leaseMs: 60_000, readTimeoutMs: 1000 },
      { clock, logger: log.logger },
    );
    await dev.applyHeater(true);
    heater.setFail(new WattshiftError('DEVICE_UNREACHABLE', 'gone'));
    await clock.advance(30_000);
    await settle();
    expect(dev.health()).toMatchObject({ state: 'up', consecutiveFailures: 1 });
    await clock.advance(30_000);
    await settle();
    expect(dev.health()).toMatchObject({ state: 'down', lastError: { code: 'DEVICE_UNREACHABLE' } });
    expect(log.at('warn')).toHaveLength(1);
    await expect(dev.applyHeater(true)).rejects.toMatchObject({ code: 'DEVICE_UNREACHABLE' });
    expect(log.at('warn')).toHaveLength(1); // still down, not logged again
  });

  it('puts a charger at its safe current when down and on stop', async () => {
    const clock = new ManualClock(t0);
    const currents: number[] = [];
    const charger: ChargeCurrentLimit = { setCurrentA: async (a) => void currents.push(a) };
    let ok = true;
    const caps: DeviceCapabilities = {
      chargeCurrentLimit: charger,
      evStateReader: {
        readEvState: async () => {
          if (!ok) throw new WattshiftError('MQTT_UNAVAILABLE', 'broker');
          return { plugged: true, charging: true };
        },
      },
    };
    const dev = superviseDevice(
      { id: 'car', kind: 'evCharger', capabilities: caps, safeCurrentA: 6, leaseMs: 60_000, readTimeoutMs: 1000, downAfterFailures: 1 },
      { clock, logger: captureLogger().logger },
    );
    await dev.applyCurrent(16);
    expect((await dev.read(new AbortController().signal)).ev).toEqual({ plugged: true, charging: true });
    ok = false;
    await dev.read(new AbortController().signal);
    await settle();
    expect(currents).toEqual([16, 6]);
    await dev.applyCurrent(32);
    expect(currents.at(-1)).toBe(6);
    expect(dev.health()).toMatchObject({ state: 'down', currentA: 6 });
    ok = true;
    await dev.read(new AbortController().signal);
    await dev.applyCurrent(10);
    expect(currents.at(-1)).toBe(10);
    await dev.stop();
    expect(currents.at(-1)).toBe(6);
    await expect(dev.applyCurrent(Number.NaN)).resolves.toBeUndefined(); // stopped: ignored
  });

  it('hands a charger that can be released back to its own logic on stop, at no more than the safe current', async () => {
    const calls: string[] = [];
    const charger: ChargeCurrentLimit = {
      setCurrentA: async (a) => void calls.push(`set ${a}`),
      releaseCurrentA: async (a) => void calls.push(`release ${a}`),
    };
    const dev = superviseDevice(
      { id: 'car', kind: 'evCharger', capabilities: { chargeCurrentLimit: charger }, safeCurrentA: 6, leaseMs: 60_000, readTimeoutMs: 1000 },
      { clock: new ManualClock(t0), logger: captureLogger().logger },
    );
    await dev.applyCurrent(16);
    await dev.stop();
    expect(calls).toEqual(['set 16', 'release 6']);
  });

  it('keeps stop() best-effort when the device cannot be reached', async () => {
    const clock = new ManualClock(t0);
    const heater = fakeHeater();
    const log = captureLogger();
    const dev = superviseDevice(
      { id: 'tank', kind: 'hotWaterTank', capabilities: { heaterSwitch: heater.sw }, leaseMs: 60_000, readTimeoutMs: 1000 },
      { clock, logger: log.logger },
    );
    heater.setFail(new WattshiftError('DEVICE_UNREACHABLE', 'gone'));
    await expect(dev.stop()).resolves.toBeUndefined();
    expect(log.at('warn')[0]).toMatchObject({ code: 'DEVICE_UNREACHABLE' });
  });
  it('writes a relay without a device lease once per change and reports its block as not lease-protected', async () => {
    const clock = new ManualClock(t0);
    const heater = fakeHeater(false);
    const dev = superviseDevice(
      { id: 'tank', kind: 'hotWaterTank', capabilities: { heaterSwitch: heater.sw }, leaseMs: 60_000, readTimeoutMs: 1000 },
      { clock, logger: captureLogger().logger },
    );
    for (let i = 0; i < 5; i++) {
      await dev.applyHeater(true);
      await clock.advance(60_000);
      await settle();
    }
    expect(heater.calls).toEqual(['block:60000']); // no renewal: re-asserting a plain coil changes nothing
    expect(dev.health()).toMatchObject({ blocked: true, blockWithoutLease: true });
    for (let i = 0; i < 3; i++) await dev.applyHeater(false);
    expect(heater.calls).toEqual(['block:60000', 'allow']);
    expect(dev.health().blockWithoutLease).toBeUndefined();
    // A failed write is written again at the next command, even though nothing changed.
    heater.setFail(new WattshiftError('DEVICE_UNREACHABLE', 'gone'));
    await expect(dev.applyHeater(true)).rejects.toMatchObject({ code: 'DEVICE_UNREACHABLE' });
    heater.setFail(undefined);
    await dev.applyHeater(true);
    await dev.applyHeater(true);
    expect(heater.calls).toEqual(['block:60000', 'allow', 'block:60000']);
  });

  it('sets a charger current on change only, and its safe state never raises the current', async () => {
    const clock = new ManualClock(t0);
    const sets: number[] = [];
    const limits: number[] = [];
    let ok = true;
    const caps: DeviceCapabilities = {
      chargeCurrentLimit: { setCurrentA: async (a) => void sets.push(a), limitCurrentA: async (a) => void limits.push(a) },
      evStateReader: {
        readEvState: async () => {
          if (!ok) throw new WattshiftError('DEVICE_STALE', 'silent');
          return { plugged: true, charging: false };
        },
      },
    };
    const dev = superviseDevice(
      { id: 'car', kind: 'evCharger', capabilities: caps, safeCurrentA: 6, leaseMs: 60_000, readTimeoutMs: 1000, downAfterFailures: 1 },
      { clock, logger: captureLogger().logger },
    );
    for (let i = 0; i < 4; i++) await dev.applyCurrent(0);
    expect(sets).toEqual([0]);
    // Down while paused (the plan left this hour empty): the safe state keeps it paused.
    ok = false;
    await dev.read(new AbortController().signal);
    await settle();
    expect(limits).toEqual([0]);
    await dev.applyCurrent(16); // whatever is asked while down, never more than before
    expect(limits).toEqual([0]);
    expect(dev.health()).toMatchObject({ state: 'down', currentA: 0 });
    // Back up: the next command resynchronises, then only changes are written.
    ok = true;
    await dev.read(new AbortController().signal);
    await dev.applyCurrent(16);
    await dev.applyCurrent(16);
    expect(sets).toEqual([0, 16]);
    // Down while charging at 16 A: limited to the safe current, with the limit, not a forced start.
    ok = false;
    await dev.read(new AbortController().signal);
    await settle();
    expect(limits).toEqual([0, 6]);
    expect(sets).toEqual([0, 16]);
  });
});
