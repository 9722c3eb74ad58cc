import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { silentLogger } from '../log.js';
import { WattshiftError } from '../errors.js';
import { startPriceRefresh, toForecastInput, type PriceData, type PriceSource } from './price-refresh.js';

const t0 = Date.UTC(2026, 0, 14, 10);
const units = { currency: 'NOK', energyUnit: 'kWh', vat: { rate: 1, hasVAT: false } };
const settle = () => new Promise((r) => setImmediate(r));

function source(state: { down: boolean; calls: number }): PriceSource {
  const fail = (): never => {
    throw new WattshiftError('API_UNAVAILABLE', 'down');
  };
  const segment = { from: new Date(t0).toISOString(), to: new Date(t0).toISOString(), averagePrice: 0.8 };
  return {
    forecast: async () => (state.calls++, state.down ? fail() : { priceArea: 'NO1', priceUnits: units, forecastSegments: [segment] }),
    advice: async () => (state.down ? fail() : { priceArea: 'NO1', priceUnits: units, forecastAdvice: [{ ...segment, type: 'Good' }] }),
    actualPrices: async () => (state.down ? fail() : { priceArea: 'NO1', priceUnits: units, prices: { [new Date(t0).toISOString()]: 0.7 } }),
  };
}

describe('startPriceRefresh', () => {
  it('keeps the last good data with its age through an outage and retries sooner than hourly', async () => {
    const clock = new ManualClock(t0);
    const state = { down: false, calls: 0 };
    const seen: PriceData[] = [];
    const job = startPriceRefresh({ source: source(state), area: 'NO1', currency: 'NOK', clock, logger: silentLogger(), onChange: (d) => seen.push(d) });
    await settle();
    expect(job.data().forecast?.fetchedMs).toBe(t0);
    expect(job.data().actual?.input.points).toEqual([{ startMs: t0, price: 0.7 }]);
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
    expect(seen).toHaveLength(2);
    await job.stop();
  });

  it('reads a segment whose end is the start of its last hour', () => {
    const from = new Date(t0).toISOString();
    const to = new Date(t0 + 5 * 3_600_000).toISOString();
    const input = toForecastInput(units, [{ from, to, averagePrice: 1 }], 6);
    expect(input.toIsLastHourStart).toBe(true);
    expect(toForecastInput(units, [{ from, to, averagePrice: 1 }], 5).toIsLastHourStart).toBe(false);
  });
});
