/**
 * The location's plan report (`LocationEnergyUsagePlan`, docs/flexibility.md): built from the plan
 * in force whenever it is checked, queued when it is due (`planReportReason`), and sent by the
 * report outbox. The outbox table holds event reports only (one row per event and kind), so the
 * plan report keeps its own small record in the store's key-value state: the one waiting to be
 * sent (a newer one replaces it: only the latest plan is worth sending) and the last one the API
 * accepted. The record is written when the API answers (accepted or rejected) and when a send
 * fails; a report queued and sent at once is written once. A report queued and not yet answered is
 * not lost at a restart: the next start builds the report again from the plan in force and queues it
 * if it is still due against the last one accepted (only the latest plan is worth sending).
 */
import { z } from 'zod';
import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { Plan } from '../core/types.js';
import type { Store } from '../store/types.js';
import { buildPlanReport, planReportReason, type PlanReportPayload, type PlanReportReason } from '../core/plan-report.js';
import { apiTimestamp, hourMs } from '../core/reports.js';
import { startLoop, type LoopHandle } from '../timing/loop.js';

export const planReportStateKey = 'reports:plan';

const pointSchema = z.strictObject({ timestamp: z.string(), kiloWattHours: z.number() });
const payloadSchema = z.strictObject({
  payloadType: z.literal('LocationEnergyUsagePlan'),
  locationId: z.string(),
  meterPointId: z.string(),
  resolution: z.string(),
  baseline: z.array(pointSchema),
  flexibility: z.array(pointSchema),
});
/**
 * A payload as stored: its hours as numbers from the first hour on. The API's points spell every
 * hour's timestamp twice (about 110 bytes an hour); this form takes about 12, and the record is
 * rewritten at every report queued and accepted.
 */
const storedPayloadSchema = z.strictObject({
  locationId: z.string(),
  meterPointId: z.string(),
  resolution: z.string(),
  firstHourMs: z.number(),
  baselineKwh: z.array(z.number()),
  flexibilityKwh: z.array(z.number()),
});
type StoredPayload = z.infer<typeof storedPayloadSchema>;

/** The stored form of `p`, or `p` itself when its hours are not consecutive (kept as the API's points). */
function compactPayload(p: PlanReportPayload): StoredPayload | PlanReportPayload {
  const first = p.baseline[0];
  if (first === undefined || p.flexibility.length !== p.baseline.length) return p;
  const firstHourMs = Date.parse(first.timestamp);
  const onTheHour = (points: PlanReportPayload['baseline']): boolean =>
    points.every((pt, i) => pt.timestamp === apiTimestamp(firstHourMs + i * hourMs));
  if (!onTheHour(p.baseline) || !onTheHour(p.flexibility)) return p;
  const { locationId, meterPointId, resolution } = p;
  return {
    locationId,
    meterPointId,
    resolution,
    firstHourMs,
    baselineKwh: p.baseline.map((pt) => pt.kiloWattHours),
    flexibilityKwh: p.flexibility.map((pt) => pt.kiloWattHours),
  };
}

/** The API's payload back from its stored form. */
const expandedPayload = storedPayloadSchema.transform((c): PlanReportPayload => {
  const points = (kwh: number[]) => kwh.map((kiloWattHours, i) => ({ timestamp: apiTimestamp(c.firstHourMs + i * hourMs), kiloWattHours }));
  return {
    payloadType: 'LocationEnergyUsagePlan',
    locationId: c.locationId,
    meterPointId: c.meterPointId,
    resolution: c.resolution,
    baseline: points(c.baselineKwh),
    flexibility: points(c.flexibilityKwh),
  };
});

/** A payload read from the store, in either form. */
const readPayloadSchema = z.union([payloadSchema, expandedPayload]);

