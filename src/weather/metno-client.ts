/**
 * MET Norway's Locationforecast 2.0, `compact` format (GeoJSON): the air temperature per hour for
 * the first days, per 6 hours after. Asked as MET's terms of service (api.met.no/doc/TermsOfService)
 * and the Locationforecast HowTO require: a User-Agent naming the product and a contact, no more than
 * 4 decimals in the coordinates (truncated), and `If-Modified-Since` with the exact `Last-Modified`
 * string of the last answer, so an unchanged forecast costs a 304 without a body. When to ask again
 * (`Expires`) is the caller's: the answer carries it.
 */
import { z } from 'zod';
import { WattshiftError } from '../errors.js';
import { createSparkConnection } from '../spark/connection.js';
import { parseRetryAfter } from '../spark/http-answers.js';
import { request } from '../spark/request.js';

const timeSchema = z.iso.datetime({ offset: true });

/** The body as MET sends it, only the fields used; everything else is kept, not refused. */
export const compactResponseSchema = z.looseObject({
  properties: z.looseObject({
    meta: z.looseObject({ updated_at: timeSchema }),
    timeseries: z.array(
      z.looseObject({
        time: timeSchema,
        data: z.looseObject({
          instant: z.looseObject({ details: z.looseObject({ air_temperature: z.number().finite().optional() }) }),
        }),
      }),
    ),
  }),
});

export interface MetnoPlace {
  latitude: number;
  longitude: number;
  /** Height above sea level, whole metres. */
  altitudeM?: number | undefined;
}

export interface MetnoQuery extends MetnoPlace {
  /** The `Last-Modified` of the answer held, sent back unchanged. */
  ifModifiedSince?: string | null;
  signal?: AbortSignal;
}

export interface MetnoForecast {
  points: { startMs: number; tempC: number }[];
  /** `properties.meta.updated_at`: when MET made the forecast. */
  updatedMs: number;
}

export interface MetnoAnswer {
  /** The new forecast; null on 304 (the one held is still current). */
  forecast: MetnoForecast | null;
  /** 203: this version of the product is deprecated (the body is still a forecast). */
  deprecated: boolean;
  lastModified: string | null;
  /** Not to be asked again before this time (`Expires`), null when the header is missing or unreadable. */
  expiresMs: number | null;
}

export interface MetnoClient {
  compact(q: MetnoQuery): Promise<MetnoAnswer>;
  /** Closes the client's keep-alive connections. */
  close(): Promise<void>;
}

/** A coordinate cut (not rounded) to at most 4 decimals, printed without trailing zeros. */
export function truncatedCoordinate(value: number): string {
  // From a 10-decimal print, so binary fractions (10.7522 × 10⁴ = 107521.999…) cannot lose a digit.
  const [whole = '0', fraction = ''] = value.toFixed(10).split('.');
  const kept = fraction.slice(0, 4).replace(/0+$/, '');
  const text = kept === '' ? whole : `${whole}.${kept}`;
  return text === '-0' ? '0' : text;
}

/** The query string of a place, as sent (and as the key of a kept forecast). */
export function placeQuery(place: MetnoPlace): string {
  const params = new URLSearchParams({ lat: truncatedCoordinate(place.latitude), lon: truncatedCoordinate(place.longitude) });
  if (place.altitudeM !== undefined) params.set('altitude', String(Math.round(place.altitudeM)));
  return params.toString();
}

export function toMetnoForecast(body: z.infer<typeof compactResponseSchema>): MetnoForecast {
  const points = body.properties.timeseries.flatMap((t) => {
    const tempC = t.data.instant.details.air_temperature;
    return tempC === undefined ? [] : [{ startMs: Date.parse(t.time), tempC }];
  });
  return { points: points.sort((a, b) => a.startMs - b.startMs), updatedMs: Date.parse(body.properties.meta.updated_at) };
}

