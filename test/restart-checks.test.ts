/**
 * The SIGKILL scenario's hour checks (test/faults/restart-checks.ts) on made-up hours: what they
 * let pass and what they catch, so that the fault suite's verdict can be trusted.
 */
import { describe, expect, it } from 'vitest';
import { checkHours } from './faults/restart-checks.js';
import type { TruthSample } from './helpers/daemon-harness.js';
import type { EnergyQuality, HourlyEnergyRow } from '../src/store/types.js';

const hourMs = 3_600_000;
const minuteMs = 60_000;
const h0 = Date.UTC(2026, 0, 14, 0);
const hour = (i: number): number => h0 + i * hourMs;

/** A sample a minute from an hour before h0 to 4 h after; the element draws 2 kW in [fromMin, toMin) (minutes after h0). */
function samples(bursts: [number, number][]): TruthSample[] {
  const drawnKwh = (m: number): number => bursts.reduce((kwh, [from, to]) => kwh + (2 * Math.max(0, Math.min(m, to) - from)) / 60, 0);
  return Array.from({ length: 5 * 60 + 1 }, (_, i) => i - 60).map((m) => ({
    atMs: h0 + m * minuteMs,
    tankC: 60,
    tankPowerW: bursts.some(([from, to]) => m >= from && m < to) ? 2000 : 0,
    tankEnergyKwh: drawnKwh(m),
    tankBlocked: false,
    tankLeaseS: 0,
    chargerPowerW: 0,
  }));
}

const row = (i: number, kwh: number, quality: EnergyQuality = 'measured'): HourlyEnergyRow => ({
  subject: 'device:tank',
  hourStartMs: hour(i),
  kwh,
  quality,
  samples: 0,
  updatedAtMs: 0,
});
const truthOf = (...kwh: number[]): Map<number, number> => new Map(kwh.map((k, i) => [hour(i), k]));
const noRestarts = (): boolean => false;

describe('checkHours', () => {
  it('holds an hour read in full to the Wh when nothing was drawn near its boundaries', () => {
    const s = samples([[20, 40]]);
    expect(checkHours([row(0, 0.6667)], truthOf(2 / 3), s, noRestarts).problems).toEqual([]);
    expect(checkHours([row(0, 0.6747)], truthOf(2 / 3), s, noRestarts).problems).toHaveLength(1);
  });

  it('lets an estimated hour differ by what was drawn within one interpolated interval of a boundary, and no more', () => {
    // 40 s at 2 kW just after 01:00 (0.0222 kWh): interpolation may have put part of it in hour 0.
    const s = samples([[60, 60 + 2 / 3]]);
    const truth = truthOf(0, 0.0222);
    expect(checkHours([row(0, 0.0053, 'estimated'), row(1, 0.0169, 'estimated')], truth, s, noRestarts).problems).toEqual([]);
    // The same burst at 01:30 is too far from either boundary to move.
    const far = samples([[90, 90 + 2 / 3]]);
    expect(checkHours([row(0, 0.0053, 'estimated'), row(1, 0.0169, 'estimated')], truth, far, noRestarts).problems).toHaveLength(2);
  });

  it('sees a burst shorter than the sampling interval through the energy integral', () => {
    // Samples a minute apart; the burst lasts 20 s between two of them.
    const s = samples([[60 + 1 / 6, 60 + 1 / 2]]);
    const moved = (2 * (1 / 3)) / 60;
    expect(checkHours([row(0, moved, 'estimated'), row(1, 0, 'estimated')], truthOf(0, moved), s, noRestarts).problems).toEqual([]);
  });

  it('lets energy move between hours around a restart but never be counted twice', () => {
    const s = samples([[50, 70]]);
    const truth = truthOf(1 / 3, 1 / 3);
    const near = (h: number): boolean => h === hour(0) || h === hour(1);
    const moved = checkHours([row(0, 0.1, 'partial'), row(1, 0.5667)], truth, s, near);
    expect(moved.problems).toEqual([]);
    expect(moved.runs).toEqual([[hour(0), hour(1)]]);
    expect(checkHours([row(0, 1 / 3), row(1, 2 / 3)], truth, s, near).problems).toHaveLength(1);
  });

  it('does not hold an hour to the Wh at a boundary no sample brackets (the end of the run)', () => {
    const s = samples([]);
    const result = checkHours([row(3, 0.05, 'estimated')], truthOf(0, 0, 0, 0), s, noRestarts);
    expect(result.problems).toEqual([]);
    expect(result.skewed.has(hour(3))).toBe(true);
    expect(checkHours([row(2, 0.05, 'estimated')], truthOf(0, 0, 0), s, noRestarts).problems).toHaveLength(1);
  });
});
