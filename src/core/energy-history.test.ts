import { describe, expect, it } from 'vitest';
import { endedHours, historyPeriods, periodEnergy, planOutcome, plannedByHour, type PlannedSlots } from './energy-history.js';

const H = 3_600_000;
const OSLO = 'Europe/Oslo';

describe('history periods', () => {
  it('are local days and months, newest first, with the DST days 23 and 25 hours long', () => {
    // 2026-10-26 12:00 Oslo (CET): the day before is the 25-hour autumn day.
    const now = Date.UTC(2026, 9, 26, 11);
    const { days, months } = historyPeriods(now, OSLO, { days: 3, months: 13 });
    expect(days.map((d) => d.label)).toEqual(['2026-10-26', '2026-10-25', '2026-10-24']);
    expect(days.map((d) => (d.endMs - d.startMs) / H)).toEqual([24, 25, 24]);
    expect(days[0]!.startMs).toBe(Date.UTC(2026, 9, 25, 23));
    expect(months[0]).toMatchObject({ label: '2026-10', startMs: Date.UTC(2026, 8, 30, 22), endMs: Date.UTC(2026, 9, 31, 23) });
    expect(months[12]!.label).toBe('2025-10');
    // March 2026 lost an hour to DST.
    const march = months.find((m) => m.label === '2026-03')!;
    expect((march.endMs - march.startMs) / H).toBe(31 * 24 - 1);
  });

  it('count only the hours that have ended', () => {
    const day = { label: 'd', startMs: 0, endMs: 24 * H };
    expect(endedHours(day, 5 * H + 59 * 60_000)).toBe(5);
    expect(endedHours(day, 30 * H)).toBe(24);
    expect(endedHours(day, -H)).toBe(0);
  });
});

describe('period energy quality', () => {
  const day = { label: 'd', startMs: 0, endMs: 24 * H };
  const at = 24 * H;
  it('is complete only when every ended hour has its whole energy', () => {
    expect(periodEnergy({ kwh: 12, completeHours: 24, partialHours: 0, gapHours: 0 }, day, at).quality).toBe('complete');
    expect(periodEnergy({ kwh: 12, completeHours: 5, partialHours: 0, gapHours: 0 }, day, 5 * H).quality).toBe('complete');
  });
  it('is partial with missing, partly metered or gap hours beside known ones', () => {
    expect(periodEnergy({ kwh: 11, completeHours: 23, partialHours: 0, gapHours: 0 }, day, at)).toEqual({
      kwh: 11,
      quality: 'partial',
      hours: 24,
      completeHours: 23,
    });
    expect(periodEnergy({ kwh: 11, completeHours: 23, partialHours: 1, gapHours: 0 }, day, at).quality).toBe('partial');
    expect(periodEnergy({ kwh: 11, completeHours: 0, partialHours: 1, gapHours: 23 }, day, at).quality).toBe('partial');
    expect(periodEnergy({ kwh: 11, completeHours: 23, partialHours: 0, gapHours: 1 }, day, at).quality).toBe('partial');
  });
  it('is a gap when no hour has energy', () => {
    expect(periodEnergy({ kwh: 0, completeHours: 0, partialHours: 0, gapHours: 24 }, day, at).quality).toBe('gap');
    expect(periodEnergy({ kwh: 0, completeHours: 0, partialHours: 0, gapHours: 0 }, day, at).quality).toBe('gap');
  });
});

describe('planned against metered', () => {
  const slots = (createdMs: number, fromMs: number, n: number, minutes: number, kwh: number): PlannedSlots => ({
    createdMs,
    slots: Array.from({ length: n }, (_, i) => ({
      startMs: fromMs + i * minutes * 60_000,
      endMs: fromMs + (i + 1) * minutes * 60_000,
      energyKwh: { tank: kwh },
    })),
  });

  it('takes each hour from the newest plan made before it began, summing 15-minute slots', () => {
    const older = slots(0, 0, 6 * 4, 15, 0.5); // 2 kWh an hour
    const newer = slots(2 * H + 60_000, 2 * H, 4, 60, 1); // made a minute after 02:00
    const planned = plannedByHour([newer, older], 0, 6 * H);
    expect([...planned.keys()]).toEqual([0, H, 2 * H, 3 * H, 4 * H, 5 * H]);
    expect(planned.get(2 * H)).toEqual({ tank: 2 }); // the newer plan began after 02:00
    expect(planned.get(3 * H)).toEqual({ tank: 1 });
  });

  it('leaves out hours no plan made before them covers whole', () => {
    const late = slots(3 * H, 0, 6, 60, 1);
    const half = slots(0, 30 * 60_000, 1, 30, 1); // only 00:30–01:00
    const planned = plannedByHour([late, half], 0, 6 * H);
    expect([...planned.keys()]).toEqual([3 * H, 4 * H, 5 * H]);
  });

  it('compares only hours with a known plan and a whole metered hour', () => {
    const planned = new Map<number, Record<string, number>>([
      [0, { tank: 2 }],
      [H, { tank: 2 }],
      [2 * H, { car: 7 }],
    ]);
    const metered = [
      { hourStartMs: 0, kwh: 1.5, complete: true },
      { hourStartMs: H, kwh: 0.3, complete: false },
      { hourStartMs: 2 * H, kwh: 0.2, complete: true },
      { hourStartMs: 3 * H, kwh: 9, complete: true },
    ];
    expect(planOutcome('tank', { label: 'd', startMs: 0, endMs: 24 * H }, planned, metered)).toEqual({ plannedKwh: 2, meteredKwh: 1.7, hours: 2 });
    expect(planOutcome('tank', { label: 'd', startMs: 24 * H, endMs: 48 * H }, planned, metered)).toBeNull();
  });
});