const reasonSchema = z.enum(['first', 'changed', 'extended', 'daily']);
const pendingSchema = z.strictObject({
  key: z.string(),
  payload: payloadSchema,
  reason: reasonSchema,
  createdAtMs: z.number(),
  attempts: z.number().int().nonnegative(),
  nextAttemptMs: z.number(),
  lastError: z.string().nullable(),
});
const sentSchema = z.strictObject({
  key: z.string(),
  payload: payloadSchema,
  reason: reasonSchema,
  createdAtMs: z.number(),
  acceptedAtMs: z.number(),
  remoteId: z.string().nullable(),
});
const stateSchema = z.strictObject({
  pending: pendingSchema.nullable(),
  lastSent: sentSchema.nullable(),
  lastRejected: z.strictObject({ key: z.string(), payload: payloadSchema, createdAtMs: z.number(), atMs: z.number(), reason: z.string() }).nullable(),
});
export type PendingPlanReport = z.infer<typeof pendingSchema>;
export type PlanReportState = z.infer<typeof stateSchema>;

/** The record as read from the store: the same, with each payload in either stored form. */
const storedStateSchema = z.strictObject({
  pending: pendingSchema.extend({ payload: readPayloadSchema }).nullable(),
  lastSent: sentSchema.extend({ payload: readPayloadSchema }).nullable(),
  lastRejected: stateSchema.shape.lastRejected.unwrap().extend({ payload: readPayloadSchema }).nullable(),
});

function storedForm(s: PlanReportState) {
  const compact = <T extends { payload: PlanReportPayload }>(r: T | null) => (r === null ? null : { ...r, payload: compactPayload(r.payload) });
  return { pending: compact(s.pending), lastSent: compact(s.lastSent), lastRejected: compact(s.lastRejected) };
}

const empty: PlanReportState = { pending: null, lastSent: null, lastRejected: null };

/** The POST /reports body of a plan report: it answers no event, so it names none. */
export function planReportBody(p: PendingPlanReport): { payloads: PlanReportPayload[] } {
  return { payloads: [p.payload] };
}

/** The plan report's record in the store, and the outbox's view of it. */
export function planReportQueue(store: Pick<Store, 'getState' | 'setState'>) {
  // This queue is the record's only writer in the process: it is read from the store once, then
  // kept here (the plan is offered every minute, and the record holds days of hourly curves).
  let cached: PlanReportState | null | undefined;
  // Whether the record in the store holds a report waiting to be sent: a newer one must then
  // replace it there too, or a restart would send the older one first.
  let storedPending = false;
  const stored = (): PlanReportState | null => {
    if (cached !== undefined) return cached;
    cached = store.getState(planReportStateKey, storedStateSchema) ?? null;
    storedPending = cached?.pending != null;
    return cached;
  };
  const read = (): PlanReportState => stored() ?? empty;
  const write = (s: PlanReportState): void => {
    store.setState(planReportStateKey, storedForm(s));
    cached = s;
    storedPending = s.pending !== null;
  };
  // Each write is a commit on the SD card; a queued report is sent at once and written when answered.
  const keep = (s: PlanReportState): void => {
    if (storedPending) write(s);
    else cached = s;
  };
  return {
    read,
    /** The record as stored (read once); null before the first plan report was answered or failed. */
    stored,
    /** Queues `payload` when it is due against the last one queued or sent; returns why, or null. */
    offer(payload: PlanReportPayload, nowMs: number): PlanReportReason | null {
      const s = read();
      // Compared with the newest one queued, whatever became of it: a rejected plan is not sent
      // again until it changes or a day has passed.
      const last = [s.pending, s.lastSent, s.lastRejected]
        .flatMap((r) => (r === null ? [] : [{ sentMs: r.createdAtMs, payload: r.payload }]))
        .reduce<{ sentMs: number; payload: PlanReportPayload } | null>((a, r) => (a === null || r.sentMs > a.sentMs ? r : a), null);
      const reason = planReportReason(last, payload, nowMs);
      if (reason === null) return null;
      const key = `plan:${payload.locationId}:${nowMs}`;
      keep({ ...s, pending: { key, payload, reason, createdAtMs: nowMs, attempts: 0, nextAttemptMs: nowMs, lastError: null } });
      return reason;
    },
    /** The report waiting to be sent, when it is due. */
    due(nowMs: number): PendingPlanReport | null {
      const p = read().pending;
      return p !== null && p.nextAttemptMs <= nowMs ? p : null;
    },
    /** `sent` was accepted; it stays pending only if a newer one replaced it meanwhile. */
    accepted(sent: PendingPlanReport, atMs: number, remoteId: string | null): void {
      const s = read();
      write({
        ...s,
        pending: s.pending?.key === sent.key ? null : s.pending,
        lastSent: { key: sent.key, payload: sent.payload, reason: sent.reason, createdAtMs: sent.createdAtMs, acceptedAtMs: atMs, remoteId },
      });
    },
    rejected(sent: PendingPlanReport, atMs: number, reason: string): void {
      const s = read();
      write({
        ...s,
        pending: s.pending?.key === sent.key ? null : s.pending,
        lastRejected: { key: sent.key, payload: sent.payload, createdAtMs: sent.createdAtMs, atMs, reason },
      });
    },
    /** `waiting` has no hour left to tell: it goes unsent. */
    expired(waiting: PendingPlanReport): void {
      const s = read();
      if (s.pending?.key === waiting.key) keep({ ...s, pending: null });
    },
    retry(sent: PendingPlanReport, error: string, nextAttemptMs: number): void {
      const s = read();
      if (s.pending?.key !== sent.key) return;
      write({ ...s, pending: { ...s.pending, attempts: s.pending.attempts + 1, nextAttemptMs, lastError: error } });
    },
  };
}
export type PlanReportQueue = ReturnType<typeof planReportQueue>;

