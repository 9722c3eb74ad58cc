import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { silentLogger } from '../log.js';
import { WattshiftError } from '../errors.js';
import { pricesWithinKey, startPriceRefresh, toForecastInput, type PriceData } from './price-refresh.js';
import type { PriceSource } from '../upstream/port.js';

const t0 = Date.UTC(2026, 0, 14, 10);
const hourMs = 3_600_000;
const units = { currency: 'NOK', energyUnit: 'kWh', vat: { rate: 1, hasVAT: false } };
const settle = () => new Promise((r) => setImmediate(r));

function source(state: { down: boolean; calls: number; actual: number }): PriceSource {
  const fail = (): never => {
    throw new WattshiftError('API_UNAVAILABLE', 'down');
  };
  const segment = { from: new Date(t0).toISOString(), to: new Date(t0).toISOString(), averagePrice: 0.8 };
  return {
    forecast: async () => (state.calls++, state.down ? fail() : { priceArea: 'NO1', priceUnits: units, forecastSegments: [segment] }),
    advice: async () => (state.down ? fail() : { priceArea: 'NO1', priceUnits: units, forecastAdvice: [{ ...segment, type: 'Good' }] }),
    // Today's and tomorrow's hours; the one 10 h after t0 has the price in `state.actual`.
    actualPrices: async () =>
      state.down
        ? fail()
        : {
            priceArea: 'NO1',
            priceUnits: units,
            prices: Object.fromEntries(
              Array.from({ length: 48 }, (_, h) => [new Date(t0 + h * hourMs).toISOString(), h === 10 ? state.actual : 0.7]),
            ),
          },
  };
}

describe('startPriceRefresh', () => {
  it('keeps the last good data with its age through an outage, retries sooner than hourly, and reports only changed prices', async () => {
    const clock = new ManualClock(t0);
    const state = { down: false, calls: 0, actual: 0.7 };
    const seen: PriceData[] = [];
    const job = startPriceRefresh({
      source: source(state),
      area: 'NO1',
      currency: 'NOK',
      clock,
      logger: silentLogger(),
      horizonMs: 24 * hourMs,
      onChange: (d) => seen.push(d),
    });
    await settle();
    expect(job.data().forecast?.fetchedMs).toBe(t0);
    expect(job.data().actual?.input.points[0]).toEqual({ startMs: t0, price: 0.7 });
    expect(job.health().ok).toBe(true);

    state.down = true;
    await clock.advance(3_600_000);
    expect(state.calls).toBe(2);
    expect(job.health()).toMatchObject({ ok: false, lastError: { code: 'API_UNAVAILABLE' } });
    expect(job.data().forecast?.fetchedMs).toBe(t0);
    expect(seen).toHaveLength(1);

    // A failed refresh is tried again after 5 minutes, not an hour.
    state.down = false;
    await clock.advance(5 * 60_000);
    expect(state.calls).toBe(3);
    expect(job.health().ok).toBe(true);
    expect(job.data().forecast?.fetchedMs).toBe(t0 + 65 * 60_000);
    // The same prices again: no re-plan, no rewrite of the saved copy.
    expect(seen).toHaveLength(1);

    state.actual = 0.9;
    await clock.advance(3_600_000);
    expect(state.calls).toBe(4);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.actual?.input.points[10]).toEqual({ startMs: t0 + 10 * hourMs, price: 0.9 });
    await job.stop();
  });

  it('takes prices as changed only where they differ within the planning horizon', () => {
    const hourly = (n: number, price: (h: number) => number) => ({
      units: { currency: 'NOK', energyUnit: 'kWh' as const, vatIncluded: 1 },
      segments: Array.from({ length: n }, (_, h) => ({ fromMs: t0 + h * hourMs, toMs: t0 + (h + 1) * hourMs, averagePrice: price(h) })),
    });
    const key = (input: ReturnType<typeof hourly>, nowMs: number) => pricesWithinKey(input, nowMs, nowMs + 24 * hourMs);
    const week = hourly(168, () => 1);
    // Slid on by an hour, with a changed price beyond the horizon: the same for the planner.
    const slid = { ...week, segments: [...week.segments.slice(1), { fromMs: t0 + 168 * hourMs, toMs: t0 + 169 * hourMs, averagePrice: 5 }] };
    expect(key(slid, t0 + hourMs)).toBe(key(week, t0 + hourMs));
    expect(
      key(
        hourly(168, (h) => (h === 30 ? 2 : 1)),
        t0 + hourMs,
      ),
    ).toBe(key(week, t0 + hourMs));
    // A change inside it, or other units, is a change.
    expect(
      key(
        hourly(168, (h) => (h === 20 ? 2 : 1)),
        t0 + hourMs,
      ),
    ).not.toBe(key(week, t0 + hourMs));
    expect(key({ ...week, units: { ...week.units, currency: 'EUR' } }, t0)).not.toBe(key(week, t0));
    // A segment whose `toMs` is the start of its last hour covers that hour.
    const lastHour = { units: week.units, toIsLastHourStart: true, segments: [{ fromMs: t0, toMs: t0, averagePrice: 1 }] };
    expect(pricesWithinKey(lastHour, t0 + 30 * 60_000, t0 + hourMs)).not.toBe(
      pricesWithinKey({ ...lastHour, segments: [] }, t0 + 30 * 60_000, t0 + hourMs),
    );
    // Points: an hour that began before now but has not ended counts.
    const points = { units: week.units, resolutionMinutes: 60, points: [{ startMs: t0, price: 1 }] };
    expect(pricesWithinKey(points, t0 + 30 * 60_000, t0 + hourMs)).not.toBe(
      pricesWithinKey({ ...points, points: [{ startMs: t0, price: 2 }] }, t0 + 30 * 60_000, t0 + hourMs),
    );
    expect(pricesWithinKey(points, t0 + hourMs, t0 + 2 * hourMs)).toBe(
      pricesWithinKey({ ...points, points: [{ startMs: t0, price: 2 }] }, t0 + hourMs, t0 + 2 * hourMs),
    );
  });

  it('reads a segment whose end is the start of its last hour', () => {
    const from = new Date(t0).toISOString();
    const to = new Date(t0 + 5 * 3_600_000).toISOString();
    const input = toForecastInput(units, [{ from, to, averagePrice: 1 }], 6);
    expect(input.toIsLastHourStart).toBe(true);
    expect(toForecastInput(units, [{ from, to, averagePrice: 1 }], 5).toIsLastHourStart).toBe(false);
  });
});
