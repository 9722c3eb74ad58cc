/**
 * The second price source against a local HTTP server serving the Nord Pool data portal's real
 * recorded answers (data/prices/nordpool_dataportal_*.json): parsing, the day not yet published
 * (204), failures by status, the price job's merge of today and tomorrow, and the series order.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { buildPriceSeries } from '../src/core/prices.js';
import { isWattshiftError, WattshiftError } from '../src/errors.js';
import { deliveryDays, startPriceRefresh, type PriceData } from '../src/jobs/price-refresh.js';
import type { PriceSource } from '../src/upstream/port.js';
import { createLogger, silentLogger } from '../src/log.js';
import { createNordPoolClient } from '../src/prices/nordpool-client.js';

const hourly = readFileSync(new URL('../data/prices/nordpool_dataportal_DayAheadPriceIndices_2025-05-07_SE1-4_60min.json', import.meta.url), 'utf8');
const quarters = readFileSync(new URL('../data/prices/nordpool_dataportal_DayAheadPriceIndices_2025-05-07_FI_15min.json', import.meta.url), 'utf8');

/** What the server answers per `date` query; the requests it saw. */
const answers = new Map<string, { status: number; body?: string }>();
const seen: URLSearchParams[] = [];
let server: Server;
let url = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    seen.push(u.searchParams);
    const a =
      u.pathname === '/api/DayAheadPriceIndices'
        ? answers.get(`${u.searchParams.get('date')}/${u.searchParams.get('resolutionInMinutes')}`)
        : undefined;
    if (a?.status === 0) return; // never answers
    res.writeHead(a?.status ?? 404, { 'content-type': 'application/json' });
    res.end(a?.body ?? '');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((r) => server.close(() => r()));
});

const client = () => createNordPoolClient({ url, timeoutMs: 2_000 });

async function failure(p: Promise<unknown>): Promise<WattshiftError> {
  try {
    await p;
  } catch (err) {
    if (isWattshiftError(err)) return err;
    throw err;
  }
  throw new Error('did not fail');
}

describe('Nord Pool data portal client', () => {
  it('reads one area of the hourly answer as 24 prices per MWh, asking for the day, area, currency and resolution', async () => {
    answers.set('2025-05-07/60', { status: 200, body: hourly });
    const p = (await client().dayAhead({ date: '2025-05-07', area: 'SE3', currency: 'EUR', resolutionMinutes: 60 }))!;
    expect(p.units).toEqual({ currency: 'EUR', energyUnit: 'MWh' });
    expect(p.resolutionMinutes).toBe(60);
    expect(p.points).toHaveLength(24);
    expect(p.points[0]).toEqual({ startMs: Date.parse('2025-05-06T22:00:00Z'), price: 56.85 });
    expect(p.points[2]).toEqual({ startMs: Date.parse('2025-05-07T00:00:00Z'), price: 48.66 });
    expect(Object.fromEntries(seen.at(-1)!)).toEqual({
      date: '2025-05-07',
      market: 'DayAhead',
      indexNames: 'SE3',
      currency: 'EUR',
      resolutionInMinutes: '60',
    });
  });

  it('reads the 15-minute answer (96 quarter-hours) and refuses an area the answer lacks', async () => {
    answers.set('2025-05-07/15', { status: 200, body: quarters });
    const p = (await client().dayAhead({ date: '2025-05-07', area: 'FI', currency: 'EUR', resolutionMinutes: 15 }))!;
    expect(p.points).toHaveLength(96);
    expect(p.points[1]!.startMs - p.points[0]!.startMs).toBe(15 * 60_000);
    expect((await failure(client().dayAhead({ date: '2025-05-07', area: 'SE3', currency: 'EUR', resolutionMinutes: 15 }))).code).toBe(
      'API_BAD_RESPONSE',
    );
  });

  it('answers null for a day not yet published (204) and fails by status otherwise', async () => {
    answers.set('2025-05-08/60', { status: 204 });
    expect(await client().dayAhead({ date: '2025-05-08', area: 'SE3', currency: 'EUR', resolutionMinutes: 60 })).toBeNull();
    answers.set('2025-05-09/60', { status: 503, body: 'busy' });
    expect((await failure(client().dayAhead({ date: '2025-05-09', area: 'SE3', currency: 'EUR', resolutionMinutes: 60 }))).code).toBe(
      'API_UNAVAILABLE',
    );
    answers.set('2025-05-10/60', { status: 400, body: '{}' });
    expect((await failure(client().dayAhead({ date: '2025-05-10', area: 'SE3', currency: 'EUR', resolutionMinutes: 60 }))).code).toBe('API_REJECTED');
    answers.set('2025-05-11/60', { status: 200, body: '{"multiIndexEntries": "no"}' });
    expect((await failure(client().dayAhead({ date: '2025-05-11', area: 'SE3', currency: 'EUR', resolutionMinutes: 60 }))).code).toBe(
      'API_BAD_RESPONSE',
    );
    const closed = createNordPoolClient({ url: 'http://127.0.0.1:1/api', timeoutMs: 500 });
    expect((await failure(closed.dayAhead({ date: '2025-05-07', area: 'SE3', currency: 'EUR', resolutionMinutes: 60 }))).code).toBe(
      'API_UNAVAILABLE',
    );
  });

  it('treats rate limiting (429) and a server that never answers within timeoutMs as unavailable', async () => {
    answers.set('2025-05-12/60', { status: 429, body: '{"message":"Too many requests"}' });
    const limited = await failure(client().dayAhead({ date: '2025-05-12', area: 'SE3', currency: 'EUR', resolutionMinutes: 60 }));
    expect(limited).toMatchObject({ code: 'API_UNAVAILABLE', details: { source: 'nordPool', status: 429 } });
    answers.set('2025-05-13/60', { status: 0 });
    const slow = createNordPoolClient({ url, timeoutMs: 300 });
    const hung = await failure(slow.dayAhead({ date: '2025-05-13', area: 'SE3', currency: 'EUR', resolutionMinutes: 60 }));
    expect(hung).toMatchObject({ code: 'API_UNAVAILABLE', details: { source: 'nordPool' } });
    answers.set('2025-05-14/60', { status: 200, body: 'not json at all' });
    expect((await failure(client().dayAhead({ date: '2025-05-14', area: 'SE3', currency: 'EUR', resolutionMinutes: 60 }))).code).toBe(
      'API_BAD_RESPONSE',
    );
  });
});

