import { randomUUID } from 'node:crypto';
import { canonicalReportPayloadType, energyUsagePoints, type ReportRequest } from '../spark/wire.js';
import type { SandboxEngine } from './engine.js';
import { curveCurrency } from './price-curves.js';
import { eurRates, isPriceArea, type CurrencyCode } from './spot-prices.js';
import type { AcceptedPayload, AcceptedPlanReport, AcceptedReport, EventRec, PartnerState } from './state.js';
import { HOUR_MS, localDateString, localDayStartMs, localParts, OSLO } from '../core/zoned-time.js';

/**
 * Usage report validation and compensation. A report is accepted whole or not at all; every
 * rejection is a 400 with a JSON string naming the reason (POST /reports declares 200 and 400
 * only, so problems such as an unknown event are 400, not 404).
 */

export class ReportRejected extends Error {}

/** Which payload types may answer which event payload type. */
const allowed: Record<string, string[]> = {
  PriceCurve: ['EnergyUsage', 'LocationEnergyUsage'],
  ResourceLPC: ['EnergyUsage', 'ResourceLPCAcknowledgement'],
  LocationLPC: ['LocationEnergyUsage', 'LocationLPCAcknowledgement', 'LocationEnergyUsagePlan'],
  LPCReservation: ['LocationEnergyUsagePlan', 'LocationEnergyUsage'],
};

interface EventTargets {
  resources: Map<string, { locationId: string; meterPointId?: string }>;
  locations: Map<string, { meterPointId?: string }>;
  resolutionMs: number;
}

function targetsOf(event: EventRec): EventTargets {
  const resources = new Map<string, { locationId: string; meterPointId?: string }>();
  const locations = new Map<string, { meterPointId?: string }>();
  const targets = (event.payload.targets ?? []) as Record<string, string | undefined>[];
  let resolution = '01:00:00';
  for (const t of targets) {
    if (t.resourceId && t.locationId)
      resources.set(t.resourceId, { locationId: t.locationId, ...(t.meterPointId ? { meterPointId: t.meterPointId } : {}) });
    if (t.locationId) locations.set(t.locationId, t.meterPointId ? { meterPointId: t.meterPointId } : {});
    if (t.resolution) resolution = t.resolution;
  }
  const delta = event.payload.priceCurveDelta as { resolution?: string } | undefined;
  if (delta?.resolution) resolution = delta.resolution;
  return { resources, locations, resolutionMs: timeSpanMs(resolution) };
}

/** .NET TimeSpan text (`[d.]hh:mm:ss[.fffffff]`) to milliseconds; NaN when malformed. */
export function timeSpanMs(text: string): number {
  const m = /^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?$/.exec(text);
  if (!m) return Number.NaN;
  const [, d, h, min, s, frac] = m;
  return ((Number(d ?? 0) * 24 + Number(h)) * 60 + Number(min)) * 60_000 + Number(s) * 1000 + Math.round(Number(`0.${frac ?? '0'}`) * 1000);
}

