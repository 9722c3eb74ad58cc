import { describe, expect, it } from 'vitest';
import { homeView } from './app-view.js';
import { defaultConfig } from './config/load.js';
import type { HomeEvent } from './spark/event-normalise.js';
import { renderStatusPage } from './status/page.js';
import { stateMessages } from './ha/state.js';
import { haTopics } from './ha/topics.js';
import { renderPlan } from './cli/plan-render.js';
import { discoveryMessages } from './ha/discovery.js';
import { plan as makePlan } from './core/planner.js';
import { buildPriceSeries } from './core/prices.js';
import type { Plan } from './core/types.js';
import type { BillSummary } from './jobs/billing.js';
import type { ControlSnapshot } from './jobs/control-loop.js';

const hour = 3_600_000;
const now = Date.UTC(2026, 2, 2, 17, 30);

function lpc(id: string, caps: { startMs: number; hours: number; maxKw: number; resourceId: string | null }[]): HomeEvent {
  return {
    id,
    createdAtMs: now - 10 * hour,
    notificationType: null,
    payloadType: caps[0]?.resourceId ? 'ResourceLPC' : 'LPC',
    relevant: true,
    startMs: Math.min(...caps.map((c) => c.startMs)),
    endMs: Math.max(...caps.map((c) => c.startMs + c.hours * hour)),
    locationIds: ['loc'],
    resourceIds: [],
    priceDeltas: [],
    eligibility: null,
    refusal: null,
    lpcCaps: caps.map((c) => ({
      startMs: c.startMs,
      durationMs: c.hours * hour,
      maxKw: c.maxKw,
      resourceId: c.resourceId,
      locationId: 'loc',
      meterPointId: null,
    })),
  };
}

function viewWith(events: HomeEvent[], plan: Plan | null = null, bill?: BillSummary, control: ControlSnapshot | null = null) {
  const config = defaultConfig({
    site: { locationLimitKw: 17 },
    modbus: { main: { type: 'tcp', host: '127.0.0.1' } },
    devices: [
      {
        id: 'tank',
        name: 'Tank',
        kind: 'hotWaterTank',
        switch: { type: 'modbus', bus: 'main', profile: 'generic-relay' },
        model: { volumeL: 200, elementKw: 3 },
      },
    ],
  });
  return homeView({
    config,
    nowMs: now,
    plan,
    control,
    devices: new Map(),
    jobs: [],
    locationId: 'loc',
    wishes: () => ({ mode: 'auto', boostUntilMs: null, floorC: null, departureMs: null, targetKwh: null, targetSocPct: null }),
    outbox: { pending: 1, sending: 1, accepted: 7, rejected: 2, oldestPendingDeadlineMs: null, nextAttemptMs: null },
    events,
    resources: new Map([['res-tank', 'tank']]),
    ...(bill ? { bill } : {}),
  });
}

