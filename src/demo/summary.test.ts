import { describe, expect, it } from 'vitest';
import { capMark, naiveCharging, summarise, summaryLines, type HourRecord } from './summary.js';

const H = 3_600_000;
const hour = (i: number, over: Partial<HourRecord> = {}): HourRecord => ({
  hourStartMs: i * H,
  price: 1,
  delta: 0,
  tankKwh: 0,
  carKwh: 0,
  baselineKwh: 0,
  ...over,
});

describe('the demo summary', () => {
  it('says what was paid with the incentive already in it, and what shifting saved against the baseline', () => {
    const hours = [
      hour(0, { price: 0.5, delta: -0.5, tankKwh: 4, baselineKwh: 0 }), // a rewarded hour: 1.00 → 0.50
      hour(1, { price: 2, tankKwh: 0, baselineKwh: 4 }),
      hour(2, { price: 1, caps: { 'Hot water': 0 } }),
    ];
    const s = summarise(hours, { reportsAccepted: 2, reportsRejected: 0, floorViolations: 0, capViolations: 0 });
    const lines = summaryLines(s, hours, 'NOK');
    expect(lines).toContain("  to pay             2.00 NOK for the devices' energy, after 2.00 NOK of incentive earned was taken off");
    expect(lines).toContain('  saved              6.00 NOK against no shifting (which would have cost 8.00 NOK)');
    expect(lines).toContain('  limits             1 hour(s) under a power-limitation (LPC) cap (Hot water), 0 cap violation(s)');
    expect(summaryLines(s, hours.slice(0, 2), 'NOK')).toContain('  limits             no power-limitation (LPC) hour');
  });

  it('marks an hour under a cap on its line', () => {
    expect(capMark({ 'Hot water': 0, home: 7 })).toBe('  LPC Hot water ≤ 0.0 kW, home ≤ 7.0 kW');
    expect(capMark(undefined)).toBe('');
    expect(capMark({})).toBe('');
  });

  it('charges the naive car at full power from its arrival, not from the hour it really charged in', () => {
    // Plugged in at 17:30, gone at 07:30; it really took 20 kWh between 02:00 and 04:00.
    const hours = Array.from({ length: 16 }, (_, i) => hour(17 + i, { carKwh: i === 9 || i === 10 ? 10 : 0 }));
    const naive = naiveCharging(hours, [{ fromMs: 17.5 * H, untilMs: 31.5 * H }], 11);
    expect(naive.slice(0, 4)).toEqual([5.5, 11, 3.5, 0]);
    expect(naive.reduce((a, b) => a + b, 0)).toBeCloseTo(20, 9);
    // Energy outside every known session stays in its hour.
    expect(naiveCharging(hours, [], 11)).toEqual(hours.map((h) => h.carKwh));
  });
});
