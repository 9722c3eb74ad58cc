/**
 * The outdoor temperature forecast: MET Norway's Locationforecast 2.0 (`compact`) for the home's
 * coordinates (`spark.coordinates`), asked as MET's terms of service require (an identifying
 * User-Agent with a contact, no request before the answer's `Expires`).
 */
import { z } from 'zod';

export const metnoCompactUrl = 'https://api.met.no/weatherapi/locationforecast/2.0/compact';

export const weatherSchema = z.strictObject({
  enabled: z
    .boolean()
    .optional()
    .describe('Fetch the outdoor temperature forecast. Default: on when `spark.coordinates` is set (the forecast is for that place).'),
  url: z
    .url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' })
    .default(metnoCompactUrl)
    .describe("Locationforecast's `compact` endpoint (`?lat=…&lon=…[&altitude=…]` is added)."),
  contact: z
    .string()
    .trim()
    .regex(/^(\S+@\S+\.\S+|https?:\/\/\S+)$/, 'expected an email address or an http(s) URL')
    .optional()
    .describe(
      'An email address or URL where MET Norway can reach whoever runs this gateway, sent in the User-Agent as their terms of service require; without it the forecast is not asked (`WEATHER_NO_CONTACT`).',
    ),
  altitudeM: z
    .number()
    .int('whole metres')
    .min(-500)
    .max(9000)
    .optional()
    .describe("The home's height above sea level, m (sharpens MET's temperature; without it MET uses its terrain model)."),
  timeoutMs: z.number().int().min(100).max(120_000).default(10_000).describe('Timeout of one request, ms.'),
});
export type WeatherConfig = z.infer<typeof weatherSchema>;

/** Whether the forecast is fetched: `weather.enabled`, else whether the home has coordinates. */
export function weatherWanted(weather: WeatherConfig, coordinates: { latitude: number; longitude: number } | undefined): boolean {
  return (weather.enabled ?? coordinates !== undefined) && coordinates !== undefined;
}
