/**
 * The abort listeners a read leaves on its caller's signal. The control loop passes one signal to
 * every device's read of a tick, so each read may hold only one listener on it while it runs (not
 * one per capability: a few devices of four or five capabilities made Node warn of a listener
 * leak, `MaxListenersExceededWarning`), and none once it ends.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { silentLogger } from '../log.js';
import { superviseDevice, type DeviceCapabilities } from './supervisor.js';

/** A device whose every read waits until `answer()`, as one behind a slow bus does. */
function slowDevice() {
  const waiting: (() => void)[] = [];
  const later =
    <T>(value: T) =>
    (): Promise<T> =>
      new Promise<T>((resolve) => waiting.push(() => resolve(value)));
  const caps: DeviceCapabilities = {
    energyMeter: { readEnergyKwh: later(12.5) },
    powerMeter: { readPowerW: later(2000) },
    thermometer: { readTemperatureC: later(55) },
    evStateReader: { readEvState: later({ plugged: true, charging: true }) },
    phaseMeter: { readPhases: later({ currentsA: [8, 8, 8], voltagesV: [], atMs: 0 }) },
  };
  return { caps, waiting, answer: () => waiting.splice(0).forEach((f) => f()) };
}

const settle = () => new Promise((r) => setImmediate(r));

describe("a supervised read and its caller's signal", () => {
  it('holds one abort listener per device read while the reads run, and none after', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 5));
    const tick = new AbortController();
    const devices = ['tank', 'car', 'meter'].map((id) => {
      const d = slowDevice();
      return {
        d,
        sup: superviseDevice(
          { id, kind: 'evCharger', capabilities: d.caps, leaseMs: 60_000, readTimeoutMs: 10_000 },
          { clock, logger: silentLogger() },
        ),
      };
    });
    const reads = devices.map(({ sup }) => sup.read(tick.signal));
    await settle();
    expect(devices.every(({ d }) => d.waiting.length === 5)).toBe(true);
    expect(getEventListeners(tick.signal, 'abort')).toHaveLength(devices.length);
    for (const { d } of devices) d.answer();
    const readings = await Promise.all(reads);
    expect(readings.map((r) => r.powerW)).toEqual([2000, 2000, 2000]);
    expect(getEventListeners(tick.signal, 'abort')).toHaveLength(0);
  });

  it("still ends every capability's read when the caller aborts", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 5));
    const tick = new AbortController();
    const d = slowDevice();
    const sup = superviseDevice(
      { id: 'car', kind: 'evCharger', capabilities: d.caps, leaseMs: 60_000, readTimeoutMs: 10_000 },
      { clock, logger: silentLogger() },
    );
    const read = sup.read(tick.signal);
    await settle();
    tick.abort(new Error('stopping'));
    const reading = await read;
    expect(reading.powerW).toBeUndefined();
    expect(reading.errors).toHaveLength(5);
    expect(getEventListeners(tick.signal, 'abort')).toHaveLength(0);
  });
});
