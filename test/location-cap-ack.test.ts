/**
 * The acknowledgement rule for a cap on the whole home (docs/caps.md), in the running daemon: a
 * location cap is promised only where the house's own load (learnt from the main meter) plus what
 * each device draws when it does not hold a block by itself stays within it. The demo home at
 * night: the house draws 350 W, the go-e charger (no timer of its own) can draw 11.04 kW, the 2 kW
 * tank holds its block by its relay board's release timer, or not on a plain board.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { localAt } from '../src/demo/environment.js';
import { demoHome, type DemoHome } from './helpers/demo-home.js';
import { api, fetchToken } from './fixtures/sandbox/raw-client.js';

const startMs = localAt(Date.UTC(2026, 0, 14, 12), 0, 0, 30);
const hour = 3_600_000;
const opened: DemoHome[] = [];
afterEach(async () => {
  for (const h of opened.splice(0)) await h.close();
}, 30_000);

/** The answer the sandbox accepted for each cap, by kW, once every one is there. */
async function answers(
  tankReleaseTimer: boolean,
  caps: { kw: number; fromHour: number; hours: number }[],
): Promise<Record<number, 'acknowledged' | 'declined'>> {
  const home = demoHome({ name: `location-cap-${tankReleaseTimer}`, startMs });
  opened.push(home);
  const env = await home.startWorld({ mainMeter: true, tankReleaseTimer });
  const { config } = parseConfig(env.config);
  await home.register(config);
  await home.startApp(config, { controlTickMs: 60_000 });
  // Two hours of the main meter's readings: the house's own load is learnt (smoothed) near 350 W.
  await home.until(startMs + 2 * hour);
  const call = api(env.sandbox, await fetchToken(env.sandbox));
  const location = { locationId: config.spark.locationId, meterPointId: config.spark.meterPointIds[0] };
  const byEvent = new Map<string, number>();
  for (const c of caps) {
    const points = Array.from({ length: c.hours }, (_, h) => ({
      timestamp: new Date(localAt(startMs, 0, c.fromHour + h)).toISOString(),
      maxPowerInKiloWatts: c.kw,
    }));
    const made = await call('POST', '/simulation/events/lpc/locations', { locations: [{ location, points }] });
    expect(made.status).toBe(200);
    byEvent.set((made.json as { simulatedEvent: { id: string } }).simulatedEvent.id, c.kw);
  }
  const out: Record<number, 'acknowledged' | 'declined'> = {};
  for (let t = home.clock.nowMs(); Object.keys(out).length < caps.length; t += 60_000) {
    expect(t, 'an acknowledgement never came').toBeLessThan(startMs + 3 * hour);
    await home.until(t);
    for (const r of env.sandbox.acceptedReports(String(config.spark.clientId))) {
      const kw = byEvent.get(r.eventId);
      if (kw === undefined) continue;
      for (const p of r.payloads) {
        const raw = p.raw as { acknowledgedTargets?: unknown[]; declinedTargets?: unknown[] };
        if (raw.acknowledgedTargets?.length) out[kw] = 'acknowledged';
        if (raw.declinedTargets?.length) out[kw] = 'declined';
      }
    }
  }
  return out;
}

describe('a cap on the whole home', () => {
  const caps = [
    { kw: 0, fromHour: 3, hours: 1 }, // below the house's own load
    { kw: 11.2, fromHour: 3, hours: 1 }, // the charger fits, not with the house's 350 W beside it
    { kw: 12.4, fromHour: 4, hours: 2 }, // house and charger fit; the tank's 2 kW only if it holds its block by itself
    { kw: 40, fromHour: 3, hours: 1 }, // everything fits, held or not
  ];

  it('is acknowledged where the house load and the unheld devices fit: a tank with a release timer holds its block', async () => {
    expect(await answers(true, caps)).toEqual({ 0: 'declined', 11.2: 'declined', 12.4: 'acknowledged', 40: 'acknowledged' });
  }, 120_000);

  it('is declined where a tank on a plain relay board would heat once wattshift is gone', async () => {
    expect(await answers(false, caps)).toEqual({ 0: 'declined', 11.2: 'declined', 12.4: 'declined', 40: 'acknowledged' });
  }, 120_000);
});
