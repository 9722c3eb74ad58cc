import { describe, expect, it } from 'vitest';
import { isMetered, metered, meterClock, meteredBounds, meterClockSkewMs } from './metered-bounds.js';

const refused = (f: () => unknown): void => {
  expect(f).toThrow(expect.objectContaining({ code: 'DEVICE_BAD_VALUE' }));
};

describe('metered value bounds', () => {
  it('accepts what a home meters and refuses what it cannot', () => {
    expect(metered('phaseCurrentA', 63, 'I1')).toBe(63);
    expect(metered('phaseCurrentA', '12.5', 'I1')).toBe(12.5);
    refused(() => metered('phaseCurrentA', 1e9, 'I1'));
    refused(() => metered('phaseCurrentA', -1000, 'I1'));
    refused(() => metered('phaseCurrentA', Number.NaN, 'I1'));
    expect(metered('phaseVoltageV', 253, 'U1')).toBe(253);
    refused(() => metered('phaseVoltageV', 400, 'U1'));
    expect(metered('powerW', -11_000, 'P')).toBe(-11_000);
    refused(() => metered('powerW', 1e9, 'P'));
    refused(() => metered('directedPowerW', -1, 'P'));
    refused(() => metered('energyKwh', -0.5, 'tPI'));
    refused(() => metered('energyKwh', 'lots', 'tPI'));
  });

  it('derives the power bound from the line bounds', () => {
    const [, maxA] = meteredBounds.phaseCurrentA;
    const [, maxV] = meteredBounds.phaseVoltageV;
    expect(meteredBounds.powerW[1]).toBe(3 * maxA * maxV);
  });

  it('accepts a meter clock near the host clock and refuses one in 2100', () => {
    const now = Date.UTC(2026, 5, 1, 12);
    expect(meterClock(now + meterClockSkewMs, now, 'rtc')).toBe(now + meterClockSkewMs);
    refused(() => meterClock(Date.UTC(2100, 0, 1), now, 'rtc'));
    refused(() => meterClock(now - meterClockSkewMs - 1, now, 'rtc'));
  });

  it('tells a reading from a non-reading without throwing', () => {
    expect(isMetered('phaseCurrentA', 10)).toBe(true);
    expect(isMetered('phaseCurrentA', -1000)).toBe(false);
    expect(isMetered('phaseCurrentA', Number.POSITIVE_INFINITY)).toBe(false);
  });
});