describe("Nord Pool as the price job's second source", () => {
  // 7 May 2025, 10:00 UTC: the delivery days are the 7th (published) and the 8th (204 above).
  const now = Date.parse('2025-05-07T10:00:00Z');
  const down = (): never => {
    throw new WattshiftError('API_UNAVAILABLE', 'forecast service down');
  };
  const forecastDown: PriceSource = { forecast: async () => down(), advice: async () => down(), actualPrices: async () => down() };

  it('fetches today and tomorrow by the CET delivery day, keeping today when tomorrow is not out', async () => {
    expect(deliveryDays(now)).toEqual(['2025-05-07', '2025-05-08']);
    expect(deliveryDays(Date.parse('2025-05-06T22:30:00Z'))[0]).toBe('2025-05-07');
    answers.set('2025-05-07/60', { status: 200, body: hourly });
    const job = startPriceRefresh({
      source: forecastDown,
      area: 'SE3',
      currency: 'EUR',
      clock: new ManualClock(now),
      logger: silentLogger(),
      horizonMs: 24 * 3_600_000,
      onChange: () => undefined,
      nordPool: { client: client(), resolutionMinutes: 60 },
    });
    await new Promise((r) => setTimeout(r, 200));
    await job.stop();
    expect(job.data().nordPool?.input.points).toHaveLength(24);
    expect(job.data().forecast).toBeNull();
    // The forecast service is down: the job says so, whatever the second source holds.
    expect(job.health().lastError?.code).toBe('API_UNAVAILABLE');
  });

  it('keeps the last good Nord Pool prices when the portal fails, logs the code once per try and retries in 5 minutes', async () => {
    const nordPool = (await client().dayAhead({ date: '2025-05-07', area: 'SE3', currency: 'EUR', resolutionMinutes: 60 }))!;
    const good: PriceSource = {
      forecast: async () => down(),
      advice: async () => down(),
      actualPrices: async () => down(),
    };
    for (const [status, body, code] of [
      [500, 'oops', 'API_UNAVAILABLE'],
      [429, '', 'API_UNAVAILABLE'],
      [200, '{"multiIndexEntries": 3}', 'API_BAD_RESPONSE'],
    ] as const) {
      answers.set('2025-05-07/60', { status, body });
      const lines: string[] = [];
      const clock = new ManualClock(now);
      const job = startPriceRefresh({
        source: good,
        area: 'SE3',
        currency: 'EUR',
        clock,
        horizonMs: 24 * 3_600_000,
        onChange: () => undefined,
        logger: createLogger({ destination: { write: (l: string) => void lines.push(l) } }),
        initial: { forecast: null, advice: null, actual: null, nordPool: { input: nordPool, fetchedMs: now - 3_600_000 } },
        nordPool: { client: client(), resolutionMinutes: 60 },
      });
      const asked = (): number => seen.filter((p) => p.get('date') === '2025-05-07').length;
      await new Promise((r) => setTimeout(r, 200));
      const first = asked();
      // Tried again 5 minutes later (not at the hourly refresh).
      await clock.advance(5 * 60_000);
      await new Promise((r) => setTimeout(r, 200));
      await job.stop();
      expect(asked(), `${status}`).toBe(first + 1);
      expect(job.data().nordPool).toEqual({ input: nordPool, fetchedMs: now - 3_600_000 });
      const logged = lines
        .map((l) => JSON.parse(l) as { code?: string; part?: string; level: string; ageMs?: number })
        .filter((l) => l.part === 'nordPool');
      expect(logged, `${status}`).toEqual([
        expect.objectContaining({ code, level: 'warn', ageMs: 3_600_000 }),
        expect.objectContaining({ code, level: 'warn' }),
      ]);
    }
    answers.set('2025-05-07/60', { status: 200, body: hourly });
  });

  it("cross-checks the forecast service's actual prices against Nord Pool's and says once where they differ", async () => {
    answers.set('2025-05-07/60', { status: 200, body: hourly });
    const published = (await client().dayAhead({ date: '2025-05-07', area: 'SE3', currency: 'EUR', resolutionMinutes: 60 }))!;
    // The same auction result, as the forecast service gives it (per kWh), but one hour wrong.
    const wrongHour = published.points[14]!.startMs;
    const prices = Object.fromEntries(
      published.points.map((p) => [new Date(p.startMs).toISOString(), p.startMs === wrongHour ? p.price / 1000 + 0.05 : p.price / 1000]),
    );
    const source: PriceSource = {
      advice: async () => down(),
      actualPrices: async () => ({ priceArea: 'SE3', priceUnits: { currency: 'EUR', energyUnit: 'kWh' }, prices }),
    };
    const lines: Record<string, unknown>[] = [];
    const clock = new ManualClock(now);
    const job = startPriceRefresh({
      source,
      area: 'SE3',
      currency: 'EUR',
      clock,
      horizonMs: 24 * 3_600_000,
      onChange: () => undefined,
      logger: createLogger({ destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } }),
      nordPool: { client: client(), resolutionMinutes: 60 },
    });
    await new Promise((r) => setTimeout(r, 200));
    await clock.advance(5 * 60_000); // the advice failed: tried again, with the same prices
    await new Promise((r) => setTimeout(r, 200));
    await job.stop();
    const said = lines.filter((l) => l.code === 'PRICE_SOURCES_DISAGREE');
    expect(said).toEqual([expect.objectContaining({ level: 'warn', hours: 1, compared: 24, worstHour: new Date(wrongHour).toISOString() })]);
  });

  it('compares nothing when the forecast service answers in another currency than Nord Pool (no rate is guessed)', async () => {
    answers.set('2025-05-07/60', { status: 200, body: hourly });
    const published = (await client().dayAhead({ date: '2025-05-07', area: 'SE3', currency: 'EUR', resolutionMinutes: 60 }))!;
    // SEK per kWh: every hour about eleven times the EUR figure, which would all "differ" if compared.
    const prices = Object.fromEntries(published.points.map((p) => [new Date(p.startMs).toISOString(), (p.price / 1000) * 11.2]));
    const source: PriceSource = {
      advice: async () => down(),
      actualPrices: async () => ({ priceArea: 'SE3', priceUnits: { currency: 'SEK', energyUnit: 'kWh' }, prices }),
    };
    const lines: Record<string, unknown>[] = [];
    const clock = new ManualClock(now);
    let seen: PriceData | undefined;
    const job = startPriceRefresh({
      source,
      area: 'SE3',
      currency: 'EUR',
      clock,
      horizonMs: 24 * 3_600_000,
      onChange: (d) => void (seen = d),
      logger: createLogger({ destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } }),
      nordPool: { client: client(), resolutionMinutes: 60 },
    });
    await new Promise((r) => setTimeout(r, 200));
    await job.stop();
    // Both sources were fetched, and kept; neither was checked against the other.
    expect(seen?.actual?.input.units.currency).toBe('SEK');
    expect(seen?.nordPool?.input.units.currency).toBe('EUR');
    expect(lines.filter((l) => l.code === 'PRICE_SOURCES_DISAGREE')).toEqual([]);
  });

  it('prices a slot from Nord Pool where the forecast service has nothing, or first when configured', async () => {
    const nordPool = (await client().dayAhead({ date: '2025-05-07', area: 'SE3', currency: 'EUR', resolutionMinutes: 60 }))!;
    const from = Date.parse('2025-05-07T00:00:00Z');
    const forecast = {
      units: { currency: 'EUR', energyUnit: 'kWh' as const },
      segments: [{ fromMs: from, toMs: from + 3_600_000, averagePrice: 0.1 }],
    };
    const series = (nordPoolFirst: boolean) =>
      buildPriceSeries({
        slotMinutes: 60,
        fromMs: from,
        toMs: from + 2 * 3_600_000,
        timezone: 'Europe/Stockholm',
        currency: 'EUR',
        spot: { forecast, nordPool, nordPoolFirst },
        deltas: [],
        fees: { gridFeePerKwh: 0, taxPerKwh: 0 },
      });
    const [a, b] = series(false);
    expect(a).toMatchObject({ source: 'forecast', spot: 0.1 });
    expect(b!.source).toBe('nordPool');
    expect(b!.spot).toBeCloseTo(0.04988, 9);
    expect(series(true)[0]).toMatchObject({ source: 'nordPool', spot: expect.closeTo(0.04866, 9) });
  });
});
