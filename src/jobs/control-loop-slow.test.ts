/**
 * A device that answers slowly makes the control tick late: the loop says so (CONTROL_TICK_SLOW),
 * naming the slowest device, a few times per window rather than on every tick.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { createLogger } from '../log.js';
import type { DeviceConfig } from '../config/schema.js';
import type { DeviceReading, SupervisedDevice } from '../devices/supervisor.js';
import type { Metering } from './metering.js';
import { startControlLoop, type ControlledDevice } from './control-loop.js';

function device(id: string, clock: ManualClock, readMs: () => number): ControlledDevice {
  const supervised: SupervisedDevice = {
    read: async (signal): Promise<DeviceReading> => {
      const atMs = clock.nowMs();
      await clock.sleep(readMs(), signal).catch(() => undefined);
      return { atMs, powerW: 100, errors: [] };
    },
    applyHeater: async () => undefined,
    applySgReady: async () => undefined,
    applyCurrent: async () => undefined,
    health: () => ({ state: 'up', sinceMs: 0, consecutiveFailures: 0, blocked: false }),
    stop: async () => undefined,
  };
  return { config: { id, kind: 'meter' } as unknown as DeviceConfig, subject: id, device: supervised };
}

const metering: Metering = {
  feed: () => undefined,
  tick: () => undefined,
  flush: () => undefined,
  lastValue: () => undefined,
  openHours: () => new Map(),
  hourWrites: () => 0,
  health: () => ({ ok: true, lastError: null, buffered: 0 }),
};

describe('control loop: a slow device read', () => {
  it('warns CONTROL_TICK_SLOW with the slowest device when reading takes longer than a tick, and not when it does not', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 12));
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } });
    let gatewayMs = 2_000;
    const control = startControlLoop({
      devices: [device('fast', clock, () => 500), device('gateway', clock, () => gatewayMs)],
      mainMeter: null,
      metering,
      clock,
      logger,
      tickMs: 10_000,
      slotMinutes: 60,
      inputs: {
        plan: () => null,
        locationCapKw: () => 17,
        deviceCapKw: () => undefined,
        intent: () => ({ mode: 'auto', boostUntilMs: null }),
        baseLoadKw: () => 0.5,
        estimatedTankC: () => undefined,
      },
      onTick: () => undefined,
    });
    const slow = () => lines.filter((l) => l['code'] === 'CONTROL_TICK_SLOW');
    for (let i = 0; i < 6; i++) await clock.advance(5_000);
    expect(slow()).toEqual([]);
    gatewayMs = 14_000; // a Modbus gateway that answers late
    for (let i = 0; i < 40; i++) await clock.advance(5_000);
    expect(slow()[0]).toMatchObject({ level: 'warn', slowest: 'gateway', tickMs: 10_000 });
    expect(slow()[0]!['tookMs']).toBeGreaterThanOrEqual(14_000);
    expect(slow()).toHaveLength(3); // then quiet for the rest of the window
    await control.stop();
  });
});