/** Where the plan report goes: the home's location and its meter point (the API requires one). */
export interface PlanReportTarget {
  locationId: string;
  meterPointId: string;
}

/**
 * Checks the plan in force every `everyMs` (and when woken) and queues its report when due; tells
 * `onQueued` so the outbox sends it at once.
 */
export function startPlanReports(deps: {
  queue: Pick<PlanReportQueue, 'offer'>;
  plan: () => Plan | null;
  baseLoadKw: () => number;
  /** Null while the home has no registered location or no meter point id: nothing is reported. */
  target: () => PlanReportTarget | null;
  clock: Clock;
  logger: Logger;
  onQueued: () => void;
  everyMs?: number;
}): LoopHandle {
  const log = deps.logger.child({ component: 'plan-reports' });
  // The report is a function of the plan, the base load, the target and the hour: built again
  // only when one of them changes, not at every check.
  let built: { plan: Plan; baseLoadKw: number; target: PlanReportTarget; hourStartMs: number; payload: PlanReportPayload | null } | null = null;
  const reportOf = (plan: Plan, target: PlanReportTarget, nowMs: number): PlanReportPayload | null => {
    const baseLoadKw = deps.baseLoadKw();
    const hourStartMs = Math.floor(nowMs / hourMs) * hourMs;
    const same =
      built !== null &&
      built.plan === plan &&
      built.baseLoadKw === baseLoadKw &&
      built.hourStartMs === hourStartMs &&
      built.target.locationId === target.locationId &&
      built.target.meterPointId === target.meterPointId;
    if (!same) built = { plan, baseLoadKw, target, hourStartMs, payload: buildPlanReport({ ...target, plan, baseLoadKw, nowMs }) };
    return built!.payload;
  };
  return startLoop({
    name: 'plan-reports',
    clock: deps.clock,
    logger: log,
    errorDelayMs: 60_000,
    tick: async () => {
      const everyMs = deps.everyMs ?? 60_000;
      const plan = deps.plan();
      const target = deps.target();
      if (plan === null || target === null) return everyMs;
      const now = deps.clock.nowMs();
      const payload = reportOf(plan, target, now);
      if (payload === null) return everyMs;
      const reason = deps.queue.offer(payload, now);
      if (reason !== null) {
        log.info({ reason, hours: payload.baseline.length, locationId: target.locationId }, 'plan report queued');
        deps.onQueued();
      }
      return everyMs;
    },
  });
}
