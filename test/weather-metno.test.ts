/**
 * The outdoor forecast client and its refresh against the sandbox's Locationforecast over real
 * HTTP, with the store on disk: the User-Agent and the 4-decimal coordinates MET asks for, the
 * 304 for an unchanged forecast, no request before `Expires` (also across a restart), the last
 * forecast kept and held beyond its end while the service is down; and, from a plain local server
 * replaying a sandbox body, 203 said once, backoff on 503 and no request after a 403.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { outdoorTempsForSlots } from '../src/core/outdoor.js';
import { isWattshiftError } from '../src/errors.js';
import { createLogger, silentLogger } from '../src/log.js';
import { startSandbox, type ResponseRecord, type Sandbox } from '../src/sandbox/server.js';
import { openStore } from '../src/store/open-store.js';
import type { Store } from '../src/store/types.js';
import { createMetnoClient, truncatedCoordinate, type MetnoClient } from '../src/weather/metno-client.js';
import { startWeatherRefresh, type WeatherRefresh } from '../src/weather/forecast-refresh.js';
import { tempDir } from './helpers/temp-dir.js';
import { until } from './helpers/until.js';

const minuteMs = 60_000;
const hourMs = 3_600_000;
const t0 = Date.UTC(2026, 0, 15, 12, 5);
const oslo = { latitude: 59.913912, longitude: 10.752245, altitudeM: 23 };
const contact = 'heating@example.org';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function sandboxAt(clock: ManualClock): Promise<{ sandbox: Sandbox; asked: ResponseRecord[] }> {
  const sandbox = await startSandbox({ clock, autoTick: false, seed: 7 });
  const asked: ResponseRecord[] = [];
  sandbox.onResponse((r) => {
    if (r.service === 'weather') asked.push(r);
  });
  closers.push(() => sandbox.close());
  return { sandbox, asked };
}

function client(url: string, clock: ManualClock, who: string | undefined = contact): MetnoClient {
  const c = createMetnoClient({ url, contact: who, version: '9.9.9', timeoutMs: 5000, nowMs: () => clock.nowMs() });
  closers.push(() => c.close());
  return c;
}

function storeAt(path: string, clock: ManualClock): Store {
  const s = openStore({ path, clock });
  closers.push(() => s.close());
  return s;
}

function refresh(
  deps: Omit<Parameters<typeof startWeatherRefresh>[0], 'logger' | 'random'> & { logger?: Parameters<typeof startWeatherRefresh>[0]['logger'] },
): WeatherRefresh {
  const r = startWeatherRefresh({ logger: silentLogger(), random: () => 0.5, ...deps });
  closers.push(() => r.stop());
  return r;
}

describe('the MET Norway client against the sandbox', () => {
  it('identifies itself, truncates the coordinates, reads the compact body and answers 304 for the same forecast', async () => {
    const clock = new ManualClock(t0);
    const { sandbox, asked } = await sandboxAt(clock);
    const seenAgents: string[] = [];
    const metno = client(sandbox.weatherUrl, clock);
    const first = await metno.compact(oslo);
    expect(asked.map((r) => r.status)).toEqual([200]);
    const points = first.forecast!.points;
    expect(points[0]!.startMs).toBe(Date.UTC(2026, 0, 15, 12));
    expect(points[1]!.startMs - points[0]!.startMs).toBe(hourMs);
    expect(points.at(-1)!.startMs - points[0]!.startMs).toBeGreaterThan(8 * 24 * hourMs);
    expect(points.every((p) => p.tempC > -40 && p.tempC < 15)).toBe(true);
    expect(first.forecast!.updatedMs).toBe(Date.UTC(2026, 0, 15, 12));
    expect(first.expiresMs).toBe(Math.floor((t0 + 30 * minuteMs) / 1000) * 1000);
    expect(first.lastModified).toBe(new Date(Date.UTC(2026, 0, 15, 12)).toUTCString());

    const again = await metno.compact({ ...oslo, ifModifiedSince: first.lastModified });
    expect(again.forecast).toBeNull();
    expect(asked.map((r) => r.status)).toEqual([200, 304]);
    expect(asked[1]!.body).toBe('');

    // What went over the wire, seen by a listener of our own.
    const echo = createServer((req, res) => {
      seenAgents.push(`${req.headers['user-agent']} ${req.url}`);
      res.writeHead(503).end();
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise<void>((r) => echo.close(() => r())));
    const err = await client(`http://127.0.0.1:${(echo.address() as AddressInfo).port}/compact`, clock)
      .compact(oslo)
      .catch((e: unknown) => e);
    expect(isWattshiftError(err, 'API_UNAVAILABLE')).toBe(true);
    expect(seenAgents).toEqual([`wattshift/9.9.9 ${contact} /compact?lat=59.9139&lon=10.7522&altitude=23`]);
  });

  it('cuts coordinates to 4 decimals without rounding', () => {
    expect([59.91399, 10.7522, -0.00009, 63.4, 5, -179.99999, 59.99999999].map(truncatedCoordinate)).toEqual([
      '59.9139',
      '10.7522',
      '0',
      '63.4',
      '5',
      '-179.9999',
      '59.9999',
    ]);
  });

  it('asks nothing without a contact', async () => {
    const clock = new ManualClock(t0);
    const { sandbox, asked } = await sandboxAt(clock);
    const err = await client(sandbox.weatherUrl, clock, '')
      .compact(oslo)
      .catch((e: unknown) => e);
    expect(isWattshiftError(err, 'WEATHER_NO_CONTACT')).toBe(true);
    expect(asked).toEqual([]);
  });

  it("the sandbox's body is MET's compact format (its JSON schema, checked with ajv), summer and winter, north and south", async () => {
    const schema = JSON.parse(readFileSync(new URL('./fixtures/weather/locationforecast-compact.schema.json', import.meta.url), 'utf8')) as object;
    const ajv = new Ajv({ allErrors: true });
    addFormats.default(ajv, { mode: 'full' });
    const validate = ajv.compile(schema);
    const clock = new ManualClock(t0);
    const { sandbox } = await sandboxAt(clock);
    const means: number[] = [];
    for (const [at, lat] of [
      [t0, '59.9139'],
      [t0, '69.6492'],
      [Date.UTC(2026, 6, 15, 12), '55.6761'],
    ] as const) {
      await clock.advance(at - clock.nowMs());
      const res = await request(`${sandbox.weatherUrl}?lat=${lat}&lon=10.7522&altitude=10`, { headers: { 'user-agent': 'test/1 x@example.org' } });
      const body = (await res.body.json()) as { properties: { timeseries: { data: { instant: { details: { air_temperature: number } } } }[] } };
      expect(res.statusCode).toBe(200);
      expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
      const temps = body.properties.timeseries.map((t) => t.data.instant.details.air_temperature);
      means.push(temps.reduce((a, b) => a + b, 0) / temps.length);
    }
    // Oslo in January around its −4 °C normal, Tromsø colder, Copenhagen in July far warmer.
    expect(means[0]).toBeGreaterThan(-12);
    expect(means[0]).toBeLessThan(3);
    expect(means[1]).toBeLessThan(means[0]!);
    expect(means[2]).toBeGreaterThan(10);
  });

  it('the sandbox refuses a request without a User-Agent (403) and a coordinate with 5 decimals (400)', async () => {
    const clock = new ManualClock(t0);
    const { sandbox } = await sandboxAt(clock);
    const bare = await request(`${sandbox.weatherUrl}?lat=59.9139&lon=10.7522`, { headers: { 'user-agent': '' } });
    await bare.body.dump();
    expect(bare.statusCode).toBe(403);
    const fine = await request(`${sandbox.weatherUrl}?lat=59.91391&lon=10.7522`, { headers: { 'user-agent': 'test/1 x@example.org' } });
    await fine.body.dump();
    expect(fine.statusCode).toBe(400);
  });
});

describe('the weather refresh', () => {
  it('asks again only after Expires, with If-Modified-Since, and keeps Expires and the forecast across a restart', async () => {
    const clock = new ManualClock(t0);
    const { sandbox, asked } = await sandboxAt(clock);
    const dbPath = join(tempDir('wattshift-weather-'), 'w.db');
    const store1 = storeAt(dbPath, clock);
    const first = refresh({ client: client(sandbox.weatherUrl, clock), place: oslo, clock, store: store1 });
    await until(() => first.nextRequestMs() > t0, 'the first forecast arrived');
    expect(first.forecast().source).toBe('metno');
    expect(asked.map((r) => r.status)).toEqual([200]);
    expect(first.nextRequestMs()).toBe(t0 + 30 * minuteMs + 30_000);
    // Expires is 12:35; the next request comes half a minute after it (random 0.5).
    await clock.advance(29 * minuteMs);
    expect(first.nextRequestMs()).toBeGreaterThan(clock.nowMs());
    expect(asked).toHaveLength(1);
    await clock.advance(2 * minuteMs);
    await until(() => first.nextRequestMs() > t0 + 31 * minuteMs, 'asked again after Expires');
    expect(asked.map((r) => r.status)).toEqual([200, 304]);
    const confirmed = first.forecast();
    expect(confirmed.updatedMs).toBeGreaterThan(Date.UTC(2026, 0, 15, 12));

    // A restart at 12:50, before the new Expires (13:06): nothing asked, the forecast is there.
    await first.stop();
    store1.close();
    await clock.advance(14 * minuteMs);
    const store2 = storeAt(dbPath, clock);
    const second = refresh({ client: client(sandbox.weatherUrl, clock), place: oslo, clock, store: store2 });
    expect(second.forecast()).toEqual(confirmed);
    // Its loop goes to sleep until the kept Expires (a turn of the event loop).
    await until(() => second.nextRequestMs() > clock.nowMs(), 'waiting for the kept Expires', { settleTurns: 2 });
    expect(asked).toHaveLength(2);
    // Past Expires and past the hour: MET's next run, a new forecast.
    await clock.advance(20 * minuteMs);
    await until(() => asked.length === 3, 'asked after the kept Expires');
    expect(asked[2]!.status).toBe(200);
    await until(() => second.forecast().updatedMs === Date.UTC(2026, 0, 15, 13), 'the 13:00 run');

    // A config change to another place does not use the kept forecast.
    const elsewhere = refresh({ client: client(sandbox.weatherUrl, clock), place: { latitude: 63.43, longitude: 10.39 }, clock, store: store2 });
    expect(elsewhere.forecast().source).toBe('none');
  });

  it('keeps the last forecast while the service is down, holding its last value beyond its end', async () => {
    const clock = new ManualClock(t0);
    const { sandbox, asked } = await sandboxAt(clock);
    const store = storeAt(':memory:', clock);
    const r = refresh({ client: client(sandbox.weatherUrl, clock), place: oslo, clock, store });
    await until(() => r.forecast().source === 'metno', 'the first forecast arrived');
    const held = r.forecast();
    await sandbox.close();
    await clock.advance(40 * minuteMs);
    await until(() => r.health().lastError?.code === 'API_UNAVAILABLE', 'the failure is in the health');
    expect(asked).toHaveLength(1);
    expect(r.forecast()).toEqual(held);
    // Ten days on, the whole plan lies beyond the forecast: its last value, said to be persistence.
    const later = t0 + 10 * 24 * hourMs;
    const slots = outdoorTempsForSlots(r.forecast(), [later, later + hourMs], later);
    expect(slots.source).toBe('persistence');
    expect(slots.tempsC).toEqual([held.points.at(-1)!.tempC, held.points.at(-1)!.tempC]);
  });

  it('says a deprecated product (203) once, backs off on 503, and stops asking after a 403', async () => {
    const clock = new ManualClock(t0);
    const { sandbox } = await sandboxAt(clock);
    const sample = await request(`${sandbox.weatherUrl}?lat=59.9&lon=10.7`, { headers: { 'user-agent': 'test/1 x@example.org' } });
    const body = await sample.body.text();
    const statuses: number[] = [];
    let answer = 203;
    const server: Server = createServer((_req, res) => {
      statuses.push(answer);
      res.writeHead(answer, { 'content-type': 'application/json', expires: new Date(clock.nowMs() + 30 * minuteMs).toUTCString() });
      res.end(answer === 203 ? body : '');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise<void>((r) => server.close(() => r())));
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/compact`;
    const r = refresh({ client: client(url, clock), place: oslo, clock, store: storeAt(':memory:', clock), logger });
    await until(() => r.nextRequestMs() > t0, 'a 203 forecast is used');
    expect(r.forecast().source).toBe('metno');
    await clock.advance(31 * minuteMs);
    await until(() => r.nextRequestMs() > t0 + 31 * minuteMs, 'asked again after Expires');
    expect(statuses).toEqual([203, 203]);
    expect(lines.filter((l) => l.code === 'WEATHER_DEPRECATED')).toHaveLength(1);

    answer = 503;
    const due = r.nextRequestMs();
    await clock.advance(due - clock.nowMs());
    await until(() => r.health().lastError?.code === 'API_UNAVAILABLE', 'the 503 is in the health');
    expect(r.nextRequestMs()).toBe(due + 45_000);
    // The first backoff is a minute (half fixed, half random: 45 s with random 0.5); not before.
    await clock.advance(40_000);
    expect(r.nextRequestMs()).toBeGreaterThan(clock.nowMs());
    expect(statuses).toEqual([203, 203, 503]);
    await clock.advance(5_000);
    await until(() => r.nextRequestMs() > due + 45_000, 'asked again after the backoff');
    // The second doubles: 2 minutes' ceiling, 90 s.
    expect(r.nextRequestMs()).toBe(due + 45_000 + 90_000);

    answer = 403;
    await clock.advance(90_000);
    await until(() => r.health().lastError?.code === 'WEATHER_BLOCKED', 'blocked');
    await clock.advance(24 * hourMs);
    expect(statuses).toEqual([203, 203, 503, 503, 403]);
    expect(lines.filter((l) => l.code === 'WEATHER_BLOCKED')).toHaveLength(1);
    expect(r.forecast().source).toBe('metno');
  });
});
