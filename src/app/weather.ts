/**
 * The outdoor temperature forecast for heated zones: MET Norway's Locationforecast for the home's
 * coordinates, refreshed on its `Expires` schedule (src/weather/). Without coordinates, with
 * `weather.enabled: false` or without a contact for MET's User-Agent it asks nothing, and the
 * forecast is `none` (the planner then holds a documented constant, core/outdoor.ts).
 */
import { providing, type Part } from '../lifecycle.js';
import type { OutdoorForecast } from '../core/types.js';
import type { Store } from '../store/types.js';
import { weatherWanted } from '../config/schema-weather.js';
import { createMetnoClient } from '../weather/metno-client.js';
import { startWeatherRefresh, type WeatherHealth } from '../weather/forecast-refresh.js';
import { packageVersion } from '../package-root.js';
import { jobHealth, type AppContext } from './context.js';

export interface Weather {
  /** The last good outdoor forecast, or `none` when there is none (see core/outdoor.ts for its use per slot). */
  outdoorForecast(): OutdoorForecast;
}

const nothing: OutdoorForecast = { source: 'none', points: [], updatedMs: null };

export function weatherModule(ctx: AppContext, needs: { store: Store }): Part<Weather> {
  const { config, deps, clock, log } = ctx;
  const w = config.weather;
  const coordinates = config.spark.coordinates;
  let health: (() => WeatherHealth) | undefined;
  return providing(
    'weather',
    () => {
      if (!coordinates && w.enabled === true)
        log.warn({ code: 'CONFIG_INVALID', part: 'weather' }, 'weather.enabled is set but spark.coordinates is not: no outdoor forecast');
      if (!coordinates || !weatherWanted(w, coordinates)) return { made: null, provides: { outdoorForecast: () => nothing } };
      if (!w.contact) {
        const message = "MET Norway's forecast is not asked without weather.contact (its terms of service want a contact in the User-Agent)";
        // A warning and failing health only where the forecast was asked for: a home that only has
        // coordinates (from before the weather section) is told once, not made unhealthy.
        log[w.enabled === true ? 'warn' : 'info']({ code: 'WEATHER_NO_CONTACT', part: 'weather' }, message);
        if (w.enabled === true) {
          const lastError = { code: 'WEATHER_NO_CONTACT', message, atMs: clock.nowMs() };
          health = () => ({ ok: false, lastError });
        }
        return { made: null, provides: { outdoorForecast: () => nothing } };
      }
      const client = createMetnoClient({
        url: w.url,
        contact: w.contact,
        version: packageVersion(),
        timeoutMs: w.timeoutMs,
        nowMs: () => clock.nowMs(),
      });
      const refresh = startWeatherRefresh({
        client,
        place: { latitude: coordinates.latitude, longitude: coordinates.longitude, altitudeM: w.altitudeM },
        clock,
        logger: deps.logger,
        store: needs.store,
        guardStore: (write) => ctx.storeHealth.guard('weather', write),
      });
      health = () => refresh.health();
      const made = {
        stop: async () => {
          await refresh.stop();
          await client.close();
        },
      };
      return { made, provides: { outdoorForecast: () => refresh.forecast() } };
    },
    () => (health ? [jobHealth('weather', health())] : []),
  );
}
