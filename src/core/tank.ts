/**
 * One-node hot water tank model: stored energy above cold water, E = C·(T − T_cold), with
 * E[t+1] = a·E[t] − k[t] + q[t], a = 1 − UA·Δt/C, k[t] = D[t] + UA·Δt·(T_cold − T_amb).
 */
import type { TankParams } from './types.js';

/**
 * Default hot-water draw per local hour (kWh): EN 16147 tapping cycle "M" (5.845 kWh/day)
 * aggregated to hours.
 */
export const defaultDrawProfileKwh: readonly number[] = [
  0, 0, 0, 0, 0, 0, 0, 1.61, 0.42, 0.21, 0.105, 0.21, 0.315, 0, 0.105, 0.105, 0.105, 0, 0.315, 0.105, 0.735, 1.505, 0, 0,
];

/** Water heat capacity, kWh per litre and kelvin. */
export const KWH_PER_L_K = 0.001163;

export interface TankModel {
  /** Heat capacity, kWh/K. */
  capacityKwhPerK: number;
  /** Per-slot retention factor. */
  a: number;
  /** Per-slot constant term: draw + loss offset, kWh. */
  k: number[];
  draws: number[];
  eMax: number;
  eFloor: number;
  /** Element energy per slot at full power. */
  slotKwh: number;
  toE(tempC: number): number;
  toC(energyKwh: number): number;
}

export function tankModel(tank: TankParams, slotHours: number, localHours: ReadonlyArray<number>): TankModel {
  const C = tank.volumeL * KWH_PER_L_K;
  const ua = tank.heatLossWPerK / 1000;
  const a = 1 - (ua * slotHours) / C;
  const b = ua * slotHours * (tank.coldWaterC - tank.ambientC);
  const profile = tank.drawProfileKwh ?? defaultDrawProfileKwh;
  const draws = localHours.map((h) => (profile[h] ?? 0) * slotHours);
  const toE = (t: number): number => C * (t - tank.coldWaterC);
  return {
    capacityKwhPerK: C,
    a,
    k: draws.map((d) => d + b),
    draws,
    eMax: toE(tank.maxC),
    eFloor: toE(tank.minC),
    slotKwh: tank.powerKw * slotHours,
    toE,
    toC: (e: number): number => tank.coldWaterC + e / C,
  };
}

/**
 * Estimates the tank temperature at `toMs` from a last known temperature by integrating the
 * energy balance hour by hour with the draw profile, plus the metered heating energy, clamped
 * to [cold water, thermostat].
 */
export function estimateTankTempC(
  tank: TankParams,
  from: { tempC: number; atMs: number },
  toMs: number,
  heatedKwh: number,
  localHourOf: (ms: number) => number,
): number {
  const C = tank.volumeL * KWH_PER_L_K;
  const ua = tank.heatLossWPerK / 1000;
  const profile = tank.drawProfileKwh ?? defaultDrawProfileKwh;
  let e = C * (from.tempC - tank.coldWaterC);
  let t = from.atMs;
  const eMax = C * (tank.maxC - tank.coldWaterC);
  const stepMs = 3_600_000;
  while (t < toMs) {
    const h = Math.min(stepMs, toMs - t) / stepMs;
    const draw = (profile[localHourOf(t)] ?? 0) * h;
    e = (1 - (ua * h) / C) * e - draw - ua * h * (tank.coldWaterC - tank.ambientC);
    t += stepMs;
  }
  e = Math.min(eMax, Math.max(0, e + Math.max(0, heatedKwh)));
  return tank.coldWaterC + e / C;
}
