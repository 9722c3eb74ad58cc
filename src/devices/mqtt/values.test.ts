import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../clock.js';
import { WattshiftError } from '../../errors.js';
import { LatestValues } from './values.js';

describe('LatestValues', () => {
  const t0 = Date.UTC(2026, 0, 14, 10);
  const make = (connected = true) => {
    const clock = new ManualClock(t0);
    return { clock, values: new LatestValues({ device: 'dev', clock, staleAfterMs: 60_000, isConnected: () => connected }) };
  };

  it('keeps the arrival time of each value, however late it is read', async () => {
    const { clock, values } = make();
    await clock.advance(5_000);
    values.put('eto', 1234);
    await clock.advance(40_000);
    expect(values.getStamped('eto')).toEqual({ value: 1234, atMs: t0 + 5_000 });
    expect(values.get('eto')).toBe(1234);
  });

  it('fails stamped reads like plain ones: stale, bad, offline, broker down', async () => {
    const { clock, values } = make();
    values.put('eto', 1);
    await clock.advance(60_001);
    expect(() => values.getStamped('eto')).toThrow(expect.objectContaining({ code: 'DEVICE_STALE' }));
    values.put('eto', 2);
    values.bad('eto', new WattshiftError('DEVICE_BAD_VALUE', 'eto: "x" is not a number'));
    expect(() => values.getStamped('eto')).toThrow(expect.objectContaining({ code: 'DEVICE_BAD_VALUE' }));
    values.put('eto', 3);
    values.setOffline(new WattshiftError('DEVICE_UNREACHABLE', 'dev reports itself offline'));
    expect(() => values.getStamped('eto')).toThrow(expect.objectContaining({ code: 'DEVICE_UNREACHABLE' }));
    expect(() => make(false).values.getStamped('eto')).toThrow(expect.objectContaining({ code: 'MQTT_UNAVAILABLE' }));
  });
});
