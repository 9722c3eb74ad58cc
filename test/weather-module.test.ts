/**
 * The daemon's weather module from a config: asks the forecast for `spark.coordinates` where it
 * should and provides it; asks nothing (and says why) without coordinates, when switched off or
 * without a contact for MET's User-Agent; failing health only where the forecast was asked for.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAppContext } from '../src/app/context.js';
import { weatherModule } from '../src/app/weather.js';
import { ManualClock } from '../src/clock.js';
import { parseConfig } from '../src/config/load.js';
import { weatherSchema } from '../src/config/schema-weather.js';
import { createLogger } from '../src/log.js';
import { startSandbox, type Sandbox } from '../src/sandbox/server.js';
import { openStore } from '../src/store/open-store.js';
import { withoutMqtt } from './helpers/config-document.js';
import { until } from './helpers/until.js';

const t0 = Date.UTC(2026, 0, 15, 12, 5);
const coordinates = { latitude: 59.9139, longitude: 10.7522 };
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function started(doc: Record<string, unknown>, sandbox?: Sandbox) {
  const clock = new ManualClock(t0);
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });
  const { config } = parseConfig({ ...withoutMqtt, spark: { clientId: 'c', clientSecret: 'client-secret-inline' }, ...doc });
  const ctx = createAppContext(config, { logger, clock: sandbox?.clock ?? clock });
  const store = openStore({ path: ':memory:', clock });
  closers.push(() => store.close());
  const part = weatherModule(ctx, { store });
  const weather = await part.start();
  closers.push(() => part.stop());
  return { weather, health: () => part.health?.() ?? [], lines };
}

describe('the weather module', () => {
  it('provides the forecast for the coordinates, asked with the contact', async () => {
    const sandbox = await startSandbox({ clock: new ManualClock(t0), autoTick: false });
    closers.push(() => sandbox.close());
    const asked: number[] = [];
    sandbox.onResponse((r) => {
      if (r.service === 'weather') asked.push(r.status);
    });
    const { weather, health } = await started(
      {
        spark: { clientId: 'c', clientSecret: 'client-secret-inline', coordinates },
        weather: { url: sandbox.weatherUrl, contact: 'https://example.org/heating' },
      },
      sandbox,
    );
    await until(() => weather.outdoorForecast().source === 'metno', 'the forecast arrived');
    expect(asked).toEqual([200]);
    expect(health()).toEqual([{ name: 'weather', ok: true }]);
  });

  it('asks nothing without coordinates or when switched off, and provides no forecast', async () => {
    for (const doc of [
      {},
      { spark: { clientId: 'c', clientSecret: 'client-secret-inline', coordinates }, weather: { enabled: false, contact: 'a@b.org' } },
    ]) {
      const { weather, health, lines } = await started(doc);
      expect(weather.outdoorForecast()).toEqual({ source: 'none', points: [], updatedMs: null });
      expect(health()).toEqual([]);
      expect(lines.filter((l) => l.part === 'weather')).toEqual([]);
    }
  });

  it('without a contact: a hint for a home that only has coordinates, a warning and failing health where it was switched on', async () => {
    const home = { spark: { clientId: 'c', clientSecret: 'client-secret-inline', coordinates } };
    const quiet = await started(home);
    expect(quiet.weather.outdoorForecast().source).toBe('none');
    expect(quiet.health()).toEqual([]);
    expect(quiet.lines.filter((l) => l.code === 'WEATHER_NO_CONTACT').map((l) => l.level)).toEqual(['info']);

    const asked = await started({ ...home, weather: { enabled: true } });
    expect(asked.health()).toMatchObject([{ name: 'weather', ok: false, lastError: { code: 'WEATHER_NO_CONTACT' } }]);
    expect(asked.lines.filter((l) => l.code === 'WEATHER_NO_CONTACT').map((l) => l.level)).toEqual(['warn']);
  });

  it('takes an email address or a URL as the contact, nothing else', () => {
    expect(weatherSchema.safeParse({ contact: 'me' }).error?.issues.map((i) => i.path)).toEqual([['contact']]);
    expect(weatherSchema.safeParse({ contact: ' heating@example.org ' }).data?.contact).toBe('heating@example.org');
    expect(weatherSchema.safeParse({ contact: 'https://example.org/contact' }).success).toBe(true);
  });
});
