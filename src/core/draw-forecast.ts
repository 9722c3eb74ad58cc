/**
 * Hot-water draws learned from a tank's energy balance, for a tank with a thermometer: per closed
 * hour, draw = heat in − change of stored energy − standing loss (the one-node model of `tank.ts`),
 * averaged per local hour with recent days weighing more. Too little history, or no thermometer,
 * keeps the configured profile (or EN 16147 "M"). Pure.
 */
import type { TankParams } from './types.js';
import { defaultDrawProfileKwh, tankModel } from './tank.js';
import { localDayAndHour } from './load-forecast.js';

/** One closed hour of a tank: the heat its element put in, and its temperature at both ends. */
export interface TankHour {
  hourStartMs: number;
  heatInKwh: number;
  startC: number;
  endC: number;
}

/** Usable hours needed to learn draws: a week, and three of each local hour at least. */
export const MIN_DRAW_HOURS = 7 * 24;
const MIN_DRAW_HOUR_SAMPLES = 3;

export interface DrawProfile {
  source: 'learned' | 'configured' | 'default';
  /** Draw per local hour 0..23, kWh. */
  profileKwh: number[];
}

/** The configured profile, or the default one. */
export function configuredDraws(tank: Pick<TankParams, 'drawProfileKwh'>): DrawProfile {
  return tank.drawProfileKwh
    ? { source: 'configured', profileKwh: [...tank.drawProfileKwh] }
    : { source: 'default', profileKwh: [...defaultDrawProfileKwh] };
}

/** What a closed hour's balance says was drawn, kWh (never below zero: a sensor's wobble is no draw). */
export function drawOfHour(tank: TankParams, h: TankHour): number {
  const m = tankModel(tank, 1, [0]);
  // One hour of the model: E_end = a·E_start − draw − b + heat, with b = k − draw of the hour.
  const b = m.k[0]! - m.draws[0]!;
  return Math.max(0, m.a * m.toE(h.startC) - b + h.heatInKwh - m.toE(h.endC));
}

export function fitDrawProfile(
  tank: TankParams,
  hours: ReadonlyArray<TankHour>,
  o: { timezone: string; nowMs: number; halfLifeDays?: number },
): DrawProfile {
  const usable = hours.filter(
    (h) => Number.isFinite(h.heatInKwh) && h.heatInKwh >= 0 && Number.isFinite(h.startC) && Number.isFinite(h.endC) && h.hourStartMs < o.nowMs,
  );
  if (usable.length < MIN_DRAW_HOURS) return configuredDraws(tank);
  const halfLifeMs = (o.halfLifeDays ?? 14) * 86_400_000;
  const sum = new Array<number>(24).fill(0);
  const weight = new Array<number>(24).fill(0);
  const count = new Array<number>(24).fill(0);
  for (const h of usable) {
    const { hour } = localDayAndHour(h.hourStartMs, o.timezone, []);
    const w = Math.pow(0.5, Math.max(0, o.nowMs - h.hourStartMs) / halfLifeMs);
    sum[hour]! += w * drawOfHour(tank, h);
    weight[hour]! += w;
    count[hour]!++;
  }
  if (count.some((c) => c < MIN_DRAW_HOUR_SAMPLES)) return configuredDraws(tank);
  return { source: 'learned', profileKwh: sum.map((s, i) => s / weight[i]!) };
}
