import { describe, expect, it } from 'vitest';
import { buildPlanReport, planReportFrom, planReportHours, planReportReason, type PlanReportPayload } from './plan-report.js';
import type { BindingConstraint, PlanSlot } from './types.js';

const h0 = Date.UTC(2026, 0, 10, 22);
const hour = 3_600_000;
const quarter = hour / 4;

/** A slot with a tank and a car planned, and the naive baseline's flexible energy. */
function slot(
  startMs: number,
  lengthMs: number,
  o: { tankKwh?: number; evKwh?: number; naiveKwh?: number; binding?: BindingConstraint[] } = {},
): PlanSlot {
  return {
    startMs,
    endMs: startMs + lengthMs,
    price: 1,
    spot: 1,
    delta: 0,
    source: 'actual',
    headroomKw: 10,
    tanks: { tank: { energyKwh: o.tankKwh ?? 0, powerKw: 0, on: (o.tankKwh ?? 0) > 0, endTempC: 60 } },
    evs: { garage: { energyKwh: o.evKwh ?? 0, powerKw: 0, on: (o.evKwh ?? 0) > 0, chargedKwh: 0 } },
    binding: o.binding ?? [],
    reason: '',
    ...(o.naiveKwh !== undefined ? { baselineKwh: o.naiveKwh } : {}),
  };
}

describe('planReportHours', () => {
  // Hand-worked: base load 0.5 kW over an hour is 0.5 kWh; baseline = 0.5 + the naive flexible
  // energy; flexibility = tank + car planned, 0 in a frozen slot.
  const cases: { name: string; slots: PlanSlot[]; nowMs: number; baseLoadKw: number; want: [number, number, number][] }[] = [
    {
      name: 'hourly slots: base load plus naive energy, and the planned tank and car',
      slots: [
        slot(h0, hour, { tankKwh: 2, evKwh: 0, naiveKwh: 3 }),
        slot(h0 + hour, hour, { tankKwh: 0, evKwh: 7.2, naiveKwh: 11 }),
        slot(h0 + 2 * hour, hour, { naiveKwh: 0 }),
      ],
      nowMs: h0 + 10 * 60_000,
      baseLoadKw: 0.5,
      want: [
        [h0, 3.5, 2],
        [h0 + hour, 11.5, 7.2],
        [h0 + 2 * hour, 0.5, 0],
      ],
    },
    {
      name: 'a frozen slot moves nothing; its naive energy still counts in the baseline',
      slots: [slot(h0, hour, { tankKwh: 2, naiveKwh: 2, binding: ['frozen'] }), slot(h0 + hour, hour, { tankKwh: 1.5, naiveKwh: 0 })],
      nowMs: h0,
      baseLoadKw: 1,
      want: [
        [h0, 3, 0],
        [h0 + hour, 1, 1.5],
      ],
    },
    {
      name: 'quarter-hour slots sum to their hour; an hour not covered whole is left out',
      slots: [
        slot(h0 + 2 * quarter, quarter, { tankKwh: 0.5, naiveKwh: 0.5 }),
        slot(h0 + 3 * quarter, quarter, { tankKwh: 0.5, naiveKwh: 0.5 }),
        ...[0, 1, 2, 3].map((q) => slot(h0 + hour + q * quarter, quarter, { evKwh: 1.1, naiveKwh: q === 0 ? 2.75 : 0 })),
      ],
      nowMs: h0 + 2 * quarter,
      baseLoadKw: 0.4,
      want: [[h0 + hour, 3.15, 4.4]],
    },
    {
      name: 'hours before the one that holds now are left out; a negative base load counts as none',
      slots: [slot(h0, hour, { naiveKwh: 1 }), slot(h0 + hour, hour, { naiveKwh: 0.25, tankKwh: 0.25 })],
      nowMs: h0 + hour + 1,
      baseLoadKw: -0.3,
      want: [[h0 + hour, 0.25, 0.25]],
    },
    {
      name: 'slots without a naive baseline (no flexible device) are the base load alone; watt-hour rounding',
      slots: [slot(h0, hour, { tankKwh: 1.23456 })],
      nowMs: h0,
      baseLoadKw: 0.33333,
      want: [[h0, 0.333, 1.235]],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(planReportHours({ slots: c.slots }, c.baseLoadKw, c.nowMs).map((h) => [h.hourStartMs, h.baselineKwh, h.flexibilityKwh])).toEqual(c.want);
    });
  }
});

describe('buildPlanReport', () => {
  it("states the hours as the API's LocationEnergyUsagePlan payload", () => {
    const payload = buildPlanReport({
      locationId: 'home-1',
      meterPointId: '707057500000000001',
      baseLoadKw: 0.5,
      nowMs: h0,
      plan: { slots: [slot(h0, hour, { tankKwh: 2, naiveKwh: 3 }), slot(h0 + hour, hour, { evKwh: 7.2, naiveKwh: 0 })] },
    });
    expect(payload).toEqual({
      payloadType: 'LocationEnergyUsagePlan',
      locationId: 'home-1',
      meterPointId: '707057500000000001',
      resolution: '01:00:00',
      baseline: [
        { timestamp: '2026-01-10T22:00:00.000Z', kiloWattHours: 3.5 },
        { timestamp: '2026-01-10T23:00:00.000Z', kiloWattHours: 0.5 },
      ],
      flexibility: [
        { timestamp: '2026-01-10T22:00:00.000Z', kiloWattHours: 2 },
        { timestamp: '2026-01-10T23:00:00.000Z', kiloWattHours: 7.2 },
      ],
    });
  });

  it('is null when the plan covers no whole hour from now', () => {
    expect(
      buildPlanReport({ locationId: 'l', meterPointId: 'm', baseLoadKw: 0.5, nowMs: h0 + 2 * hour, plan: { slots: [slot(h0, hour)] } }),
    ).toBeNull();
  });
});

