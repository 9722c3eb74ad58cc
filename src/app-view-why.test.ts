/**
 * Why a slot is planned, in the user's words, on a real plan of a tank with a comfort window and a
 * car: the views carry the planner's own reason for machines and the words for people, and the
 * page, the terminal plan and `wattshift status` show the words.
 */
import { describe, expect, it } from 'vitest';
import { planView } from './app-view.js';
import { renderPlan } from './cli/plan-render.js';
import { planStatus, renderStatus, type StatusReport } from './cli/status.js';
import { defaultConfig } from './config/load.js';
import { plan as makePlan } from './core/planner.js';
import { buildPriceSeries } from './core/prices.js';
import type { PlanInput } from './core/types.js';
import { renderPlanSvg } from './status/svg.js';

const hour = 3_600_000;
const from = Date.UTC(2026, 2, 2, 17);
const now = from + 30 * 60_000;
/** Tuesday 06:30 in Oslo. */
const comfortAtMs = Date.UTC(2026, 2, 3, 5, 30);
const leavesMs = Date.UTC(2026, 2, 3, 6);
const tz = 'Europe/Oslo';
const jargon = /rank|bound by|tankMax|tankFloor|evPower|locationLimit|frozen|\/\d+\b/;

const config = defaultConfig({
  site: { locationLimitKw: 11, timezone: tz },
  modbus: { main: { type: 'tcp', host: '127.0.0.1' } },
  devices: [
    {
      id: 'tank',
      name: 'Hot water',
      kind: 'hotWaterTank',
      switch: { type: 'modbus', bus: 'main', profile: 'generic-relay' },
      model: { volumeL: 200, elementKw: 3 },
    },
    { id: 'car', name: 'Garage', kind: 'evCharger', charger: { type: 'goe', topicPrefix: 'go-eCharger/1' }, model: { capacityKwh: 60 } },
  ],
  mqtt: { url: 'mqtt://127.0.0.1:1883' },
});

function input(): PlanInput {
  const slots = buildPriceSeries({
    slotMinutes: 60,
    fromMs: from,
    toMs: from + 24 * hour,
    timezone: tz,
    currency: 'NOK',
    deltas: [],
    fees: { gridFeePerKwh: 0, taxPerKwh: 0 },
    spot: {
      actual: {
        units: { currency: 'NOK', energyUnit: 'kWh' },
        resolutionMinutes: 60,
        points: Array.from({ length: 24 }, (_, i) => ({ startMs: from + i * hour, price: 1 + (i % 5) / 10 })),
      },
    },
  });
  return {
    slots,
    timezone: tz,
    currency: 'NOK',
    location: { limitKw: 11, baseLoadKw: 1 },
    tank: {
      id: 'tank',
      volumeL: 200,
      powerKw: 3,
      coldWaterC: 10,
      ambientC: 20,
      heatLossWPerK: 1.6,
      minC: 45,
      maxC: 75,
      currentTempC: 50,
      control: 'continuous',
      comfort: [{ atMs: comfortAtMs, tempC: 60, label: 'hot water ≥ 60 °C by 06:30' }],
    },
    ev: { id: 'car', energyNeededKwh: 20, departureMs: leavesMs, minPowerKw: 4, maxPowerKw: 11, efficiency: 0.9 },
  };
}

