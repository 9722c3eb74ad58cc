/**
 * Usage reports and LPC acknowledgements, built from stored events and metered hours. Pure: the
 * caller passes the event's shape, the hourly energy it metered and the time.
 */

export const hourMs = 3_600_000;
/** The only report resolution the API accepts today (.NET TimeSpan text). */
export const reportResolution = '01:00:00';

export type HourQuality = 'measured' | 'estimated' | 'partial' | 'gap';

export interface MeteredHour {
  hourStartMs: number;
  kwh: number;
  quality: HourQuality;
}

/** What a report is about: a resource (EnergyUsage) or a behind-the-meter location (LocationEnergyUsage). */
export type UsageTarget =
  | { kind: 'resource'; resourceId: string; locationId: string; meterPointId: string | null }
  | { kind: 'location'; locationId: string; meterPointId: string };

export interface UsagePoint {
  timestamp: string;
  kiloWattHours: number;
}

export type UsagePayload =
  | {
      payloadType: 'EnergyUsage';
      resourceId: string;
      locationId: string;
      meterPointId: string | null;
      resolution: string;
      points: UsagePoint[];
    }
  | {
      payloadType: 'LocationEnergyUsage';
      locationId: string;
      meterPointId: string;
      resolution: string;
      points: UsagePoint[];
    };

export interface UsageReport {
  eventId: string;
  payloads: UsagePayload[];
}

export interface UsageReportResult {
  /** Null when no target consumed anything in the event's hours: there is nothing to report. */
  report: UsageReport | null;
  /** Event hours (per target) that could not be metered; they are left out, never invented. */
  gaps: { subject: string; hourStartMs: number }[];
}

/** The key hourly energy is stored under for a target. */
export function subjectOf(target: UsageTarget): string {
  return target.kind === 'resource' ? target.resourceId : `location:${target.locationId}`;
}

/** API timestamps: UTC, start of hour, milliseconds and `Z`. */
export function apiTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Builds the usage report of one event: one payload per target, one point per event hour with
 * consumption, at the event's own hour timestamps. Gap hours are left out and listed.
 */
export function buildUsageReport(input: {
  eventId: string;
  /** Start of each hour the event covers (its points), UTC ms. */
  eventHoursMs: readonly number[];
  targets: readonly UsageTarget[];
  /** Metered hours per subject (see `subjectOf`). */
  metered: ReadonlyMap<string, readonly MeteredHour[]>;
}): UsageReportResult {
  const gaps: UsageReportResult['gaps'] = [];
  const payloads: UsagePayload[] = [];
  const hours = [...new Set(input.eventHoursMs.filter((h) => h % hourMs === 0))].sort((a, b) => a - b);
  for (const target of input.targets) {
    const subject = subjectOf(target);
    const byHour = new Map((input.metered.get(subject) ?? []).map((m) => [m.hourStartMs, m]));
    const points: UsagePoint[] = [];
    for (const hour of hours) {
      const m = byHour.get(hour);
      if (!m || m.quality === 'gap' || !Number.isFinite(m.kwh) || Math.abs(m.kwh) > 1e9) {
        gaps.push({ subject, hourStartMs: hour });
        continue;
      }
      const kwh = roundKwh(m.kwh);
      if (kwh > 0) points.push({ timestamp: apiTimestamp(hour), kiloWattHours: kwh });
    }
    if (points.length === 0) continue;
    payloads.push(
      target.kind === 'resource'
        ? {
            payloadType: 'EnergyUsage',
            resourceId: target.resourceId,
            locationId: target.locationId,
            meterPointId: target.meterPointId,
            resolution: reportResolution,
            points,
          }
        : {
            payloadType: 'LocationEnergyUsage',
            locationId: target.locationId,
            meterPointId: target.meterPointId,
            resolution: reportResolution,
            points,
          },
    );
  }
  return { report: payloads.length > 0 ? { eventId: input.eventId, payloads } : null, gaps };
}

/** Watt-hour precision: finer digits are meter noise and only bloat the report. */
function roundKwh(kwh: number): number {
  return Math.round(kwh * 1000) / 1000;
}

/**
 * A report can be built once every event hour has ended and the metering of its last hour has
 * had `graceMs` to land (the metering job closes an hour on the first sample after it).
 */
export function reportDueAtMs(eventHoursMs: readonly number[], graceMs: number): number {
  const last = Math.max(...eventHoursMs);
  return last + hourMs + graceMs;
}

export type LpcTarget =
  { kind: 'resource'; resourceId: string; locationId: string; meterPointId: string } | { kind: 'location'; locationId: string; meterPointId: string };

export type LpcAckPayload =
  | {
      payloadType: 'ResourceLPCAcknowledgement';
      acknowledgedTargets: { meterPointId: string; locationId: string; resourceId: string }[];
      declinedTargets: { meterPointId: string; locationId: string; resourceId: string }[];
    }
  | {
      payloadType: 'LocationLPCAcknowledgement';
      acknowledgedTargets: { meterPointId: string; locationId: string }[];
      declinedTargets: { meterPointId: string; locationId: string }[];
    };

/**
 * The acknowledgement of an LPC event: targets that can be held fully are acknowledged, the
 * others declined (the API wants a decline rather than a broken promise).
 */
export function buildLpcAck(
  eventId: string,
  targets: readonly LpcTarget[],
  canComply: (target: LpcTarget) => boolean,
): { eventId: string; payloads: LpcAckPayload[] } {
  const resource = targets.filter((t) => t.kind === 'resource');
  const location = targets.filter((t) => t.kind === 'location');
  const payloads: LpcAckPayload[] = [];
  if (resource.length > 0) {
    const strip = (t: LpcTarget & { kind: 'resource' }) => ({
      meterPointId: t.meterPointId,
      locationId: t.locationId,
      resourceId: t.resourceId,
    });
    payloads.push({
      payloadType: 'ResourceLPCAcknowledgement',
      acknowledgedTargets: resource.filter((t) => canComply(t)).map(strip),
      declinedTargets: resource.filter((t) => !canComply(t)).map(strip),
    });
  }
  if (location.length > 0) {
    const strip = (t: LpcTarget) => ({ meterPointId: t.meterPointId, locationId: t.locationId });
    payloads.push({
      payloadType: 'LocationLPCAcknowledgement',
      acknowledgedTargets: location.filter((t) => canComply(t)).map(strip),
      declinedTargets: location.filter((t) => !canComply(t)).map(strip),
    });
  }
  return { eventId, payloads };
}
