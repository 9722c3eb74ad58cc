/**
 * Physical bounds on metered values that come from devices (currents, voltages, power, energy
 * counters, meter clocks). A value outside them is not a measurement but a fault or a forgery, and
 * is refused with DEVICE_BAD_VALUE: the reader then treats the quantity as missing, which ages
 * into stale and the device's safe behaviour (see "Metered values" in docs/architecture.md).
 *
 * - A line current: a home's main fuse is at most 100 A (a few have 125 A); a gG fuse carries
 *   1.6 times its rating for up to an hour (IEC 60269-1, conventional fusing current), so no line
 *   of a home carries more than 160 A for as long as a reading lasts. The RMS current a meter
 *   reports is a magnitude: a negative one is not a reading (and would read as an empty line).
 * - A phase-to-neutral voltage: 230 V nominal, ±10 % in EN 50160; 300 V leaves room for any
 *   transient a meter averages over and is still far from anything a working grid delivers.
 * - Power: three lines at those limits, 3 × 300 V × 160 A = 144 kW, either direction.
 * - An energy counter: non-negative and below 10⁹ kWh (more digits than any meter register has).
 *   Its steps (never down, never faster than the device can draw) are checked where the counter
 *   becomes hourly energy (`core/metering.ts`): a refused step is an uncovered interval.
 * - A meter clock: within 15 minutes of the host's clock. Hourly registers are stamped with it;
 *   further off, the hour they belong to is unknown.
 */
import { WattshiftError } from '../errors.js';

export const meteredBounds = {
  /** RMS current per line, A. */
  phaseCurrentA: [0, 160],
  /** Phase-to-neutral voltage, V. */
  phaseVoltageV: [0, 300],
  /** Active power, W: import positive, export negative. */
  powerW: [-144_000, 144_000],
  /** Import or export alone (a register that has a direction), W. */
  directedPowerW: [0, 144_000],
  /** A cumulative energy counter, kWh. */
  energyKwh: [0, 1e9],
  /** A cumulative energy counter in Wh. */
  energyWh: [0, 1e12],
  /** Water or room temperature a home's sensor reports, °C. */
  temperatureC: [-50, 150],
} as const satisfies Record<string, readonly [number, number]>;

export type MeteredQuantity = keyof typeof meteredBounds;

/** Largest difference between a meter's clock and the host's, ms. */
export const meterClockSkewMs = 15 * 60_000;

/** A finite number within [min, max] (a numeric string counts), or DEVICE_BAD_VALUE. */
export function plausible(value: unknown, min: number, max: number, what: string): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < min || n > max) {
    throw new WattshiftError('DEVICE_BAD_VALUE', `${what}: ${JSON.stringify(value)} is not a number in [${min}, ${max}]`, {
      details: { min, max },
    });
  }
  return n;
}

/** `value` checked against the bounds of `quantity`, or DEVICE_BAD_VALUE naming `what`. */
export function metered(quantity: MeteredQuantity, value: unknown, what: string): number {
  const [min, max] = meteredBounds[quantity];
  return plausible(value, min, max, what);
}

/** Whether `value` is a reading of `quantity` at all (for callers that mark it missing instead). */
export function isMetered(quantity: MeteredQuantity, value: number): boolean {
  const [min, max] = meteredBounds[quantity];
  return Number.isFinite(value) && value >= min && value <= max;
}

/** A meter's clock (epoch ms) when within `meterClockSkewMs` of the host's `nowMs`, or DEVICE_BAD_VALUE. */
export function meterClock(meterMs: unknown, nowMs: number, what: string): number {
  return plausible(meterMs, nowMs - meterClockSkewMs, nowMs + meterClockSkewMs, `${what} (meter clock, epoch ms)`);
}