describe('why a slot is planned', () => {
  const plan = makePlan(input(), now);
  const view = planView(plan, config, now);

  it("names the cheapest hours left before the deadline a device is planned for, without the planner's jargon", () => {
    const before = (deadline: number) => plan.slots.filter((s) => s.endMs > now && s.startMs < deadline);
    const tankSlots = before(comfortAtMs).filter((s) => s.tanks?.['tank']?.on);
    expect(tankSlots.length).toBeGreaterThan(0);
    for (const s of view.slots) {
      expect(s.why, new Date(s.startMs).toISOString()).toBeDefined();
      expect(s.why).not.toMatch(jargon);
      // The machine-readable reason is still there, as the planner gave it.
      expect(s.reason).toMatch(/rank \d+\/\d+/);
    }
    /** Where the slot's price stands among the hours before the deadline, as the words must say it. */
    const place = (price: number, window: typeof plan.slots, planned: number): string => {
      const rank = 1 + window.filter((x) => x.price < price).length;
      if (rank > planned) return `the ${rank}`;
      return planned === 1 ? 'the cheapest hour left' : `one of the ${planned} cheapest hours left`;
    };
    for (const s of tankSlots) {
      const shown = view.slots.find((v) => v.startMs === s.startMs)!;
      expect(shown.why).toContain(`Hot water: ${place(s.price, before(comfortAtMs), tankSlots.length)}`);
      expect(shown.why).toMatch(/left before 06:30 \(for “hot water ≥ 60 °C by 06:30”\)/);
    }
    const carSlots = before(leavesMs).filter((s) => s.evs?.['car']?.on);
    expect(carSlots.length).toBeGreaterThan(0);
    for (const s of carSlots) {
      const shown = view.slots.find((v) => v.startMs === s.startMs)!;
      expect(shown.why).toContain(`Garage: ${place(s.price, before(leavesMs), carSlots.length)}`);
      expect(shown.why).toContain('left before the car leaves at 07:00');
    }
    const idle = view.slots.filter((s) => !Object.values(s.devices).some((d) => d.on));
    expect(idle.length).toBeGreaterThan(0);
    for (const s of idle) expect(s.why).toMatch(/^nothing planned/);
  });

  it('says why a slot is kept from the last plan', () => {
    const later = now + 40 * 60_000;
    const again = planView(makePlan(input(), later, plan), config, later);
    const kept = plan.slots.find((s) => s.startMs <= later && later < s.endMs)!;
    const current = again.slots.find((s) => s.startMs === kept.startMs)!;
    expect(current.reason).toContain('frozen');
    expect(current.why).toContain('kept from the last plan because the slot is under way');
    expect(current.why).not.toMatch(jargon);
  });

  it('the chart, the terminal plan and wattshift status show the words; the JSON keeps both', () => {
    const on = view.slots.find((s) => s.devices['tank']?.on)!;
    const svg = renderPlanSvg(view, { timezone: tz, nowMs: now, names: { tank: 'Hot water', car: 'Garage' } });
    const titles = [...svg.matchAll(/<rect class="slot"[^>]*><title>([^<]*)<\/title>/g)].map((m) => m[1]!);
    expect(titles.length).toBeGreaterThan(0);
    expect(titles.some((t) => t.includes('one of the'))).toBe(true);
    expect(titles.filter((t) => jargon.test(t))).toEqual([]);
    const explained = renderPlan(view, { explain: true, timezone: tz, names: { tank: 'Hot water', car: 'Garage' } });
    expect(explained).toContain(on.why!);
    expect(explained.split('\n').filter((l) => jargon.test(l))).toEqual([]);
    const current = planStatus({ origin: 'database', view, ageMinutes: 30, stale: false }, now)!;
    expect(current.current?.reason).toMatch(/rank/);
    expect(current.current?.why).toBe(view.slots[0]!.why);
    const report = {
      nowMs: now,
      database: 'w.db',
      registration: null,
      program: null,
      events: { total: 0, byState: {}, last: null },
      outbox: { pending: 0, sending: 0, accepted: 0, rejected: 0, oldestPendingDeadlineMs: null, nextAttemptMs: null, lastErrors: [] },
      plan: current,
      bill: null,
      daemon: { url: 'http://127.0.0.1:1', reachable: false },
      history: { nowMs: now, timezone: tz, currency: 'NOK', devices: [], days: [], months: [], unreadablePlans: 0 },
    } as StatusReport;
    const text = renderStatus(report, { ...config, http: { ...config.http, enabled: false } }).join('\n');
    expect(text).toContain(`  why: ${view.slots[0]!.why}`);
  });
});
