import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load.js';
import type { HeatPumpConfig } from '../config/schema.js';
import { decide, type Setpoint } from '../core/control.js';
import { memoryLogger } from '../../test/fixtures/modbus/servers.js';
import { createHeatPumpControl } from './heat-pump-control.js';

const MIN = 60_000;
/** 2026-01-15 08:00 in Oslo. */
const T0 = Date.UTC(2026, 0, 15, 7);

function pumpConfig(block: Record<string, number> = {}): HeatPumpConfig {
  const relay = (channel: number) => ({ type: 'modbus', bus: 'hp', profile: 'wattshift-sim-heat-pump', channel });
  const { config } = parseConfig({
    version: 1,
    site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 11 },
    spark: { clientId: 'c', clientSecret: 'client-secret-inline' },
    storage: { path: ':memory:' },
    modbus: { hp: { type: 'tcp', host: '127.0.0.1' } },
    devices: [
      { id: 'hp', kind: 'heatPump', contacts: { relay1: relay(0), relay2: relay(1) }, block, model: { volumeL: 200, electricKw: 0.5, floorC: 45 } },
    ],
  });
  return config.devices[0] as HeatPumpConfig;
}

/** One control tick at `atMs` of an expensive slot with no heat planned. */
function tick(hp: ReturnType<typeof createHeatPumpControl>, cfg: HeatPumpConfig, atMs: number, temperatureC = 55): Setpoint {
  const plan = {
    createdMs: T0,
    currency: 'NOK',
    slotMinutes: 60,
    startMs: T0,
    endMs: T0 + 48 * 3_600_000,
    mode: 'optimal' as const,
    slots: Array.from({ length: 48 }, (_, i) => ({
      startMs: T0 + i * 3_600_000,
      endMs: T0 + (i + 1) * 3_600_000,
      price: i % 24 < 12 ? 3 : 0.5,
      delta: 0,
      source: 'forecast' as const,
      headroomKw: 10,
    })),
  } as unknown as Parameters<typeof hp.now>[2];
  const now = hp.now(
    cfg,
    { available: true, mode: 'auto', temperatureC, powerW: 0, slotEnergyKwh: 0, planned: { energyKwh: 0, powerKw: 0 } },
    plan,
    atMs,
  );
  const d = decide([now], { capKw: 11, locationPowerW: undefined, baseLoadKw: 1 });
  hp.applied(d.setpoints, atMs);
  return d.setpoints[0]!;
}

const state = (s: Setpoint): string => (s.kind === 'heatPump' ? s.state : s.kind);

describe('heat pump control: the lock budget across ticks', () => {
  it('locks an expensive slot for at most maxMinutes, then refuses with SG_LOCK_REFUSED, logged once', () => {
    const { logger, lines } = memoryLogger();
    const hp = createHeatPumpControl({ timezone: 'Europe/Oslo', logger });
    const cfg = pumpConfig({ maxMinutes: 60, perDay: 1 });
    const states: string[] = [];
    for (let m = 0; m <= 180; m += 10) states.push(state(tick(hp, cfg, T0 + m * MIN)));
    expect(states.slice(0, 6)).toEqual(['block', 'block', 'block', 'block', 'block', 'block']);
    expect(states.slice(6).every((s) => s === 'normal')).toBe(true);
    const refusals = lines.filter((l) => l.code === 'SG_LOCK_REFUSED');
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ device: 'hp', why: 'a lock lasts at most 60 minutes' });
    expect(hp.budget('hp')).toMatchObject({ locks: 1, usedMs: 60 * MIN, sinceMs: null });
  });

  it('never locks below the floor, and the next local day has a new budget', () => {
    const hp = createHeatPumpControl({ timezone: 'Europe/Oslo', logger: memoryLogger().logger });
    const cfg = pumpConfig({ perDay: 1 });
    expect(state(tick(hp, cfg, T0, 44))).toBe('normal');
    expect(state(tick(hp, cfg, T0 + MIN))).toBe('block');
    expect(state(tick(hp, cfg, T0 + 20 * MIN, 44.9))).toBe('normal');
    expect(state(tick(hp, cfg, T0 + 90 * MIN))).toBe('normal');
    // 08:00 the next day in Oslo: a new day, a new lock.
    expect(state(tick(hp, cfg, T0 + 24 * 60 * MIN))).toBe('block');
  });
});