export function validateReport(engine: SandboxEngine, partner: PartnerState, body: ReportRequest): AcceptedReport {
  const event = partner.events.find((e) => e.id === body.eventId);
  if (!event) throw new ReportRejected(`Event '${body.eventId}' does not exist or does not belong to this partner`);
  const eventType = String(event.payload.payloadType);
  const targets = targetsOf(event);
  const accepted: AcceptedPayload[] = [];
  for (const [i, payload] of body.payloads.entries()) {
    const where = `payloads[${i}]`;
    const type = canonicalReportPayloadType(payload.payloadType);
    if (!(allowed[eventType] ?? []).includes(type))
      throw new ReportRejected(`${where}: payload type ${payload.payloadType} does not answer a ${eventType} event`);
    let resourceId: string | null = null;
    let locationId: string | null = null;
    let meterPointId: string | null = null;
    let points: { timestamp: string; kiloWattHours: number }[] = [];
    let resolution: string | undefined;
    if (payload.payloadType === 'EnergyUsage') {
      const t = targets.resources.get(payload.resourceId);
      if (!t) throw new ReportRejected(`${where}: resource '${payload.resourceId}' is not a target of event ${event.id}`);
      if (payload.locationId && payload.locationId !== t.locationId)
        throw new ReportRejected(`${where}: resource '${payload.resourceId}' is targeted at location '${t.locationId}', not '${payload.locationId}'`);
      if (payload.points && payload.curvePoints && JSON.stringify(payload.points) !== JSON.stringify(payload.curvePoints)) {
        throw new ReportRejected(`${where}: points and the deprecated curvePoints differ; send only points`);
      }
      resourceId = payload.resourceId;
      locationId = t.locationId;
      meterPointId = payload.meterPointId ?? null;
      points = energyUsagePoints(payload);
      resolution = payload.resolution;
    } else if (payload.payloadType === 'LocationEnergyUsage' || payload.payloadType === 'LocationEnergyUsagePlan') {
      const t = targets.locations.get(payload.locationId);
      if (!t) throw new ReportRejected(`${where}: location '${payload.locationId}' is not a target of event ${event.id}`);
      if (t.meterPointId && t.meterPointId !== payload.meterPointId)
        throw new ReportRejected(`${where}: meter point '${payload.meterPointId}' is not the target's meter point`);
      locationId = payload.locationId;
      meterPointId = payload.meterPointId;
      points = payload.payloadType === 'LocationEnergyUsage' ? payload.points : [...payload.baseline, ...payload.flexibility];
      resolution = payload.resolution;
    } else {
      const all = [...(payload.acknowledgedTargets ?? []), ...(payload.declinedTargets ?? [])];
      if (all.length === 0) throw new ReportRejected(`${where}: an acknowledgement names no targets`);
      for (const a of all as { locationId: string; resourceId?: string }[]) {
        const ok =
          a.resourceId !== undefined ? targets.resources.get(a.resourceId)?.locationId === a.locationId : targets.locations.has(a.locationId);
        if (!ok)
          throw new ReportRejected(
            `${where}: ${a.resourceId !== undefined ? `resource '${a.resourceId}'` : `location '${a.locationId}'`} is not a target of event ${event.id}`,
          );
      }
    }
    if (resolution !== undefined && timeSpanMs(resolution) !== targets.resolutionMs)
      throw new ReportRejected(`${where}: resolution ${resolution} differs from the event's`);
    const seen = new Set<number>();
    const normalised = points.map((pt, j) => {
      const t = Date.parse(pt.timestamp);
      if (t % HOUR_MS !== 0) throw new ReportRejected(`${where}.points[${j}]: timestamp ${pt.timestamp} is not on the hour`);
      if ((t - event.coverFromMs) % targets.resolutionMs !== 0)
        throw new ReportRejected(`${where}.points[${j}]: timestamp is not on the event's resolution grid`);
      if (t < event.coverFromMs || t >= event.coverToMs)
        throw new ReportRejected(`${where}.points[${j}]: timestamp ${pt.timestamp} is outside the event`);
      if (seen.has(t)) throw new ReportRejected(`${where}.points[${j}]: timestamp ${pt.timestamp} appears twice`);
      if (!Number.isFinite(pt.kiloWattHours) || pt.kiloWattHours < 0)
        throw new ReportRejected(`${where}.points[${j}]: kiloWattHours must be a number of at least 0`);
      seen.add(t);
      return { timestampMs: t, kiloWattHours: pt.kiloWattHours };
    });
    if (type.endsWith('EnergyUsage') && normalised.length === 0) throw new ReportRejected(`${where}: a usage payload needs at least one point`);
    accepted.push({ payloadType: type, resourceId, locationId, meterPointId, points: normalised, raw: payload });
  }
  // Duplicates: the daemon relies on never double-reporting, so a second usage report for the
  // same event and target is refused. 400, not 409: POST /reports declares only 200 and 400,
  // and the OpenAPI document wins where it speaks. The message names the earlier report.
  for (const a of accepted.filter((x) => x.payloadType.endsWith('EnergyUsage'))) {
    const key = (x: AcceptedPayload): string => `${x.payloadType}|${x.resourceId ?? ''}|${x.locationId ?? ''}`;
    if (accepted.filter((x) => key(x) === key(a)).length > 1)
      throw new ReportRejected(`duplicate: the report names target ${a.resourceId ?? a.locationId} twice`);
    const earlier = partner.reports.find((r) => r.eventId === event.id && r.payloads.some((x) => key(x) === key(a)));
    if (earlier)
      throw new ReportRejected(
        `duplicate: a ${a.payloadType} report for ${a.resourceId ? `resource '${a.resourceId}'` : `location '${a.locationId}'`} of event ${event.id} was already accepted (report ${earlier.id})`,
      );
  }
  return { id: randomUUID(), eventId: event.id, createdAtMs: engine.clock.nowMs(), payloads: accepted };
}

