import { hashUnit } from './spot-prices.js';

/**
 * A seeded Nordic outdoor air temperature, the sandbox's weather (its MET Norway forecast route)
 * and the room simulator's outdoors. A temperature depends only on (seed, place, instant), never on
 * the order of calls, so the forecast the daemon reads and the room the simulator cools agree.
 *
 * - Seasonal mean: the 1961–1990 monthly normals of Oslo–Blindern, 59.9° N (MET Norway: January
 *   −4.3 °C, July 16.4 °C, December −3.1 °C, the year 5.7 °C), interpolated between mid-months;
 *   away from 59.9° N shifted by −0.6 K per degree of latitude northwards (a rough Scandinavian
 *   gradient: Trondheim and Luleå run 1–4 K colder a year than Oslo), and by the standard
 *   atmosphere's −6.5 K per km of altitude.
 * - Diurnal swing: coldest about 05:00 and warmest about 15:00 local solar time, a half-range of
 *   1.5 K in midwinter (little sun) to 4 K in midsummer.
 * - Weather: two smooth random walks, one with a knot per day and one with a knot every 4 days,
 *   together about ±5 K in winter (cold spells and mild spells) and ±3 K in summer.
 */

const hourMs = 3_600_000;
const dayMs = 86_400_000;
/** Oslo–Blindern 1961–1990, °C, January to December. */
const osloNormalsC = [-4.3, -4.0, -0.2, 4.5, 10.8, 15.2, 16.4, 15.2, 10.8, 6.3, 0.7, -3.1];
const osloLatitude = 59.9;
const kPerDegreeNorth = -0.6;
const kPerMetre = -0.0065;

export interface Place {
  latitude: number;
  longitude: number;
  /** Height above sea level, m (default 0). */
  altitudeM?: number | undefined;
}

/** Day of the year as a fraction, 0 at 1 January 00:00 UTC. */
function dayOfYear(ms: number): number {
  const d = new Date(ms);
  return (ms - Date.UTC(d.getUTCFullYear(), 0, 1)) / dayMs;
}

/** The seasonal normal at an instant at Oslo, interpolated linearly between the months' middles. */
function osloNormalC(ms: number): number {
  const month = (dayOfYear(ms) / 365.25) * 12 - 0.5;
  const i = Math.floor(month);
  const share = month - i;
  const a = osloNormalsC[(i + 12) % 12]!;
  const b = osloNormalsC[(i + 13) % 12]!;
  return a + share * (b - a);
}

/** 1 in midsummer (late June), 0 in midwinter. */
function summerShare(ms: number): number {
  return 0.5 - 0.5 * Math.cos(((dayOfYear(ms) - 10) / 365.25) * 2 * Math.PI);
}

/** A smooth random walk through knots every `spacingMs`, each uniform in [−1, 1], cosine-interpolated. */
function smoothNoise(seed: number, name: string, ms: number, spacingMs: number): number {
  const k = Math.floor(ms / spacingMs);
  const share = (ms - k * spacingMs) / spacingMs;
  const a = 2 * hashUnit(seed, name, k) - 1;
  const b = 2 * hashUnit(seed, name, k + 1) - 1;
  const w = (1 - Math.cos(share * Math.PI)) / 2;
  return a + w * (b - a);
}

/** The seasonal mean of a place without the day's swing or the weather, °C. */
export function seasonalMeanC(place: Place, ms: number): number {
  return osloNormalC(ms) + kPerDegreeNorth * (place.latitude - osloLatitude) + kPerMetre * (place.altitudeM ?? 0);
}

/** The outdoor air temperature at a place and instant, °C. */
export function outdoorTempC(seed: number, place: Place, ms: number): number {
  const summer = summerShare(ms);
  const solarHour = (((ms / hourMs + place.longitude / 15) % 24) + 24) % 24;
  // Coldest near 05:00, warmest near 15:00 solar time (a 24-hour cosine peaking at 15:00; its trough falls at 03:00, close enough).
  const swing = (1.5 + 2.5 * summer) * Math.cos(((solarHour - 15) / 24) * 2 * Math.PI);
  const weatherK = (5 - 2 * summer) * (0.6 * smoothNoise(seed, 'weather-day', ms, dayMs) + 0.4 * smoothNoise(seed, 'weather-spell', ms, 4 * dayMs));
  return seasonalMeanC(place, ms) + swing + weatherK;
}