describe('limits, events and reports in the view', () => {
  const events = [
    lpc('home-cap', [
      { startMs: now - hour, hours: 1, maxKw: 9, resourceId: null },
      { startMs: now, hours: 2, maxKw: 6, resourceId: null },
    ]),
    lpc('tank-cap', [{ startMs: now - 30 * 60_000, hours: 3, maxKw: 0, resourceId: 'res-tank' }]),
    lpc('later', [{ startMs: now + 5 * hour, hours: 1, maxKw: 4, resourceId: null }]),
    lpc('stranger', [{ startMs: now - hour, hours: 4, maxKw: 1, resourceId: 'someone-else' }]),
    lpc('over', [{ startMs: now - 3 * hour, hours: 1, maxKw: 2, resourceId: null }]),
  ];

  it('shows the active caps per device and location with their end, coming caps (not ended ones), and reports by state', () => {
    const v = viewWith(events);
    expect(v.location.lpcCapKw).toBe(6);
    expect(v.devices[0]).toMatchObject({ capKw: 0, capUntilMs: now - 30 * 60_000 + 3 * hour });
    expect(v.limits.map((l) => [l.eventId, l.deviceId, l.capKw, l.active])).toEqual([
      ['tank-cap', 'tank', 0, true],
      ['home-cap', null, 6, true],
      ['later', null, 4, false],
    ]);
    expect(v.events.map((e) => e.id)).toEqual(['home-cap', 'stranger', 'tank-cap', 'later']);
    expect(v.outbox).toEqual({ pending: 2, accepted: 7, rejected: 2 });
  });

  it('the page, MQTT and the view say the same', () => {
    const v = viewWith(events);
    const html = renderStatusPage(v, { timezone: 'UTC' });
    expect(html).toContain('limited to 0.0 kW (LPC) until 2026-03-02 20:00');
    expect(html).toMatch(/<table id="limits">.*whole home.*6\.0 kW.*<b>active<\/b>.*4\.0 kW.*coming/s);
    expect(html).toContain('2 pending, 7 accepted, 2 rejected');
    const t = haTopics('ws');
    const m = stateMessages(t, v);
    const location = JSON.parse(m.get(t.location)!) as {
      lpc_cap_kw: number;
      limits: { device: string | null; cap_kw: number; end: string; active: boolean }[];
    };
    expect(location.lpc_cap_kw).toBe(6);
    expect(location.limits).toContainEqual({
      device: 'tank',
      cap_kw: 0,
      start: '2026-03-02T17:00:00.000Z',
      end: '2026-03-02T20:00:00.000Z',
      active: true,
    });
    expect(JSON.parse(m.get(t.device('tank'))!)).toMatchObject({ cap_kw: 0, cap_until: '2026-03-02T20:00:00.000Z' });
    expect(JSON.parse(m.get(t.health)!)).toMatchObject({ outbox: { pending: 2, accepted: 7, rejected: 2 } });
  });

  it('tells each event by what it is, not by its id: the kind, the cap or price, the window; the id stays in a title and the JSON', () => {
    const price: HomeEvent = {
      id: 'c0ffee00-1111-2222-3333-444455556666',
      createdAtMs: now - hour,
      notificationType: null,
      payloadType: 'PriceCurve',
      relevant: true,
      startMs: now - 30 * 60_000,
      endMs: now + 90 * 60_000,
      locationIds: ['loc'],
      resourceIds: ['res-tank'],
      lpcCaps: [],
      eligibility: null,
      refusal: null,
      priceDeltas: [-0.35, 0.4].map((p, i) => ({
        startMs: now - 30 * 60_000 + i * hour,
        durationMs: hour,
        price: p,
        currency: 'NOK',
        energyUnit: 'kWh',
        resourceId: 'res-tank',
      })),
    };
    const v = viewWith([...events, price]);
    expect(v.events.find((e) => e.id === 'tank-cap')).toMatchObject({ type: 'ResourceLPC', capKw: { min: 0, max: 0 }, deviceIds: ['tank'] });
    expect(v.events.find((e) => e.id === 'home-cap')).toMatchObject({ capKw: { min: 6, max: 9 } });
    expect(v.events.find((e) => e.id === price.id)).toMatchObject({ priceDelta: { min: -0.35, max: 0.4, unit: 'NOK/kWh' } });
    const html = renderStatusPage(v, { timezone: 'UTC' });
    const list = /<ul id="events">(.*?)<\/ul>/s.exec(html)![1]!;
    expect(list).toContain(
      '<li data-event="tank-cap" title="event tank-cap">Power limit on a device: at most 0.0 kW on Tank, 2026-03-02 17:00 → 20:00</li>',
    );
    expect(list).toContain('>Power limit on the home: at most 6.0 to 9.0 kW, 2026-03-02 16:30 → 19:30</li>');
    expect(list).toContain(
      `title="event ${price.id}">Price incentive: from 0.350 NOK/kWh off to 0.400 NOK/kWh on the price, 2026-03-02 17:00 → 19:00</li>`,
    );
    // What the user reads has no id in it.
    const text = list.replace(/<[^>]*>/g, ' ');
    for (const id of ['tank-cap', 'home-cap', price.id]) expect(text).not.toContain(id);
    expect(JSON.parse(JSON.stringify(v)).events.map((e: { id: string }) => e.id)).toContain(price.id);
  });

  it("before the first reading, MQTT keeps the last run's values instead of publishing unknown", () => {
    const v = viewWith([]);
    expect(v.devices[0]!.notReadYet).toBe(true);
    const t = haTopics('ws');
    const before = stateMessages(t, v);
    for (const f of ['temperature', 'power', 'energy'] as const) expect(before.has(t.deviceField('tank', f))).toBe(false);
    expect(before.get(t.deviceField('tank', 'mode'))).toBe('auto'); // known without a reading
    expect(before.get(t.deviceAvailability('tank'))).toBe('online');
    // Once read, a value the reading lacks is published as unknown.
    const control = {
      readings: new Map([['tank', { atMs: now, temperatureC: 51.24, errors: [] }]]),
      decision: { setpoints: [] },
    } as unknown as ControlSnapshot;
    const read = viewWith([], null, undefined, control);
    expect(read.devices[0]!.notReadYet).toBeUndefined();
    const after = stateMessages(t, read);
    expect(after.get(t.deviceField('tank', 'temperature'))).toBe('51.2');
    expect(after.get(t.deviceField('tank', 'power'))).toBe('None');
  });

  it('without events: no cap, and the page says so', () => {
    const v = viewWith([]);
    expect(v.location.lpcCapKw).toBeUndefined();
    expect(v.devices[0]!.capKw).toBeUndefined();
    expect(renderStatusPage(v, { timezone: 'UTC' })).toContain('No power-limitation (LPC) cap now or coming.');
  });
});

