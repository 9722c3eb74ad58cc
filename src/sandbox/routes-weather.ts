/**
 * MET Norway's Locationforecast 2.0 `compact` as the sandbox serves it
 * (`GET /weatherapi/locationforecast/2.0/compact?lat=…&lon=…[&altitude=…]`), with the seeded outdoor
 * temperatures of `outdoor-model.ts` on the sandbox's clock. It behaves as MET documents its service
 * (api.met.no/doc/locationforecast/HowTO, /doc/StatusCodes, /doc/TermsOfService): a request without
 * a User-Agent is refused (403), coordinates with more than 4 decimals are refused (400; MET blocks
 * them), an answer carries `Last-Modified` (the forecast's run, hourly here) and `Expires` (half an
 * hour ahead), and `If-Modified-Since` naming the current run gets 304 without a body. The series is
 * hourly for 60 hours, then 6-hourly to 9 days ahead, as MET's is. The other variables of `compact`
 * are there with plausible fixed values, so a client sees the whole shape.
 */
import type { IncomingMessage } from 'node:http';
import type { Clock } from '../ports.js';
import { empty, json, type Reply } from './http-kit.js';
import { outdoorTempC, type Place } from './outdoor-model.js';

export const weatherBasePath = '/weatherapi';
export const compactPath = `${weatherBasePath}/locationforecast/2.0/compact`;

const minuteMs = 60_000;
const hourMs = 3_600_000;
const hourlyPoints = 60;
const horizonMs = 9 * 86_400_000;
/** MET's answers expire about half an hour after they are given. */
const freshMs = 30 * minuteMs;

const coordinate = /^-?\d{1,3}(\.\d+)?$/;

/** A coordinate from the query, or the reason it is refused. */
function readCoordinate(raw: string | null, name: string, limit: number): number | string {
  if (raw === null || !coordinate.test(raw)) return `${name} must be a decimal number`;
  if ((raw.split('.')[1] ?? '').length > 4) return `${name} has more than 4 decimals: truncate it (api.met.no/doc/locationforecast/HowTO)`;
  const value = Number(raw);
  return Math.abs(value) > limit ? `${name} must lie within ±${limit}` : value;
}

function readPlace(q: URLSearchParams): Place | string {
  const latitude = readCoordinate(q.get('lat'), 'lat', 90);
  if (typeof latitude === 'string') return latitude;
  const longitude = readCoordinate(q.get('lon'), 'lon', 180);
  if (typeof longitude === 'string') return longitude;
  const altitude = q.get('altitude');
  if (altitude === null) return { latitude, longitude };
  if (!/^-?\d{1,5}$/.test(altitude)) return 'altitude must be a whole number of metres';
  return { latitude, longitude, altitudeM: Number(altitude) };
}

const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');
const round1 = (x: number): number => Math.round(x * 10) / 10;

/** The instants of the series: hourly from the run's hour, then at 00, 06, 12 and 18 UTC. */
function seriesTimes(runMs: number): number[] {
  const times: number[] = [];
  for (let i = 0; i < hourlyPoints; i++) times.push(runMs + i * hourMs);
  let t = Math.ceil((runMs + hourlyPoints * hourMs) / (6 * hourMs)) * 6 * hourMs;
  for (; t <= runMs + horizonMs; t += 6 * hourMs) times.push(t);
  return times;
}

function body(seed: number, place: Place, runMs: number): unknown {
  const times = seriesTimes(runMs);
  const timeseries = times.map((t, i) => {
    const hourly = i < hourlyPoints;
    const summary = { summary: { symbol_code: 'cloudy' } };
    return {
      time: iso(t),
      data: {
        instant: {
          details: {
            air_pressure_at_sea_level: 1013.2,
            air_temperature: round1(outdoorTempC(seed, place, t)),
            cloud_area_fraction: 75.0,
            relative_humidity: 82.0,
            wind_from_direction: 210.0,
            wind_speed: 3.4,
          },
        },
        ...(hourly ? { next_1_hours: { ...summary, details: { precipitation_amount: 0.0 } } } : {}),
        ...(t + 6 * hourMs <= runMs + horizonMs ? { next_6_hours: { ...summary, details: { precipitation_amount: 0.0 } } } : {}),
        ...(t + 12 * hourMs <= runMs + horizonMs ? { next_12_hours: summary } : {}),
      },
    };
  });
  return {
    type: 'Feature',
    geometry: { type: 'Point', coordinates: [place.longitude, place.latitude, place.altitudeM ?? 0] },
    properties: {
      meta: {
        updated_at: iso(runMs),
        units: {
          air_pressure_at_sea_level: 'hPa',
          air_temperature: 'celsius',
          cloud_area_fraction: '%',
          precipitation_amount: 'mm',
          relative_humidity: '%',
          wind_from_direction: 'degrees',
          wind_speed: 'm/s',
        },
      },
      timeseries,
    },
  };
}

/** The answer to a request under {@link weatherBasePath}. */
export function weatherReply(req: IncomingMessage, method: string, url: URL, clock: Clock, seed: number): Reply {
  if (url.pathname !== compactPath) return json(404, `No such product: ${url.pathname}`);
  if (method !== 'GET') return { ...empty(405), headers: { allow: 'GET' } };
  const agent = req.headers['user-agent'];
  if (agent === undefined || agent.trim() === '') return json(403, 'Identify yourself in the User-Agent header (api.met.no/doc/TermsOfService)');
  const place = readPlace(url.searchParams);
  if (typeof place === 'string') return json(400, place);
  const now = clock.nowMs();
  // A new model run every hour; the answer stays current for half an hour.
  const runMs = Math.floor(now / hourMs) * hourMs;
  const headers = { 'last-modified': new Date(runMs).toUTCString(), expires: new Date(now + freshMs).toUTCString() };
  const since = Date.parse(String(req.headers['if-modified-since'] ?? ''));
  if (!Number.isNaN(since) && since >= runMs) return { ...empty(304), headers };
  return { ...json(200, body(seed, place, runMs)), headers };
}
