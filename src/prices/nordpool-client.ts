/**
 * The Nord Pool data portal's day-ahead prices (`GET {url}/DayAheadPriceIndices`), the second
 * price source: the published auction result per delivery day (CET), hourly or per 15 minutes,
 * per MWh in the requested currency. No credentials. A day not yet published answers 204.
 */
import { z } from 'zod';
import { WattshiftError } from '../errors.js';
import type { PricePointsInput } from '../core/types.js';
import { request } from '../spark/request.js';

const entrySchema = z.looseObject({
  deliveryStart: z.iso.datetime({ offset: true }),
  deliveryEnd: z.iso.datetime({ offset: true }),
  entryPerArea: z.record(z.string(), z.number().finite()),
});

/** The body as the portal sends it; fields we do not use are kept, not refused. */
export const dayAheadResponseSchema = z.looseObject({
  deliveryDateCET: z.string(),
  currency: z.string().regex(/^[A-Z]{3}$/),
  resolutionInMinutes: z.union([z.literal(15), z.literal(60)]),
  multiIndexEntries: z.array(entrySchema),
});

export interface DayAheadQuery {
  /** Delivery day, `YYYY-MM-DD` (CET). */
  date: string;
  area: string;
  currency: string;
  resolutionMinutes: 15 | 60;
  signal?: AbortSignal;
}

export interface NordPoolClient {
  /** The day's prices of one area, or null when the day is not published yet. */
  dayAhead(q: DayAheadQuery): Promise<PricePointsInput | null>;
}

/** The prices of `area` in a portal answer, as price points (per MWh, excluding VAT). */
export function toPricePoints(body: z.infer<typeof dayAheadResponseSchema>, area: string): PricePointsInput {
  const points = body.multiIndexEntries.map((e) => {
    const price = e.entryPerArea[area];
    if (price === undefined)
      throw new WattshiftError('API_BAD_RESPONSE', `Nord Pool: no ${area} price for ${e.deliveryStart}`, { details: { source: 'nordPool' } });
    return { startMs: Date.parse(e.deliveryStart), price };
  });
  return {
    units: { currency: body.currency, energyUnit: 'MWh' },
    resolutionMinutes: body.resolutionInMinutes,
    points: points.sort((a, b) => a.startMs - b.startMs),
  };
}

export function createNordPoolClient(options: { url: string; timeoutMs: number }): NordPoolClient {
  const base = options.url.replace(/\/+$/, '');
  return {
    async dayAhead(q) {
      const params = new URLSearchParams({
        date: q.date,
        market: 'DayAhead',
        indexNames: q.area,
        currency: q.currency,
        resolutionInMinutes: String(q.resolutionMinutes),
      });
      const signal = q.signal ? AbortSignal.any([q.signal, AbortSignal.timeout(options.timeoutMs)]) : AbortSignal.timeout(options.timeoutMs);
      const details = { source: 'nordPool', date: q.date, area: q.area };
      let res;
      try {
        res = await request(`${base}/DayAheadPriceIndices?${params.toString()}`, { signal, headers: { accept: 'application/json' } });
      } catch (err) {
        throw new WattshiftError('API_UNAVAILABLE', `Nord Pool: ${err instanceof Error ? err.message : String(err)}`, { cause: err, details });
      }
      if (res.statusCode === 204) {
        await res.body.dump();
        return null;
      }
      if (res.statusCode < 200 || res.statusCode >= 300) {
        await res.body.dump();
        const code = res.statusCode === 429 || res.statusCode >= 500 ? 'API_UNAVAILABLE' : 'API_REJECTED';
        throw new WattshiftError(code, `Nord Pool answered ${res.statusCode}`, { details: { ...details, status: res.statusCode } });
      }
      const parsed = dayAheadResponseSchema.safeParse(await res.body.json().catch(() => undefined));
      if (!parsed.success)
        throw new WattshiftError('API_BAD_RESPONSE', `Nord Pool: unexpected body (${parsed.error.issues[0]?.message ?? 'not JSON'})`, { details });
      return toPricePoints(parsed.data, q.area);
    },
  };
}
