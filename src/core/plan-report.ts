/**
 * The location's energy usage plan report (`LocationEnergyUsagePlan`): per UTC hour, what the home
 * would draw without wattshift (`baseline`) and how much of the hour's energy wattshift can move to
 * another hour (`flexibility`); see docs/flexibility.md. Pure: the plan, the base load and the time
 * are arguments.
 */
import { apiTimestamp, hourMs, reportResolution, type UsagePoint } from './reports.js';
import type { Plan, PlanSlot } from './types.js';

export interface PlanReportPayload {
  payloadType: 'LocationEnergyUsagePlan';
  locationId: string;
  meterPointId: string;
  resolution: string;
  baseline: UsagePoint[];
  flexibility: UsagePoint[];
}

/** One hour of the report, in numbers (kWh), before it becomes API points. */
export interface PlanReportHour {
  hourStartMs: number;
  baselineKwh: number;
  flexibilityKwh: number;
}

/**
 * The hours of a plan as the report states them: every whole UTC hour the plan's slots cover,
 * from the hour that holds `nowMs` on. Baseline: the base load over the hour plus the flexible
 * energy the naive baseline takes in it (the slots' `baselineKwh`: tank on its thermostat, car at
 * full power from arrival), the same baseline the bill's savings are measured against.
 * Flexibility: the tanks' and cars' energy the plan puts in the hour, except in slots kept from
 * the previous plan (`frozen`: already promised to the devices).
 */
export function planReportHours(plan: Pick<Plan, 'slots'>, baseLoadKw: number, nowMs: number): PlanReportHour[] {
  const fromMs = Math.floor(nowMs / hourMs) * hourMs;
  const byHour = new Map<number, { coveredMs: number; naiveKwh: number; flexibleKwh: number }>();
  for (const slot of plan.slots) {
    const hourStartMs = Math.floor(slot.startMs / hourMs) * hourMs;
    if (hourStartMs < fromMs || slot.endMs > hourStartMs + hourMs) continue;
    const h = byHour.get(hourStartMs) ?? { coveredMs: 0, naiveKwh: 0, flexibleKwh: 0 };
    h.coveredMs += slot.endMs - slot.startMs;
    h.naiveKwh += slot.baselineKwh ?? 0;
    h.flexibleKwh += slot.binding.includes('frozen') ? 0 : plannedFlexibleKwh(slot);
    byHour.set(hourStartMs, h);
  }
  const base = Math.max(0, baseLoadKw);
  return (
    [...byHour.entries()]
      // A plan made inside an hour of quarter-hour slots does not cover that hour whole: left out.
      .filter(([, h]) => h.coveredMs === hourMs)
      .sort(([a], [b]) => a - b)
      .map(([hourStartMs, h]) => ({
        hourStartMs,
        baselineKwh: roundKwh(base + h.naiveKwh),
        flexibilityKwh: roundKwh(h.flexibleKwh),
      }))
  );
}

function plannedFlexibleKwh(slot: PlanSlot): number {
  const devices = [...Object.values(slot.tanks ?? {}), ...Object.values(slot.evs ?? {})];
  return devices.reduce((sum, d) => sum + Math.max(0, d.energyKwh), 0);
}

/** Watt-hour precision, as the usage reports. */
function roundKwh(kwh: number): number {
  return Math.round(kwh * 1000) / 1000;
}

/** The report's payload for a location; null when the plan covers no whole hour from now. */
export function buildPlanReport(input: {
  locationId: string;
  meterPointId: string;
  plan: Pick<Plan, 'slots'>;
  baseLoadKw: number;
  nowMs: number;
}): PlanReportPayload | null {
  const hours = planReportHours(input.plan, input.baseLoadKw, input.nowMs);
  if (hours.length === 0) return null;
  return {
    payloadType: 'LocationEnergyUsagePlan',
    locationId: input.locationId,
    meterPointId: input.meterPointId,
    resolution: reportResolution,
    baseline: hours.map((h) => ({ timestamp: apiTimestamp(h.hourStartMs), kiloWattHours: h.baselineKwh })),
    flexibility: hours.map((h) => ({ timestamp: apiTimestamp(h.hourStartMs), kiloWattHours: h.flexibilityKwh })),
  };
}

/** When a new plan report is sent (docs/flexibility.md). */
export const planReportRules = {
  /** The hours both reports cover differ by more than this, summed over baseline and flexibility, kWh. */
  changeKwh: 1,
  /** The new report reaches at least this much further than the last one sent (new day-ahead prices). */
  extendMs: 12 * hourMs,
  /** The last one sent is at least this old: one a day at least. */
  maxAgeMs: 24 * hourMs,
} as const;

export type PlanReportReason = 'first' | 'changed' | 'extended' | 'daily';

/**
 * Why `next` should be sent, given the last report sent and when; null when it need not be. The
 * hours compared are those both cover from the hour that holds `nowMs` on (hours already past
 * cannot change).
 */
export function planReportReason(
  last: { sentMs: number; payload: PlanReportPayload } | null,
  next: PlanReportPayload,
  nowMs: number,
  rules: { changeKwh: number; extendMs: number; maxAgeMs: number } = planReportRules,
): PlanReportReason | null {
  if (last === null || last.payload.locationId !== next.locationId || last.payload.meterPointId !== next.meterPointId) return 'first';
  const fromMs = Math.floor(nowMs / hourMs) * hourMs;
  const before = new Map<number, number>();
  const key = (curve: 'b' | 'f', ms: number): number => ms * 2 + (curve === 'b' ? 0 : 1);
  for (const p of last.payload.baseline) before.set(key('b', Date.parse(p.timestamp)), p.kiloWattHours);
  for (const p of last.payload.flexibility) before.set(key('f', Date.parse(p.timestamp)), p.kiloWattHours);
  let difference = 0;
  const compare = (curve: 'b' | 'f', points: readonly UsagePoint[]): void => {
    for (const p of points) {
      const ms = Date.parse(p.timestamp);
      const old = before.get(key(curve, ms));
      if (ms >= fromMs && old !== undefined) difference += Math.abs(p.kiloWattHours - old);
    }
  };
  compare('b', next.baseline);
  compare('f', next.flexibility);
  if (difference > rules.changeKwh + 1e-9) return 'changed';
  if (lastHourMs(next) - lastHourMs(last.payload) >= rules.extendMs) return 'extended';
  if (nowMs - last.sentMs >= rules.maxAgeMs) return 'daily';
  return null;
}

function lastHourMs(payload: PlanReportPayload): number {
  return Math.max(...payload.baseline.map((p) => Date.parse(p.timestamp)));
}

/**
 * The report as it should go out at `nowMs`: hours that have ended are dropped (a report waiting
 * for the API to come back is not sent with a past it no longer plans). Null when none is left.
 */
export function planReportFrom(payload: PlanReportPayload, nowMs: number): PlanReportPayload | null {
  const fromMs = Math.floor(nowMs / hourMs) * hourMs;
  const keep = (points: readonly UsagePoint[]): UsagePoint[] => points.filter((p) => Date.parse(p.timestamp) >= fromMs);
  const baseline = keep(payload.baseline);
  return baseline.length === 0 ? null : { ...payload, baseline, flexibility: keep(payload.flexibility) };
}
