import { describe, expect, it } from 'vitest';
import { canHoldLocationCap, canHoldResourceCap, capRunEndMs, type CapPoint, type DeviceHold } from './cap-hold.js';

const h = 3_600_000;
const point = (startH: number, maxKw: number, resourceId: string | null = null, hours = 1): CapPoint => ({
  startMs: startH * h,
  durationMs: hours * h,
  maxKw,
  resourceId,
});
/** A 2 kW heater relay whose timer goes to 18 h, one without a timer, an 11 kW charger without one. */
const shelly: DeviceHold = { up: true, ratedKw: 2, holdsByItselfMs: 18 * h, unheldKw: 2 };
const plainCoil: DeviceHold = { up: true, ratedKw: 2, holdsByItselfMs: 0, unheldKw: 2 };
const goe: DeviceHold = { up: true, ratedKw: 11, holdsByItselfMs: 0, unheldKw: 11 };

describe('capRunEndMs', () => {
  it('joins consecutive points into one window, from the one active now', () => {
    const points = [point(18, 0, 'r'), point(19, 0, 'r'), point(21, 0, 'r')];
    const mine = (p: CapPoint) => p.resourceId === 'r';
    expect(capRunEndMs(points, 18 * h, mine)).toBe(20 * h);
    expect(capRunEndMs(points, 19.5 * h, mine)).toBe(20 * h);
    expect(capRunEndMs(points, 20 * h, mine)).toBeUndefined();
    expect(capRunEndMs(points, 21 * h, mine)).toBe(22 * h);
    expect(capRunEndMs(points, 18 * h, (p) => p.resourceId === 'other')).toBeUndefined();
  });
  it("carries a run across a location point and the device's own, but not into a looser cap", () => {
    expect(capRunEndMs([point(18, 1, null), point(19, 0, 'r', 2)], 18 * h, () => true)).toBe(21 * h);
    expect(capRunEndMs([point(18, 0, 'r'), point(19, 15, null, 5)], 18 * h, () => true, 2)).toBe(19 * h);
    // 1 kW after 0 kW still keeps a 2 kW element off: one window.
    expect(capRunEndMs([point(18, 0, 'r'), point(19, 1, 'r')], 18 * h, () => true, 2)).toBe(20 * h);
    expect(capRunEndMs([point(18, 0, 'r'), point(19, 1, 'r')], 18 * h, () => true)).toBe(19 * h);
  });
});

describe('canHoldResourceCap', () => {
  it('acknowledges a device that holds the window by itself, or one the cap asks nothing of', () => {
    expect(canHoldResourceCap(shelly, [point(18, 0, 'r'), point(19, 0, 'r')])).toBe(true);
    expect(canHoldResourceCap(plainCoil, [point(18, 0, 'r')])).toBe(false);
    expect(canHoldResourceCap(plainCoil, [point(18, 2, 'r')])).toBe(true);
    expect(canHoldResourceCap({ ...shelly, up: false }, [point(18, 0, 'r')])).toBe(false);
    expect(canHoldResourceCap(undefined, [point(18, 0, 'r')])).toBe(false);
  });
  it('counts a window across points that all keep the device off', () => {
    const points = [point(0, 0, 'r', 10), point(10, 1, 'r', 9)];
    expect(canHoldResourceCap(shelly, points)).toBe(false); // 19 h with the element off
    expect(canHoldResourceCap(shelly, [point(0, 0, 'r', 10), point(10, 5, 'r', 9)])).toBe(true);
  });
  it("declines a window longer than the device's timer goes", () => {
    expect(
      canHoldResourceCap(
        shelly,
        Array.from({ length: 19 }, (_, i) => point(i, 0, 'r')),
      ),
    ).toBe(false);
    expect(
      canHoldResourceCap(
        shelly,
        Array.from({ length: 18 }, (_, i) => point(i, 0, 'r')),
      ),
    ).toBe(true);
  });
});

describe('canHoldLocationCap', () => {
  it('counts the house load from the meter and every device that would draw with wattshift gone', () => {
    // 0.8 kW house load; the Shelly heater holds its block, the go-e would charge at 11 kW.
    expect(canHoldLocationCap(0.8, [shelly], [point(18, 1)])).toBe(true);
    expect(canHoldLocationCap(0.8, [shelly], [point(18, 0.5)])).toBe(false);
    expect(canHoldLocationCap(0.8, [shelly, goe], [point(18, 5)])).toBe(false);
    expect(canHoldLocationCap(0.8, [shelly, goe], [point(18, 12)])).toBe(true);
    expect(canHoldLocationCap(0.8, [plainCoil], [point(18, 2)])).toBe(false);
    expect(canHoldLocationCap(0.8, [plainCoil], [point(18, 3)])).toBe(true);
    // A heater that is down may not take the block: counted at its draw.
    expect(canHoldLocationCap(0.8, [{ ...shelly, up: false }], [point(18, 1)])).toBe(false);
  });
});
