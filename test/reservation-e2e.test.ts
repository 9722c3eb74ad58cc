/**
 * An LPC reservation end to end: the daemon (in this process, on the simulation kernel's virtual
 * clock) plans the demo home; the sandbox's simulation API makes an LPCReservation over the hours
 * the plan heats and charges in; the daemon polls it, plans for the reserved cap (the tank and
 * the tank take its energy outside the window, where it is cheapest: before or after), acknowledges
 * nothing, and `wattshift plan --explain` names the reservation and its effect. (The demo car is
 * not plugged in at this hour; the planner's own test shows a car charging ahead of a window.)
 */
import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/dispatch.js';
import { parseConfig } from '../src/config/load.js';
import type { Config } from '../src/config/schema.js';
import type { Plan, PlanSlot } from '../src/core/types.js';
import type { HomeView } from '../src/view/model.js';
import { localAt } from '../src/demo/environment.js';
import { findFreePort } from '../src/sandbox/devices/modbus-sim.js';
import { openStore } from '../src/store/index.js';
import { demoHome } from './helpers/demo-home.js';
import { api, fetchToken } from './fixtures/sandbox/raw-client.js';

const startMs = localAt(Date.UTC(2026, 0, 14, 12), 0, 17);
const hour = 3_600_000;
const flexKwh = (s: PlanSlot): number => [...Object.values(s.tanks ?? {}), ...Object.values(s.evs ?? {})].reduce((sum, d) => sum + d.energyKwh, 0);
const energyIn = (plan: Plan, fromMs: number, toMs: number): number =>
  plan.slots.filter((s) => s.startMs >= fromMs && s.startMs < toMs).reduce((sum, s) => sum + flexKwh(s), 0);

