/**
 * Client of the forecast price service (`…/smart/v1`): the 7-day spot price forecast by area
 * in segments, its advice variant (`Good` / `Normal` / `Avoid` per segment) and actual spot
 * prices. Same auth, retries and error codes as the Energy Coordination client.
 */
import { createHttpTransport } from './http.js';
import { checkRequest, resolveTokens, type CallOptions, type SparkAuthOptions } from './client.js';
import type { ClientCredentialsTokenSource } from './oauth.js';
import * as w from './wire.js';

export interface ForecastClientOptions extends SparkAuthOptions {
  /** E.g. `https://api.voluespark.com/smart/v1`. */
  forecastUrl: string;
}

/** Price unit options shared by all three calls. */
export interface PriceUnitQuery extends CallOptions {
  /** Price area code, e.g. `NO1`, `SE3`, `FI`. */
  area: string;
  /** Currency of the returned prices (service default when absent; `EUR` for advice). */
  currency?: w.Currency;
  /** VAT rate to include, as the service expects it (e.g. `0.25`); none when absent. */
  vat?: number;
  /** `kWh` or `MWh` (service default when absent; `kWh` for advice). */
  energyUnit?: w.EnergyUnit;
}

export interface ForecastQuery extends PriceUnitQuery {
  /** Segment length in hours; must divide 24. Service default 6. */
  segmentSize?: number;
}

export interface ActualPricesQuery extends PriceUnitQuery {
  /** IANA time zone of the returned timestamps (service default `Europe/Amsterdam`). */
  timeZone?: string;
}

export interface ForecastClient {
  readonly tokens: ClientCredentialsTokenSource;
  /** `GET /prices/forecast/{area}?segmentSize=&Currency=&EnergyUnit=&VATRate=`: 7 days ahead. */
  forecast(query: ForecastQuery): Promise<w.ForecastResponse>;
  /** `POST /prices/forecast/{area}/advice`: the forecast with a label per segment. */
  advice(query: ForecastQuery): Promise<w.ForecastAdviceResponse>;
  /** `GET /prices/actual/{area}?Currency=&EnergyUnit=&VATRate=&TimeZone=`: known spot prices. */
  actualPrices(query: ActualPricesQuery): Promise<w.ActualPricesResponse>;
  close(): Promise<void>;
}

/** Creates a forecast price service client. */
export function createForecastClient(options: ForecastClientOptions): ForecastClient {
  const { tokens, owned } = resolveTokens(options);
  const http = createHttpTransport({ ...options, baseUrl: options.forecastUrl, tokens, userAgent: 'wattshift' });
  const areaPath = (area: string): string => `/prices/forecast/${encodeURIComponent(area)}`;

  return {
    tokens,
    forecast: (q) =>
      http.sendJson(
        {
          method: 'GET',
          path: areaPath(q.area),
          operation: 'forecast',
          query: { segmentSize: q.segmentSize, Currency: q.currency, EnergyUnit: q.energyUnit, VATRate: q.vat },
          signal: q.signal,
        },
        w.forecastResponseSchema,
      ),
    advice: (q) => {
      const body = checkRequest(
        w.forecastAdviceRequestSchema,
        {
          priceUnitsParameters: { currency: q.currency ?? 'EUR', energyUnit: q.energyUnit ?? 'kWh', vatRate: q.vat ?? null },
          segmentOptionsParameters: { segmentSize: q.segmentSize ?? 6 },
        },
        'forecastAdvice',
      );
      // A pure query sent as POST: safe to repeat.
      return http.sendJson(
        { method: 'POST', path: `${areaPath(q.area)}/advice`, operation: 'forecastAdvice', json: body, idempotent: true, signal: q.signal },
        w.forecastAdviceResponseSchema,
      );
    },
    actualPrices: (q) =>
      http.sendJson(
        {
          method: 'GET',
          path: `/prices/actual/${encodeURIComponent(q.area)}`,
          operation: 'actualPrices',
          query: { Currency: q.currency, EnergyUnit: q.energyUnit, VATRate: q.vat, TimeZone: q.timeZone },
          signal: q.signal,
        },
        w.actualPricesResponseSchema,
      ),
    async close() {
      await http.close();
      if (owned) await tokens.close();
    },
  };
}
