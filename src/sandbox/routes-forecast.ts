import { forecastAdviceRequestSchema } from '../spark/wire.js';
import type { SandboxEngine } from './engine.js';
import { badRequest, defineRoute, json, ReplyError, type Route } from './http-kit.js';
import { areaTimeZone, convertPrice, isPriceArea, spotEurPerMwh, type CurrencyCode, type PriceAreaCode } from './spot-prices.js';
import { hoursOfLocalDay, isoUtc, localDayStartMs, localParts } from '../core/zoned-time.js';

/**
 * The forecast price service (`/smart/v1`): a 7-day forecast in segments of `segmentSize` hours
 * (default 6; any divisor of 24), the advice variant (Good / Normal / Avoid with `loss`), and
 * actual spot prices. Segments follow the area's local day; on DST days the segment holding
 * the change is an hour shorter or longer. `to` is the start of the segment's last hour, as in
 * the service's documented example (22:00 → 03:00 for a 6-hour segment).
 */

interface Units {
  currency: CurrencyCode;
  energyUnit: 'kWh' | 'MWh';
  vatRate: number | null;
}

interface Segment {
  fromMs: number;
  lastHourMs: number;
  dayStartMs: number;
  averagePrice: number;
}

const horizonDays = 7;

function area(raw: string | undefined): PriceAreaCode {
  const a = (raw ?? '').toUpperCase();
  if (!isPriceArea(a)) throw new ReplyError(badRequest('problem', `Unknown price area '${raw ?? ''}'`, 'priceArea'));
  return a;
}

function segmentSize(raw: unknown): number {
  const n = raw === undefined || raw === null || raw === '' ? 6 : Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 24 || 24 % n !== 0)
    throw new ReplyError(
      badRequest('problem', 'segmentSize must be a whole number of hours that divides 24 (1, 2, 3, 4, 6, 8, 12 or 24)', 'segmentSize'),
    );
  return n;
}

function unitsView(u: Units): Record<string, unknown> {
  return { currency: u.currency, vat: { rate: u.vatRate ?? 1, hasVAT: u.vatRate !== null && u.vatRate !== 1 }, energyUnit: u.energyUnit };
}

function segments(engine: SandboxEngine, priceArea: PriceAreaCode, size: number, units: Units): Segment[] {
  const zone = areaTimeZone(priceArea);
  const now = engine.clock.nowMs();
  const out: Segment[] = [];
  for (let d = 0; d <= horizonDays; d++) {
    const dayStart = localDayStartMs(now, zone, d);
    const groups = new Map<number, number[]>();
    for (const h of hoursOfLocalDay(dayStart, zone)) {
      const key = Math.floor(localParts(h, zone).hour / size);
      groups.set(key, [...(groups.get(key) ?? []), h]);
    }
    for (const hours of groups.values()) {
      const first = hours[0];
      const last = hours[hours.length - 1];
      if (first === undefined || last === undefined || last + 3_600_000 <= now) continue;
      if (d === horizonDays && first >= now + horizonDays * 86_400_000) continue;
      const mean =
        hours.reduce(
          (s, h) => s + convertPrice(spotEurPerMwh(engine.options.seed, priceArea, h), units.currency, units.energyUnit, units.vatRate ?? 1),
          0,
        ) / hours.length;
      out.push({ fromMs: first, lastHourMs: last, dayStartMs: dayStart, averagePrice: Math.round(mean * 100_000) / 100_000 });
    }
  }
  return out;
}

function queryUnits(q: URLSearchParams): Units {
  const currency = (q.get('Currency') ?? q.get('currency') ?? 'EUR').toUpperCase();
  const unit = q.get('EnergyUnit') ?? q.get('energyUnit') ?? 'kWh';
  const vat = q.get('VATRate') ?? q.get('vatRate');
  if (!['EUR', 'NOK', 'SEK', 'DKK'].includes(currency)) throw new ReplyError(badRequest('problem', `Unknown currency '${currency}'`, 'Currency'));
  if (!['kwh', 'mwh'].includes(unit.toLowerCase())) throw new ReplyError(badRequest('problem', `Unknown energy unit '${unit}'`, 'EnergyUnit'));
  const vatRate = vat === null || vat === '' ? null : Number(vat);
  if (vatRate !== null && (!Number.isFinite(vatRate) || vatRate < 0))
    throw new ReplyError(badRequest('problem', 'VATRate must be a non-negative number', 'VATRate'));
  return { currency: currency as CurrencyCode, energyUnit: unit.toLowerCase() === 'mwh' ? 'MWh' : 'kWh', vatRate };
}