describe('an LPC reservation from the sandbox', () => {
  const home = demoHome({ name: 'reservation', startMs });
  let config: Config;
  let httpPort: number;

  beforeAll(async () => {
    const env = await home.startWorld();
    httpPort = await findFreePort();
    config = parseConfig({ ...env.config, http: { enabled: true, host: '127.0.0.1', port: httpPort } }).config;
    await home.register(config);
    await home.startApp(config, { controlTickMs: 60_000 });
  }, 60_000);

  afterAll(async () => {
    await home.close();
  }, 30_000);

  it('is planned for: the energy the plan had in its window moves out of it, and nothing is acknowledged', async () => {
    await home.until(startMs + 10 * 60_000);
    const before = home.app.currentPlan();
    if (!before) throw new Error('no plan yet');
    // The first cheap run of hours at least three hours ahead that the plan heats in: the window.
    const first = before.slots.find((s) => s.startMs >= startMs + 3 * hour && flexKwh(s) > 0.5);
    if (!first) throw new Error('the plan heats nothing three hours ahead');
    const fromMs = first.startMs;
    const toMs = fromMs + 2 * hour;
    const inWindowBefore = energyIn(before, fromMs, toMs);
    expect(inWindowBefore).toBeGreaterThan(1);

    const sandbox = home.env.sandbox;
    const call = api(sandbox, await fetchToken(sandbox));
    const points = [0, 1].map((h) => ({ timestamp: new Date(fromMs + h * hour).toISOString(), maxPowerInKiloWatts: 0 }));
    const made = await call('POST', '/simulation/events/lpc/reservations', {
      locations: [{ location: { locationId: config.spark.locationId, meterPointId: config.spark.meterPointIds[0] }, points }],
    });
    expect(made.status).toBe(200);
    const eventId = (made.json as { simulatedEvent: { id: string } }).simulatedEvent.id;

    // The daemon polls every 5 minutes; then it plans again.
    let after: Plan | null = null;
    for (let t = home.clock.nowMs(); t < startMs + 40 * 60_000 && !after; t += 60_000) {
      await home.until(t);
      const p = home.app.currentPlan();
      if (p?.reservations?.length) after = p;
    }
    if (!after) throw new Error('no plan with the reservation');
    // The window is kept free (the cap of 0 kW leaves no room), its hours name the reservation,
    // and the tank's energy is planned outside it.
    expect(after.reservations).toEqual([
      { eventId, startMs: fromMs, endMs: toMs, maxKw: 0, kept: true, insideKwh: 0, beforeKwh: expect.any(Number) },
    ]);
    expect(energyIn(after, fromMs, toMs)).toBe(0);
    expect(after.slots.filter((s) => s.startMs >= fromMs && s.startMs < toMs).map((s) => s.binding.includes('reservedLpc'))).toEqual([true, true]);
    // No need is left short; the house's own load is above a 0 kW cap, which the plan says.
    expect(after.shortfalls.filter((f) => f.device !== 'location')).toEqual([]);
    expect(after.shortfalls.map((f) => f.message)).toEqual([
      expect.stringMatching(/above the reserved LPC cap of 0\.00 kW/),
      expect.stringMatching(/above the reserved LPC cap of 0\.00 kW/),
    ]);
    // Planned for, not promised: the event is active, with no acknowledgement queued or sent.
    const store = openStore({ path: config.storage.path, readOnly: true });
    try {
      expect(store.getEvent(eventId)?.state).toBe('active');
      expect(store.listReports({ eventId })).toEqual([]);
    } finally {
      store.close();
    }

    // The view (status page and `wattshift status`) lists it as a reserved limit, beside the plan's
    // account of it; the MQTT plan topic carries the same.
    const view = (await (await fetch(`http://127.0.0.1:${httpPort}/api/view`)).json()) as HomeView;
    expect(view.events.find((e) => e.id === eventId)).toMatchObject({
      type: 'LPCReservation',
      startMs: fromMs,
      endMs: toMs,
      capKw: { min: 0, max: 0 },
    });
    expect(view.plan?.reservations).toEqual([
      { eventId, startMs: fromMs, endMs: toMs, maxKw: 0, kept: true, insideKwh: 0, beforeKwh: expect.any(Number) },
    ]);
    // The page says it under the plan and draws it in the chart's power panel, apart from the caps.
    const page = await (await fetch(`http://127.0.0.1:${httpPort}/`)).text();
    expect(page).toMatch(
      new RegExp(`<ul id="reservations"><li data-event="${eventId}">Reserved: the home may be capped at 0\\.0 kW .*; planned for: `),
    );
    const drawn = [...page.matchAll(/<line class="reservation-line" data-kw="0" data-kept="true" data-start="([^"]+)"/g)].map((m) => m[1]);
    expect(drawn).toEqual([new Date(fromMs).toISOString(), new Date(fromMs).toISOString()]); // the wide chart and the narrow one
    const broker = config.mqtt;
    if (!broker) throw new Error('the demo home has no MQTT broker');
    const client = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    try {
      // The retained plan, or the next one if the retained one was published before the reservation.
      const published = new Promise<unknown>((resolve) =>
        client.on('message', (_topic, payload) => {
          const plan = JSON.parse(payload.toString()) as { reservations?: unknown[] };
          if ((plan.reservations ?? []).length > 0) resolve(plan);
        }),
      );
      await client.subscribeAsync(`${broker.baseTopic}/plan`);
      expect(await published).toMatchObject({
        reservations: [
          { event_id: eventId, start: new Date(fromMs).toISOString(), end: new Date(toMs).toISOString(), max_kw: 0, kept: true, inside_kwh: 0 },
        ],
      });
    } finally {
      await client.endAsync();
    }

    // `wattshift plan --explain` asks the running daemon and names the reservation and its effect.
    const file = join(dirname(config.storage.path), 'cli-config.json');
    writeFileSync(file, JSON.stringify({ ...home.env.config, http: { enabled: true, host: '127.0.0.1', port: httpPort } }));
    const out: string[] = [];
    const code = await runCli(['plan', '--config', file, '--explain'], {
      stdout: (l) => out.push(l),
      stderr: () => undefined,
      env: {},
      signals: new EventEmitter() as never,
    });
    expect(code).toBe(0);
    const text = out.join('\n');
    expect(text).toMatch(/^Live plan from the running daemon/);
    expect(text).toMatch(
      /Reserved: the home may be capped at 0\.0 kW .* \(LPC reservation, not acknowledged\); planned for: tank and car take [\d.]+ kWh before it and 0\.0 kWh in it/,
    );
    expect(text.match(/a reserved power limit \(LPC reservation\) may hold it down/g)).toHaveLength(2);
  }, 120_000);
});
