import { describe, expect, it } from 'vitest';
import { fleetWireVersion, type FleetAdvice } from '../fleet/wire.js';
import { createLogger } from '../log.js';
import { fleetPriceSource } from './fleet-prices.js';

const units = (currency: string) => ({ currency, energyUnit: 'kWh' });
const hour = (h: number) => `2026-01-14T${String(h).padStart(2, '0')}:00:00Z`;
const advice: FleetAdvice['advice'] = {
  priceArea: 'NO1',
  priceUnits: units('NOK'),
  forecastAdvice: [{ from: hour(0), to: hour(5), averagePrice: 1, type: 'Normal' }],
};
const forecast: NonNullable<FleetAdvice['forecast']> = {
  priceArea: 'NO1',
  priceUnits: units('NOK'),
  forecastSegments: [0, 1, 2].map((h) => ({ from: hour(h), to: hour(h), averagePrice: h / 10 })),
};
const actual: NonNullable<FleetAdvice['actual']> = { priceArea: 'NO1', priceUnits: units('NOK'), prices: { [hour(0)]: 0.5 } };

function source(message: FleetAdvice | null, currency = 'NOK') {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });
  return { prices: fleetPriceSource(() => message, { priceArea: 'NO1', currency }, logger), lines };
}

const query = { area: 'NO1' };

describe('fleet price source', () => {
  it('fails FLEET_NO_ADVICE and offers no hourly parts before the hub has published', async () => {
    const { prices } = source(null);
    await expect(prices.advice(query)).rejects.toMatchObject({ code: 'FLEET_NO_ADVICE' });
    expect(prices.forecast).toBeUndefined();
    expect(prices.actualPrices).toBeUndefined();
  });

  it('offers the advice alone when the message carries nothing else', async () => {
    const { prices } = source({ v: fleetWireVersion, fetchedAtMs: 0, advice });
    expect(await prices.advice(query)).toBe(advice);
    expect(prices.forecast).toBeUndefined();
    expect(prices.actualPrices).toBeUndefined();
  });

  it('offers the hourly forecast and the actual prices the message carries, as sent', async () => {
    const { prices } = source({ v: fleetWireVersion, fetchedAtMs: 0, advice, forecast, actual });
    expect(await prices.forecast!(query)).toBe(forecast);
    expect(await prices.actualPrices!(query)).toBe(actual);
  });

  it('does not use hourly prices in another currency, and says so once', () => {
    const { prices, lines } = source({ v: fleetWireVersion, fetchedAtMs: 0, advice, forecast, actual }, 'SEK');
    expect(prices.forecast).toBeUndefined();
    expect(prices.actualPrices).toBeUndefined();
    expect(prices.forecast).toBeUndefined();
    expect(lines.filter((l) => l.code === 'FLEET_CURRENCY_MISMATCH')).toEqual([expect.objectContaining({ hub: 'NOK', site: 'SEK' })]);
  });
});