/**
 * A report without an event: only location energy usage plans, which a home sends when its plan
 * changes. Each names a location of the partner and one of its meter point ids (when it has any),
 * has the same hours in `baseline` and `flexibility`, each on the hour, on its resolution, at
 * most once, with energy of at least 0, and none before the previous hour (a report sent as an
 * hour ends may still hold it).
 */
export function validatePlanReport(engine: SandboxEngine, partner: PartnerState, body: ReportRequest): AcceptedPlanReport {
  const accepted: AcceptedPayload[] = [];
  const currentHourMs = Math.floor(engine.clock.nowMs() / HOUR_MS) * HOUR_MS;
  for (const [i, payload] of body.payloads.entries()) {
    const where = `payloads[${i}]`;
    if (payload.payloadType !== 'LocationEnergyUsagePlan')
      throw new ReportRejected(`${where}: a ${payload.payloadType} report must name the event it answers (eventId)`);
    const location = partner.locations.get(payload.locationId);
    if (!location) throw new ReportRejected(`${where}: location '${payload.locationId}' does not exist or does not belong to this partner`);
    if (location.meterPointIds.length > 0 && !location.meterPointIds.includes(payload.meterPointId)) {
      throw new ReportRejected(`${where}: meter point '${payload.meterPointId}' is not a meter point of location '${payload.locationId}'`);
    }
    if (accepted.some((a) => a.locationId === payload.locationId))
      throw new ReportRejected(`${where}: the report names location '${payload.locationId}' twice`);
    const resolutionMs = timeSpanMs(payload.resolution);
    if (!(resolutionMs >= HOUR_MS) || resolutionMs % HOUR_MS !== 0)
      throw new ReportRejected(`${where}: resolution ${payload.resolution} is not a whole number of hours`);
    const curve = (name: 'baseline' | 'flexibility'): { timestampMs: number; kiloWattHours: number }[] => {
      const seen = new Set<number>();
      return payload[name].map((pt, j) => {
        const t = Date.parse(pt.timestamp);
        if (!Number.isFinite(t) || t % resolutionMs !== 0)
          throw new ReportRejected(`${where}.${name}[${j}]: timestamp ${pt.timestamp} is not on the report's resolution`);
        if (t < currentHourMs - HOUR_MS) throw new ReportRejected(`${where}.${name}[${j}]: timestamp ${pt.timestamp} is in the past`);
        if (seen.has(t)) throw new ReportRejected(`${where}.${name}[${j}]: timestamp ${pt.timestamp} appears twice`);
        if (!Number.isFinite(pt.kiloWattHours) || pt.kiloWattHours < 0)
          throw new ReportRejected(`${where}.${name}[${j}]: kiloWattHours must be a number of at least 0`);
        seen.add(t);
        return { timestampMs: t, kiloWattHours: pt.kiloWattHours };
      });
    };
    const baseline = curve('baseline');
    const flexibility = curve('flexibility');
    if (baseline.length === 0) throw new ReportRejected(`${where}: a plan needs at least one hour`);
    const hours = (c: { timestampMs: number }[]): string =>
      c
        .map((x) => x.timestampMs)
        .sort((a, b) => a - b)
        .join(',');
    if (hours(baseline) !== hours(flexibility)) throw new ReportRejected(`${where}: baseline and flexibility must cover the same hours`);
    accepted.push({
      payloadType: payload.payloadType,
      resourceId: null,
      locationId: payload.locationId,
      meterPointId: payload.meterPointId,
      points: baseline,
      raw: payload,
    });
  }
  return { id: randomUUID(), createdAtMs: engine.clock.nowMs(), payloads: accepted };
}