describe('planReportReason', () => {
  const payload = (hours: [number, number, number][], locationId = 'home-1'): PlanReportPayload => ({
    payloadType: 'LocationEnergyUsagePlan',
    locationId,
    meterPointId: 'mp',
    resolution: '01:00:00',
    baseline: hours.map(([ms, b]) => ({ timestamp: new Date(ms).toISOString(), kiloWattHours: b })),
    flexibility: hours.map(([ms, , f]) => ({ timestamp: new Date(ms).toISOString(), kiloWattHours: f })),
  });
  const sent = payload([
    [h0, 1, 2],
    [h0 + hour, 1, 2],
    [h0 + 2 * hour, 1, 0],
  ]);
  const last = { sentMs: h0, payload: sent };
  // Differences are summed over both curves in the hours both reports cover from the current hour.
  const cases: { name: string; last: typeof last | null; next: PlanReportPayload; nowMs: number; want: ReturnType<typeof planReportReason> }[] = [
    { name: 'nothing sent yet', last: null, next: sent, nowMs: h0, want: 'first' },
    { name: 'another location', last, next: payload([[h0, 1, 2]], 'home-2'), nowMs: h0, want: 'first' },
    { name: 'the same plan', last, next: sent, nowMs: h0 + hour, want: null },
    {
      name: '0.6 + 0.4 = 1.0 kWh moved: not more than the threshold',
      last,
      next: payload([
        [h0, 1, 1.4],
        [h0 + hour, 1, 2],
        [h0 + 2 * hour, 1, 0.4],
      ]),
      nowMs: h0,
      want: null,
    },
    {
      name: '0.6 + 0.5 = 1.1 kWh moved: changed',
      last,
      next: payload([
        [h0, 1, 1.4],
        [h0 + hour, 1, 2],
        [h0 + 2 * hour, 1, 0.5],
      ]),
      nowMs: h0,
      want: 'changed',
    },
    {
      name: 'baseline and flexibility both count: 0.6 + 0.6',
      last,
      next: payload([
        [h0 + hour, 1.6, 1.4],
        [h0 + 2 * hour, 1, 0],
      ]),
      nowMs: h0 + hour,
      want: 'changed',
    },
    {
      name: 'a past hour that differs does not count',
      last,
      next: payload([
        [h0, 5, 5],
        [h0 + hour, 1, 2],
        [h0 + 2 * hour, 1, 0],
      ]),
      nowMs: h0 + hour,
      want: null,
    },
    {
      name: 'reaching 11 hours further is not enough',
      last,
      next: payload([
        [h0 + hour, 1, 2],
        [h0 + 13 * hour, 0.5, 0],
      ]),
      nowMs: h0 + hour,
      want: null,
    },
    {
      name: 'reaching 12 hours further: extended',
      last,
      next: payload([
        [h0 + hour, 1, 2],
        [h0 + 14 * hour, 0.5, 0],
      ]),
      nowMs: h0 + hour,
      want: 'extended',
    },
    { name: 'unchanged 23:59 later', last, next: payload([[h0 + 2 * hour, 1, 0]]), nowMs: h0 + 24 * hour - 60_000, want: null },
    { name: 'unchanged 24 hours later: daily', last, next: payload([[h0 + 2 * hour, 1, 0]]), nowMs: h0 + 24 * hour, want: 'daily' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(planReportReason(c.last, c.next, c.nowMs)).toBe(c.want);
    });
  }
});

describe('planReportFrom', () => {
  const sent: PlanReportPayload = {
    payloadType: 'LocationEnergyUsagePlan',
    locationId: 'home-1',
    meterPointId: 'mp',
    resolution: '01:00:00',
    baseline: [0, 1, 2].map((i) => ({ timestamp: new Date(h0 + i * hour).toISOString(), kiloWattHours: 1 + i })),
    flexibility: [0, 1, 2].map((i) => ({ timestamp: new Date(h0 + i * hour).toISOString(), kiloWattHours: i })),
  };
  it('keeps the hour under way and those after it', () => {
    expect(planReportFrom(sent, h0 + hour + 59 * 60_000)).toEqual({
      ...sent,
      baseline: sent.baseline.slice(1),
      flexibility: sent.flexibility.slice(1),
    });
    expect(planReportFrom(sent, h0)).toEqual(sent);
  });
  it('is null once every hour has ended', () => {
    expect(planReportFrom(sent, h0 + 3 * hour)).toBeNull();
  });
});
