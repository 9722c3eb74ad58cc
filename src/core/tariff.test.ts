import { describe, expect, it } from 'vitest';
import { priceSlotsWithTariff, slotCost, tariffLocalTime, type TariffModel } from './tariff.js';
import { hoursOfLocalDay, localDayStartMs } from './zoned-time.js';
import type { PriceSlot } from './types.js';
import { dayFeeTariff } from '../../test/fixtures/tariff.js';

const OSLO = 'Europe/Oslo';

/** Day 06–22 on weekdays 0.40, everything else 0.30; spot with 0.05 markup; NO subsidy. */
const tariff: TariffModel = dayFeeTariff({ markupPerKwh: 0.05, dayPerKwh: 0.4, holidays: ['12-25', '2026-04-02'] });

describe('slotCost', () => {
  it('adds markup, day fee, tax and VAT; no subsidy under the threshold', () => {
    // Wednesday 11 Nov 2026 12:00 Oslo = 11:00 UTC.
    const c = slotCost(tariff, Date.parse('2026-11-11T11:00:00Z'), 0.5, -0.2, OSLO);
    expect(c).toMatchObject({ energy: 0.55, gridFee: 0.4, gridPeriod: 'day', tax: 0.1, subsidy: 0, delta: -0.2 });
    expect(c.vat).toBeCloseTo(1.05 * 0.25, 12);
    expect(c.total).toBeCloseTo(1.05 * 1.25 - 0.2, 12);
  });

  it('refunds 90 % of spot above the threshold, before VAT (so the refund carries VAT)', () => {
    const c = slotCost(tariff, Date.parse('2026-11-11T11:00:00Z'), 1.75, 0, OSLO);
    expect(c.subsidy).toBeCloseTo(0.9, 12);
    expect(c.total).toBeCloseTo((1.8 + 0.4 + 0.1 - 0.9) * 1.25, 12);
  });

  it('ignores spot and subsidy under a fixed price (Norgespris)', () => {
    const fixed: TariffModel = { ...tariff, energy: { basis: 'fixed', pricePerKwh: 0.4 } };
    const cheap = slotCost(fixed, Date.parse('2026-11-11T11:00:00Z'), 0.01, 0, OSLO);
    const dear = slotCost(fixed, Date.parse('2026-11-11T11:00:00Z'), 3, 0, OSLO);
    expect(dear).toEqual(cheap);
    expect(dear).toMatchObject({ energy: 0.4, subsidy: 0 });
  });

  it('uses the night/weekend fee at night, on Saturdays and on listed holidays', () => {
    expect(slotCost(tariff, Date.parse('2026-11-11T21:00:00Z'), 0, 0, OSLO).gridPeriod).toBe('default'); // 22:00 local
    expect(slotCost(tariff, Date.parse('2026-11-11T05:00:00Z'), 0, 0, OSLO).gridPeriod).toBe('day'); // 06:00 local
    expect(slotCost(tariff, Date.parse('2026-11-14T11:00:00Z'), 0, 0, OSLO).gridPeriod).toBe('default'); // Saturday
    expect(slotCost(tariff, Date.parse('2026-12-25T11:00:00Z'), 0, 0, OSLO).gridPeriod).toBe('default'); // Friday, Christmas
    expect(slotCost(tariff, Date.parse('2026-04-02T10:00:00Z'), 0, 0, OSLO).gridPeriod).toBe('default'); // Maundy Thursday
    expect(tariffLocalTime(Date.parse('2026-04-02T10:00:00Z'), OSLO, tariff.holidays)).toMatchObject({ date: '2026-04-02', hour: 12, weekend: true });
  });

  it('prices DST days by local hour: 16 day hours on both the 23-hour and the 25-hour day', () => {
    const allDays: TariffModel = {
      ...tariff,
      gridEnergy: { perKwh: 0.3, periods: [{ name: 'day', days: 'all', hours: { from: 6, to: 22 }, perKwh: 0.4 }] },
    };
    for (const [date, n] of [
      ['2026-03-29T12:00:00Z', 23],
      ['2026-10-25T12:00:00Z', 25],
    ] as const) {
      const hours = hoursOfLocalDay(localDayStartMs(Date.parse(date), OSLO), OSLO);
      expect(hours).toHaveLength(n);
      const day = hours.filter((h) => slotCost(allDays, h, 0, 0, OSLO).gridPeriod === 'day');
      expect(day).toHaveLength(16);
    }
  });
});

describe('priceSlotsWithTariff', () => {
  it('replaces price and fees and keeps the components for explanations', () => {
    const start = Date.parse('2026-11-11T11:00:00Z');
    const slot: PriceSlot = { startMs: start, endMs: start + 3_600_000, spot: 0.5, delta: 0, fees: 0, price: 0.5, source: 'actual' };
    const [out] = priceSlotsWithTariff([slot], tariff, OSLO);
    expect(out!.fees).toBeCloseTo(0.5, 12);
    expect(out!.price).toBeCloseTo(1.05 * 1.25, 12);
    expect(out!.components?.gridPeriod).toBe('day');
  });
});
