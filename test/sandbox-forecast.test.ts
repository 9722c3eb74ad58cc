import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { runSandboxCommand } from '../src/sandbox/cli.js';
import { startSandbox, type Sandbox } from '../src/sandbox/server.js';
import { spotEurPerMwh } from '../src/sandbox/spot-prices.js';
import { auditResponses, type ResponseAudit } from './helpers/openapi-validate.js';
import { api, fetchToken, raw } from './fixtures/sandbox/raw-client.js';

const now = Date.UTC(2025, 9, 22, 9, 30); // Wednesday 11:30 Oslo; the 26th has 25 hours
let sb: Sandbox;
let audit: ResponseAudit;
let smart: ReturnType<typeof api>;
type Seg = { from: string; to: string; averagePrice: number; loss?: number; type?: string };

beforeAll(async () => {
  sb = await startSandbox({ clock: new ManualClock(now), autoTick: false, seed: 42 });
  audit = auditResponses(sb);
  smart = api(sb, await fetchToken(sb), 'smart');
});
afterAll(() => sb.close());
afterEach(() => expect(audit.failures).toEqual([]));

describe('forecast price service', () => {
  it('forecasts 7 days in 6-hour segments by default, aligned to the local day', async () => {
    const res = await smart('GET', '/prices/forecast/NO1');
    expect(res.status).toBe(200);
    const body = res.json as { priceUnits: unknown; segmentOptions: { segmentSize: number }; forecastSegments: Seg[] };
    expect(body.segmentOptions.segmentSize).toBe(6);
    expect(body.priceUnits).toEqual({ currency: 'EUR', vat: { rate: 1, hasVAT: false }, energyUnit: 'kWh' });
    const segs = body.forecastSegments;
    expect(Date.parse(segs[0]?.from ?? '')).toBe(Date.UTC(2025, 9, 22, 4)); // 06:00 Oslo, the current segment
    const last = segs[segs.length - 1] as Seg;
    expect(Date.parse(last.to) - now).toBeGreaterThanOrEqual(6.5 * 86_400_000);
    expect(Date.parse(last.to) - now).toBeLessThanOrEqual(8 * 86_400_000);
    // Segments are contiguous; on 26 Oct the 00:00-06:00 segment holds 7 hours.
    for (let i = 1; i < segs.length; i++) expect(Date.parse(segs[i]?.from ?? '')).toBe(Date.parse(segs[i - 1]?.to ?? '') + 3_600_000);
    const dst = segs.find((s) => s.from === '2025-10-25T22:00:00+00:00');
    expect(dst?.to).toBe('2025-10-26T04:00:00+00:00');
  });

  it('honours any divisor of 24 and rejects the rest', async () => {
    for (const size of [1, 2, 3, 4, 8, 12, 24]) {
      const res = await smart('GET', `/prices/forecast/SE3?segmentSize=${size}`);
      expect(res.status, String(size)).toBe(200);
    }
    for (const bad of ['5', '0', '7', '2.5', 'six', '48']) {
      const res = await smart('GET', `/prices/forecast/SE3?segmentSize=${bad}`);
      expect(res.status, bad).toBe(400);
    }
    expect((await smart('GET', '/prices/forecast/XX9')).status).toBe(400);
  });

  it('gives advice with loss and labels, in the requested currency, unit and VAT', async () => {
    const ask = (units: Record<string, unknown>, segmentSize = 6) =>
      smart('POST', '/prices/forecast/NO2/advice', { priceUnitsParameters: units, segmentOptionsParameters: { segmentSize } });
    const eur = (await ask({ currency: 'EUR', energyUnit: 'kWh', vatRate: null })).json as { forecastAdvice: Seg[] };
    const nok = (await ask({ currency: 'NOK', energyUnit: 'MWh', vatRate: 1.25 })).json as { priceUnits: unknown; forecastAdvice: Seg[] };
    expect(nok.priceUnits).toEqual({ currency: 'NOK', vat: { rate: 1.25, hasVAT: true }, energyUnit: 'MWh' });
    const a = eur.forecastAdvice[3] as Seg;
    const b = nok.forecastAdvice[3] as Seg;
    expect(b.averagePrice).toBeCloseTo(a.averagePrice * 1000 * 11.7 * 1.25, 0);
    const types = new Set(eur.forecastAdvice.map((s) => s.type));
    expect(types.has('Good') && types.has('Avoid')).toBe(true);
    expect([...types].every((t) => ['Good', 'Normal', 'Avoid'].includes(t ?? ''))).toBe(true);
    expect(eur.forecastAdvice.some((s) => s.loss === 0)).toBe(true);
    expect((await ask({ currency: 'GBP', energyUnit: 'kWh', vatRate: null })).status).toBe(400);
    expect((await ask({ currency: 'EUR', energyUnit: 'kWh', vatRate: null }, 5)).status).toBe(400);
    expect((await smart('POST', '/prices/forecast/NO2/advice', '{"priceUnitsParameters":')).status).toBe(400);
  });

  it('serves actual spot prices', async () => {
    const res = await smart('GET', '/prices/actual/DK1?Currency=DKK&EnergyUnit=kWh');
    expect(Object.keys((res.json as { prices: Record<string, number> }).prices)).toHaveLength(24);
  });

  it('is deterministic from the seed and shaped like Nordic prices', () => {
    const day = Array.from({ length: 24 }, (_, h) => spotEurPerMwh(42, 'DK2', Date.UTC(2025, 0, 15, h - 1)));
    expect(day).toEqual(Array.from({ length: 24 }, (_, h) => spotEurPerMwh(42, 'DK2', Date.UTC(2025, 0, 15, h - 1))));
    expect(day).not.toEqual(Array.from({ length: 24 }, (_, h) => spotEurPerMwh(43, 'DK2', Date.UTC(2025, 0, 15, h - 1))));
    // Winter: the evening peak (17-19 local) is dearer than the night (02-04 local).
    expect(Math.min(...day.slice(17, 20))).toBeGreaterThan(Math.max(...day.slice(2, 5)));
    // Summer: some days dip below zero around midday.
    const summer = Array.from({ length: 60 * 24 }, (_, h) => spotEurPerMwh(42, 'SE3', Date.UTC(2025, 5, 1, h)));
    expect(summer.some((p) => p < 0)).toBe(true);
  });
});

describe('sandbox command', () => {
  it('prints URLs and credentials and stops on abort', async () => {
    const lines: string[] = [];
    const ac = new AbortController();
    const done = runSandboxCommand(['--port', '0', '--seed', '3', '--speed', '60'], { stdout: (l) => lines.push(l) }, ac.signal);
    for (let i = 0; i < 100 && !lines.some((l) => l.includes('Ctrl+C')); i++) await new Promise((r) => setTimeout(r, 20));
    const base = /(http:\/\/\S+\/energy-coordination\/v1)/.exec(lines.join('\n'))?.[1];
    expect(base).toBeDefined();
    expect(lines.join('\n')).toContain('client_id=wattshift-local client_secret=local-secret');
    expect((await raw(`${base}/users`)).status).toBe(401);
    ac.abort();
    await done;
    expect(lines[lines.length - 1]).toBe('sandbox stopped');
    await expect(runSandboxCommand(['--bogus'], { stdout: () => undefined })).rejects.toThrow(/unknown option/);
  });
});