describe('the next comfort deadline in the views', () => {
  /** A real plan from 17:00 UTC over a day, with "60 °C by 06:30 Oslo" the next morning (05:30 UTC). */
  function comfortPlan(tempC: number): Plan {
    const from = Date.UTC(2026, 2, 2, 17);
    const slots = buildPriceSeries({
      slotMinutes: 60,
      fromMs: from,
      toMs: from + 24 * hour,
      timezone: 'Europe/Oslo',
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
    const atMs = Date.UTC(2026, 2, 3, 5, 30);
    return makePlan(
      {
        slots,
        timezone: 'Europe/Oslo',
        currency: 'NOK',
        location: { limitKw: 17, baseLoadKw: 0 },
        tank: {
          volumeL: 200,
          powerKw: 3,
          coldWaterC: 10,
          ambientC: 20,
          heatLossWPerK: 1.6,
          minC: 45,
          maxC: 75,
          currentTempC: 50,
          control: 'continuous',
          comfort: [
            { atMs: now - hour, tempC, label: 'past' },
            { atMs, tempC, label: 'hot water ≥ 60 °C by 06:30' },
          ],
        },
      },
      now,
    );
  }

  it('the page, MQTT, the terminal plan and the view say the same', () => {
    const v = viewWith([], comfortPlan(60));
    const comfort = { atMs: Date.UTC(2026, 2, 3, 5, 30), tempC: 60, label: 'hot water ≥ 60 °C by 06:30', met: true };
    expect(v.devices[0]!.nextComfort).toMatchObject(comfort);
    expect(v.plan?.nextComfort).toEqual(v.devices[0]!.nextComfort);
    expect(v.plan!.nextComfort!.plannedTempC).toBeGreaterThanOrEqual(60 - 1e-6);
    expect(renderStatusPage(v, { timezone: 'Europe/Oslo' })).toContain(
      '<div class="muted">hot water ≥ 60 °C by 06:30: 2026-03-03 06:30, planned 60 °C</div>',
    );
    const t = haTopics('ws');
    const m = stateMessages(t, v);
    expect(m.get(t.deviceField('tank', 'next_comfort'))).toBe('2026-03-03T05:30:00.000Z');
    expect(JSON.parse(m.get(t.plan)!)).toMatchObject({
      next_comfort: { at: '2026-03-03T05:30:00.000Z', label: comfort.label, temperature: 60, planned_temperature: 60, met: true },
    });
    expect(renderPlan(v.plan!, { explain: true, timezone: 'Europe/Oslo' })).toMatch(
      /Next comfort deadline: hot water ≥ 60 °C by 06:30, Tue 03-03 06:30, ≥ 60 °C \(planned 60\.0 °C\)\n[^]*left before 06:30 \(for “hot water ≥ 60 °C by 06:30”\)/,
    );
  });

  it('an unreachable deadline stands out, and without windows there is none', () => {
    const v = viewWith([], comfortPlan(90));
    expect(v.devices[0]!.nextComfort?.met).toBe(false);
    expect(renderStatusPage(v, { timezone: 'UTC' })).toMatch(
      /<div class="limited">hot water ≥ 60 °C by 06:30: 2026-03-03 05:30, <b>planned 75 °C<\/b>, below 90 °C<\/div>/,
    );
    expect(renderPlan(v.plan!, { explain: false, timezone: 'UTC' })).toContain(', NOT MET)');
    // (Read once: before its first reading a device's unknown values are not published at all.)
    const none = viewWith([], null, undefined, {
      readings: new Map([['tank', { atMs: now, temperatureC: 50, errors: [] }]]),
      decision: { setpoints: [] },
    } as unknown as ControlSnapshot);
    expect(none.devices[0]!.nextComfort).toBeUndefined();
    const t = haTopics('ws');
    expect(stateMessages(t, none).get(t.deviceField('tank', 'next_comfort'))).toBe('None');
  });
});

describe("the month's bill in the view", () => {
  const bill: BillSummary = {
    month: '2026-03',
    monthStartMs: Date.UTC(2026, 1, 28, 23),
    currency: 'NOK',
    kwh: 120.5,
    energy: 110,
    gridFee: 50,
    tax: 12,
    subsidy: 8,
    vat: 41 + 50,
    delta: -6,
    total: 110 + 50 + 12 - 8 + 41 - 6 + 250,
    hoursPriced: 40,
    hoursUnpriced: 1,
    capacity: { measureKw: 4.25, stepUpToKw: 5, marginKw: 0.75, fee: 200, vat: 50 },
    baseline: { total: 612.5, capacityFee: 500, hoursFromPlan: 38, hoursWithoutPlan: 2 },
    savings: 612.5 - 449,
    devices: [{ id: 'tank', kwh: 30, total: 45.5 }],
  };

  it('the page, MQTT and the view show the same bill, the capacity fee with its VAT', () => {
    const v = viewWith([], null, bill);
    expect(v.bill).toMatchObject({ total: 449, incentive: -6, hoursUnpriced: 1, capacity: { measureKw: 4.25, marginKw: 0.75, fee: 250 } });
    const html = renderStatusPage(v, { timezone: 'UTC' });
    expect(html).toContain('2026-03 so far: 449.00 NOK for 120.5 kWh (40 hours priced, 1 without a known price left out)');
    expect(html).toContain('capacity: 4.25 kW (step up to 5.0 kW, 0.75 kW to spare), 250.00 NOK incl. VAT');
    expect(html).toContain('tank: 45.50 NOK for 30.0 kWh');
    expect(html).toContain(
      'saved 163.50 NOK against no shifting, which would have cost 612.50 NOK (capacity 500.00 NOK); 2 hours no plan covered count as they were (no savings claimed)',
    );
    const t = haTopics('ws');
    expect(JSON.parse(stateMessages(t, v).get(t.bill)!)).toMatchObject({
      month: '2026-03',
      month_start: '2026-02-28T23:00:00.000Z',
      total: 449,
      incentive: -6,
      hours_unpriced: 1,
      capacity: { measure_kw: 4.25, step_up_to_kw: 5, margin_kw: 0.75, fee: 250 },
      devices: [{ id: 'tank', kwh: 30, total: 45.5 }],
      savings: 163.5,
      baseline: { total: 612.5, capacity_fee: 500, hours_from_plan: 38, hours_without_plan: 2 },
    });
  });

  it('before any hour is priced: no bill topic, and the page says why', () => {
    const v = viewWith([]);
    expect(v.bill).toBeNull();
    const t = haTopics('ws');
    expect(stateMessages(t, v).has(t.bill)).toBe(false);
    expect(renderStatusPage(v, { timezone: 'UTC' })).toContain('No metered hour priced yet this month');
  });
});

describe('the price now in the views', () => {
  it('shows the day-ahead spot apart from the fees, tax, VAT and delta the total carries', () => {
    const from = Date.UTC(2026, 2, 2, 17);
    const slots = buildPriceSeries({
      slotMinutes: 60,
      fromMs: from,
      toMs: from + 24 * hour,
      timezone: 'Europe/Oslo',
      currency: 'NOK',
      deltas: [],
      fees: { gridFeePerKwh: 0.3, taxPerKwh: 0.1, vatRate: 1.25 },
      spot: {
        actual: {
          units: { currency: 'NOK', energyUnit: 'kWh' },
          resolutionMinutes: 60,
          points: Array.from({ length: 24 }, (_, i) => ({ startMs: from + i * hour, price: 0.185 })),
        },
      },
    });
    const plan = makePlan({ slots, timezone: 'Europe/Oslo', currency: 'NOK', location: { limitKw: 17, baseLoadKw: 0 } }, now);
    const v = viewWith([], plan);
    expect(v.price?.spotPerKwh).toBeCloseTo(0.185, 9);
    expect(v.price?.totalPerKwh).toBeCloseTo((0.185 + 0.3 + 0.1) * 1.25, 9);
    const t = haTopics('ws');
    expect(JSON.parse(stateMessages(t, v).get(t.price)!)).toMatchObject({ spot: 0.185, total: 0.73125, delta: 0 });
  });
});

describe('the base load forecast in the terminal plan', () => {
  it('says the plan used a learned forecast, and how it was learned, or the smoothed number', () => {
    const from = Math.floor(now / hour) * hour;
    const slots = buildPriceSeries({
      slotMinutes: 60,
      fromMs: from,
      toMs: from + 6 * hour,
      timezone: 'Europe/Oslo',
      currency: 'NOK',
      deltas: [],
      fees: { gridFeePerKwh: 0, taxPerKwh: 0, vatRate: 1 },
      spot: {
        actual: {
          units: { currency: 'NOK', energyUnit: 'kWh' },
          resolutionMinutes: 60,
          points: Array.from({ length: 6 }, (_, i) => ({ startMs: from + i * hour, price: 1 })),
        },
      },
    });
    const plan = makePlan({ slots, timezone: 'Europe/Oslo', currency: 'NOK', location: { limitKw: 17, baseLoadKw: 0.5 } }, now);
    const note = 'learned from 1344 hours (per weekday)';
    const learned = viewWith([], { ...plan, baseLoad: { source: 'learned', note } });
    expect(learned.plan?.baseLoad).toBe(note);
    expect(renderPlan(learned.plan!, { explain: true, timezone: 'Europe/Oslo' })).toContain(`Base load: ${note}\n`);
    expect(renderPlan(viewWith([], plan).plan!, { explain: true, timezone: 'Europe/Oslo' })).toContain('Base load: the smoothed base load');
  });
});

describe('the command ranges in the views and Home Assistant', () => {
  it("offer the comfort floor wattshift accepts (the tank's floor to 5 K under its thermostat), not 5–85 °C", () => {
    const v = viewWith([]);
    // The tank's defaults: floor 50 °C, thermostat 75 °C.
    expect(v.devices[0]!.ranges).toEqual({ floorC: { min: 50, max: 70 } });
    const messages = discoveryMessages({
      baseTopic: 'ws',
      prefix: 'homeassistant',
      location: v.location,
      devices: v.devices,
      currency: 'NOK',
      swVersion: '0',
    });
    const payload = (key: string) => messages.find((m) => m.topic.endsWith(`/tank_${key}/config`))!.payload;
    expect(payload('floor')).toMatchObject({ min: 50, max: 70 });
    expect(payload('water_heater')).toMatchObject({ min_temp: 50, max_temp: 70 });
  });
});