export function forecastRoutes(engine: SandboxEngine): Route[] {
  return [
    defineRoute({
      method: 'GET',
      pattern: '/prices/forecast/{priceArea}',
      errors: 'problem',
      handler: (ctx) => {
        const a = area(ctx.params.priceArea);
        const size = segmentSize(ctx.query.get('segmentSize') ?? ctx.query.get('SegmentSize'));
        const units = queryUnits(ctx.query);
        const segs = segments(engine, a, size, units);
        return json(200, {
          priceArea: a,
          priceUnits: unitsView(units),
          segmentOptions: { segmentSize: size },
          forecastSegments: segs.map((s) => ({ from: isoUtc(s.fromMs), to: isoUtc(s.lastHourMs), averagePrice: s.averagePrice })),
        });
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/prices/forecast/{priceArea}/advice',
      errors: 'problem',
      body: forecastAdviceRequestSchema,
      handler: (ctx) => {
        const a = area(ctx.params.priceArea);
        const size = segmentSize(ctx.body.segmentOptionsParameters.segmentSize);
        const pu = ctx.body.priceUnitsParameters;
        const units: Units = { currency: pu.currency, energyUnit: pu.energyUnit === 'MWh' ? 'MWh' : 'kWh', vatRate: pu.vatRate ?? null };
        const segs = segments(engine, a, size, units);
        const mean = segs.reduce((s, x) => s + x.averagePrice, 0) / Math.max(1, segs.length);
        const sd = Math.sqrt(segs.reduce((s, x) => s + (x.averagePrice - mean) ** 2, 0) / Math.max(1, segs.length));
        const firstOfDay = new Map<number, number>();
        for (const s of segs) if (!firstOfDay.has(s.dayStartMs)) firstOfDay.set(s.dayStartMs, s.averagePrice);
        return json(200, {
          priceArea: a,
          priceUnits: unitsView(units),
          segmentOptions: { segmentSize: size },
          forecastAdvice: segs.map((s) => ({
            from: isoUtc(s.fromMs),
            to: isoUtc(s.lastHourMs),
            averagePrice: s.averagePrice,
            loss: Math.round((s.averagePrice - (firstOfDay.get(s.dayStartMs) ?? s.averagePrice)) * 100_000) / 100_000,
            type: s.averagePrice <= mean - 0.5 * sd ? 'Good' : s.averagePrice >= mean + 0.5 * sd ? 'Avoid' : 'Normal',
          })),
        });
      },
    }),
    defineRoute({
      // Actual spot prices: today, plus tomorrow once the day-ahead auction is published (13:00).
      method: 'GET',
      pattern: '/prices/actual/{priceArea}',
      errors: 'problem',
      handler: (ctx) => {
        const a = area(ctx.params.priceArea);
        const units = queryUnits(ctx.query);
        const zone = areaTimeZone(a);
        const now = engine.clock.nowMs();
        const days = localParts(now, zone).hour >= 13 ? 2 : 1;
        const prices: Record<string, number> = {};
        for (let d = 0; d < days; d++) {
          for (const h of hoursOfLocalDay(localDayStartMs(now, zone, d), zone)) {
            prices[isoUtc(h)] =
              Math.round(convertPrice(spotEurPerMwh(engine.options.seed, a, h), units.currency, units.energyUnit, units.vatRate ?? 1) * 100_000) /
              100_000;
          }
        }
        return json(200, { priceArea: a, priceUnits: unitsView(units), prices });
      },
    }),
  ];
}