export interface LocationCompensationView {
  locationId: string;
  meterPointIds: string[];
  activeAmount: number;
  blockedAmount: number;
  currency: CurrencyCode;
  problems: { problemType: 'MissingMpidOnLocation'; message: string }[];
}

/**
 * Compensation of the current month (Europe/Oslo): for every accepted usage point of the user's
 * locations inside this month, kWh × (−delta of that hour), so consumption in encouraged hours
 * earns and consumption in discouraged hours costs. Hours without an incentive earn nothing.
 * A location without a meter point id has its amount blocked.
 */
export function compensation(
  engine: SandboxEngine,
  partner: PartnerState,
  userId: string,
): { period: { from: string; to: string }; locations: LocationCompensationView[] } {
  const now = engine.clock.nowMs();
  const p = localParts(now, OSLO);
  const monthStart = localDayStartMs(now, OSLO, 1 - p.day);
  const nextMonthStart = localDayStartMs(monthStart + 40 * 24 * HOUR_MS, OSLO, 1 - localParts(monthStart + 40 * 24 * HOUR_MS, OSLO).day);
  const lastDay = localDateString(nextMonthStart - HOUR_MS, OSLO);
  const out: LocationCompensationView[] = [];
  for (const loc of partner.locationsOf(userId)) {
    let eur = 0;
    let area: string | undefined;
    for (const report of partner.reports) {
      const event = partner.events.find((e) => e.id === report.eventId);
      if (!event || event.payload.payloadType !== 'PriceCurve') continue;
      const delta = event.payload.priceCurveDelta as
        { points?: { price: number; timestamp: string }[]; currency?: string; energyUnit?: string } | undefined;
      const prices = new Map((delta?.points ?? []).map((pt) => [Date.parse(pt.timestamp), pt.price]));
      const rate = eurRates[(delta?.currency ?? 'EUR') as CurrencyCode] ?? 1;
      const perKwh = delta?.energyUnit === 'MWh' ? 1 / 1000 : 1;
      area = String(event.payload.priceArea);
      for (const pl of report.payloads) {
        if (pl.locationId !== loc.locationId || !pl.payloadType.endsWith('EnergyUsage')) continue;
        for (const pt of pl.points) {
          if (pt.timestampMs < monthStart || pt.timestampMs >= nextMonthStart) continue;
          eur += (pt.kiloWattHours * -(prices.get(pt.timestampMs) ?? 0) * perKwh) / rate;
        }
      }
    }
    const currency: CurrencyCode = area && isPriceArea(area) ? curveCurrency(area, now, engine.options.localCurrencyFromMs) : 'EUR';
    const amount = Math.round(Math.max(0, eur) * eurRates[currency] * 100) / 100;
    const blocked = loc.meterPointIds.length === 0;
    out.push({
      locationId: loc.locationId,
      meterPointIds: [...loc.meterPointIds],
      activeAmount: blocked ? 0 : amount,
      blockedAmount: blocked ? amount : 0,
      currency,
      problems: blocked
        ? [
            {
              problemType: 'MissingMpidOnLocation',
              message: `Location '${loc.locationId}' has no meter point id; its compensation is blocked until one is added`,
            },
          ]
        : [],
    });
  }
  return { period: { from: localDateString(monthStart, OSLO), to: lastDay }, locations: out };
}
