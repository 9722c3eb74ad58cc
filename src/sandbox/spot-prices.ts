import { HOUR_MS, localDateString, localParts } from '../core/zoned-time.js';

/**
 * Deterministic synthetic day-ahead spot prices, shaped like real Nordic prices. The hourly
 * profiles are the mean price per local hour divided by the period mean, measured on the real
 * extracts in `data/prices/` (DK2 Oct–Nov 2024 for the cold season: morning and evening peaks;
 * SE3 Aug 2024 for summer: a deep solar dip around 13:00). Levels are typical 2024 area means.
 * A price depends only on (seed, area, hour), never on the order of calls.
 */

export const priceAreas = ['NO1', 'NO2', 'NO3', 'NO4', 'NO5', 'SE1', 'SE2', 'SE3', 'SE4', 'FI', 'DK1', 'DK2'] as const;
export type PriceAreaCode = (typeof priceAreas)[number];

export function isPriceArea(s: string): s is PriceAreaCode {
  return (priceAreas as readonly string[]).includes(s);
}

const coldProfile = [
  0.81, 0.79, 0.77, 0.74, 0.73, 0.77, 0.93, 1.21, 1.24, 1.0, 0.84, 0.75, 0.68, 0.68, 0.74, 0.94, 1.21, 1.71, 1.86, 1.63, 1.17, 1.0, 0.95, 0.85,
];
const summerProfile = [
  0.76, 0.68, 0.64, 0.65, 0.69, 0.82, 1.01, 1.43, 1.67, 1.64, 1.38, 1.01, 0.63, 0.21, 0.34, 0.62, 1.13, 1.4, 1.57, 1.48, 1.31, 1.17, 1.03, 0.73,
];

/** Typical mean price, EUR/MWh. */
const areaLevel: Record<PriceAreaCode, number> = {
  NO1: 45,
  NO2: 55,
  NO3: 30,
  NO4: 20,
  NO5: 42,
  SE1: 25,
  SE2: 27,
  SE3: 40,
  SE4: 60,
  FI: 45,
  DK1: 75,
  DK2: 80,
};

/** Local time zone of each price area (for hour-of-day shapes and forecast segments). */
export function areaTimeZone(area: PriceAreaCode): string {
  if (area === 'FI') return 'Europe/Helsinki';
  if (area.startsWith('SE')) return 'Europe/Stockholm';
  if (area.startsWith('DK')) return 'Europe/Copenhagen';
  return 'Europe/Oslo';
}

/** The local currency of a price area. */
export function areaCurrency(area: PriceAreaCode): 'NOK' | 'SEK' | 'DKK' | 'EUR' {
  if (area.startsWith('NO')) return 'NOK';
  if (area.startsWith('SE')) return 'SEK';
  if (area.startsWith('DK')) return 'DKK';
  return 'EUR';
}

/** Fixed exchange rates used by the sandbox (units of currency per EUR). */
export const eurRates = { EUR: 1, NOK: 11.7, SEK: 11.4, DKK: 7.46 } as const;
export type CurrencyCode = keyof typeof eurRates;

/** FNV-1a over a string, then a splitmix-style finaliser: a uniform number in [0, 1). */
export function hashUnit(...parts: (string | number)[]): number {
  let h = 0x811c9dc5;
  const s = parts.join('|');
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 4_294_967_296;
}

/** Summer weight in [0, 1]: 1 in late June, 0 in late December. */
function summerWeight(month: number, day: number): number {
  const dayOfYear = (month - 1) * 30.4 + day;
  return 0.5 + 0.5 * Math.cos(((dayOfYear - 172) / 365) * 2 * Math.PI);
}

/** Spot price in EUR/MWh (excl. VAT) for the hour starting at `hourStartMs` (UTC, on the hour). */
export function spotEurPerMwh(seed: number, area: PriceAreaCode, hourStartMs: number): number {
  const zone = areaTimeZone(area);
  const p = localParts(hourStartMs, zone);
  const date = localDateString(hourStartMs, zone);
  const w = summerWeight(p.month, p.day);
  const shape = (summerProfile[p.hour] ?? 1) * w + (coldProfile[p.hour] ?? 1) * (1 - w);
  // Day level: a slow weather cycle plus day-to-day noise; cold months are dearer.
  const dayIndex = Math.floor(hourStartMs / 86_400_000);
  const cycle = Math.sin((dayIndex / 9) * 2 * Math.PI + hashUnit(seed, area, 'phase') * 6.283);
  const dayLevel = areaLevel[area] * (1.25 - 0.5 * w) * (0.85 + 0.3 * cycle * 0.5 + 0.4 * (hashUnit(seed, area, date) - 0.5));
  let price = dayLevel * shape * (0.94 + 0.12 * hashUnit(seed, area, hourStartMs));
  // Sunny, windy days: a midday dip that goes negative, as in the real summer data.
  if (w > 0.4 && hashUnit(seed, area, date, 'solar') < 0.3) {
    const distance = Math.abs(p.hour - 13);
    if (distance <= 3) price -= dayLevel * (1.2 - 0.3 * distance) * w;
  }
  return Math.round(price * 100) / 100;
}

/** Hourly spot prices for every hour in [fromMs, toMs). */
export function spotSeries(seed: number, area: PriceAreaCode, fromMs: number, toMs: number): { startMs: number; eurPerMwh: number }[] {
  const out: { startMs: number; eurPerMwh: number }[] = [];
  for (let t = Math.floor(fromMs / HOUR_MS) * HOUR_MS; t < toMs; t += HOUR_MS) {
    out.push({ startMs: t, eurPerMwh: spotEurPerMwh(seed, area, t) });
  }
  return out;
}

/** Converts EUR/MWh to the requested currency and energy unit, with an optional VAT multiplier. */
export function convertPrice(eurPerMwh: number, currency: CurrencyCode, energyUnit: 'kWh' | 'MWh', vatRate = 1): number {
  const perUnit = energyUnit === 'kWh' ? eurPerMwh / 1000 : eurPerMwh;
  return perUnit * eurRates[currency] * vatRate;
}