const header = (v: string | string[] | undefined): string | null => (Array.isArray(v) ? (v[0] ?? null) : (v ?? null));
const httpDateMs = (v: string | null): number | null => {
  const ms = v === null ? NaN : Date.parse(v);
  return Number.isNaN(ms) ? null : ms;
};

/** The User-Agent MET asks for: product/version and a contact (`AcmeWeatherApp/0.9 github.com/acmeweatherapp`). */
export function metnoUserAgent(version: string, contact: string): string {
  return `wattshift/${version} ${contact}`;
}

export function createMetnoClient(options: {
  url: string;
  /** Email address or URL of whoever runs this gateway; without it nothing is asked (WEATHER_NO_CONTACT). */
  contact: string | undefined;
  version: string;
  timeoutMs: number;
  /** Clock time for a `Retry-After` date (default the wall clock). */
  nowMs?: () => number;
}): MetnoClient {
  // The undici pool the API clients use: connect/headers/body timeouts and a response size limit.
  const connection = createSparkConnection({
    timeoutsMs: { connect: options.timeoutMs, headers: options.timeoutMs, body: options.timeoutMs },
  });
  const nowMs = options.nowMs ?? Date.now;
  return {
    async compact(q) {
      const contact = options.contact?.trim();
      if (!contact)
        throw new WattshiftError('WEATHER_NO_CONTACT', 'MET Norway: no contact for the User-Agent (weather.contact): the forecast is not asked', {
          details: { source: 'metno' },
        });
      const query = placeQuery(q);
      const details = { source: 'metno', query };
      const headers: Record<string, string> = { accept: 'application/json', 'user-agent': metnoUserAgent(options.version, contact) };
      if (q.ifModifiedSince) headers['if-modified-since'] = q.ifModifiedSince;
      const signal = q.signal ? AbortSignal.any([q.signal, AbortSignal.timeout(options.timeoutMs)]) : AbortSignal.timeout(options.timeoutMs);
      let res;
      try {
        res = await request(`${options.url}?${query}`, { signal, headers, dispatcher: connection.dispatcher });
      } catch (err) {
        throw new WattshiftError('API_UNAVAILABLE', `MET Norway: ${err instanceof Error ? err.message : String(err)}`, { cause: err, details });
      }
      const lastModified = header(res.headers['last-modified']);
      const expiresMs = httpDateMs(header(res.headers.expires));
      const status = res.statusCode;
      if (status === 304) {
        await res.body.dump();
        return { forecast: null, deprecated: false, lastModified: lastModified ?? q.ifModifiedSince ?? null, expiresMs };
      }
      if (status !== 200 && status !== 203) {
        await res.body.dump();
        const at = { ...details, status };
        if (status === 403)
          throw new WattshiftError('WEATHER_BLOCKED', 'MET Norway answered 403: blocked, or the User-Agent refused', { details: at });
        if (status === 429 || status >= 500) {
          const retryAfterMs = parseRetryAfter(res.headers['retry-after'], nowMs());
          throw new WattshiftError('API_UNAVAILABLE', `MET Norway answered ${status}`, {
            details: { ...at, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) },
          });
        }
        throw new WattshiftError('API_REJECTED', `MET Norway answered ${status}`, { details: at });
      }
      let body: unknown;
      try {
        body = await res.body.json();
      } catch (err) {
        throw new WattshiftError(
          'API_BAD_RESPONSE',
          `MET Norway: the body is not JSON or too large (${err instanceof Error ? err.message : String(err)})`,
          {
            cause: err,
            details,
          },
        );
      }
      const parsed = compactResponseSchema.safeParse(body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new WattshiftError(
          'API_BAD_RESPONSE',
          `MET Norway: unexpected body (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'no detail'})`,
          {
            details,
          },
        );
      }
      return { forecast: toMetnoForecast(parsed.data), deprecated: status === 203, lastModified, expiresMs };
    },
    close: () => connection.close(),
  };
}
