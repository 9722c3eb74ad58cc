import type { z } from 'zod';
import type { HourWithBaseline } from '../core/bill.js';

/**
 * The store's public types. `Store` is an interface so that jobs can be unit-tested with a fake;
 * `openStore` (./open-store.ts) returns the SQLite implementation.
 *
 * Times are milliseconds since the Unix epoch (UTC) and named `...Ms`; energies are kWh.
 */

// ---------------------------------------------------------------------------------------------
// Events

/**
 * Where the daemon is with an event. It is a flag, not a strict state machine: any state may be
 * set, so a job can record a failure or re-open an event.
 * - `received`: stored, not acted on yet (every event is stored before it is acted on).
 * - `ignored`: not for this location/resources, or of an unknown type (kept for the record).
 * - `active`: accepted and taken into planning (price curve, LPC), not yet reported.
 * - `reportQueued`: its report(s) are in the outbox (set in the same transaction as the enqueue).
 * - `done`: nothing left to do (set when the last of its reports is accepted, in that transaction).
 * - `failed`: processing failed; `detail` says why.
 */
export const eventStates = ['received', 'ignored', 'active', 'reportQueued', 'done', 'failed'] as const;
export type EventState = (typeof eventStates)[number];

export interface EventInput {
  eventId: string;
  /** Set for webhook notifications (`PriceCurveCreated`, ...); polled events have none. */
  notificationType?: string | null;
  /** `PriceCurve`, `LocationLPC`, ... or null when unknown. */
  payloadType?: string | null;
  /** The event's own creation time. */
  createdAtMs: number;
  /** When the daemon received it. */
  receivedAtMs: number;
  /** The first slot start / last slot end the event covers, when it has any. */
  startMs?: number | null;
  endMs?: number | null;
  locationIds?: readonly string[];
  resourceIds?: readonly string[];
  /** The event exactly as received (the webhook body or the API's JSON); must be valid JSON. */
  rawJson: string;
  /** Defaults to `received`. */
  state?: EventState;
}

export interface EventRow {
  eventId: string;
  notificationType: string | null;
  payloadType: string | null;
  createdAtMs: number;
  receivedAtMs: number;
  startMs: number | null;
  endMs: number | null;
  locationIds: string[];
  resourceIds: string[];
  rawJson: string;
  /** `rawJson`, parsed. */
  raw: unknown;
  state: EventState;
  stateDetail: string | null;
  updatedAtMs: number;
}

export interface EventQuery {
  /**
   * Events whose span overlaps [fromMs, toMs). The span is [startMs, endMs) when the event has
   * one, else the instant `createdAtMs`.
   */
  fromMs?: number;
  toMs?: number;
  payloadType?: string;
  states?: readonly EventState[];
}

// ---------------------------------------------------------------------------------------------
// Hourly energy and meter checkpoints

export const energyQualities = ['measured', 'estimated', 'partial', 'gap'] as const;
/**
 * `measured`: from counter readings covering the whole hour; `estimated`: integrated power or a
 * model; `partial`: readings covered only part of the hour; `gap`: no usable data (kWh is 0).
 */
export type EnergyQuality = (typeof energyQualities)[number];

export interface HourlyEnergyInput {
  /** A resource id, or the location (by convention `location:<locationId>`). */
  subject: string;
  /** The UTC hour start; must be a whole hour. */
  hourStartMs: number;
  kwh: number;
  quality: EnergyQuality;
  /** How many readings contributed. */
  samples: number;
}

export interface HourlyEnergyRow extends HourlyEnergyInput {
  updatedAtMs: number;
}

/** The realised cost of one metered hour of a subject, in `currency`. */
export interface HourlyCostInput extends HourWithBaseline {
  subject: string;
  currency: string;
}

export interface HourlyCostRow extends HourlyCostInput {
  pricedAtMs: number;
  /** The hour's share of the month's capacity fee so far, excluding VAT (0: not a peak that sets it). */
  capacityShare: number;
}

/** Sums over one period of one subject's priced hours (see `Store.costTotals`). */
export interface CostPeriodTotals {
  /** Priced hours. */
  hours: number;
  /** What they cost, VAT included (without the capacity fee). */
  total: number;
  /** Incentive deltas (negative = earned). */
  delta: number;
  /** What they would have cost without wattshift (an hour without a baseline at its own cost). */
  baselineTotal: number;
}

/** Sums over one period of one subject's hours (see `Store.energyTotals`). */
export interface EnergyPeriodTotals {
  kwh: number;
  /** Hours `measured` or `estimated`: their whole energy is known. */
  completeHours: number;
  partialHours: number;
  gapHours: number;
}

/** The last cumulative counter reading of a device, so metering continues across restarts. */
export interface MeterCheckpoint {
  deviceId: string;
  /** Cumulative counter value, kWh. */
  valueKwh: number;
  atMs: number;
}

// ---------------------------------------------------------------------------------------------
// Plans

export interface PlanInput {
  createdAtMs: number;
  horizonStartMs: number;
  horizonEndMs: number;
  /** The plan, any JSON-serialisable value; parse it with your own schema when reading back. */
  json: unknown;
}

export interface PlanRow extends PlanInput {
  id: number;
}

export interface SavePlanResult {
  id: number;
  /** False when the plan was identical to the latest one and nothing was written. */
  stored: boolean;
}

// ---------------------------------------------------------------------------------------------
// Report outbox

export const reportKinds = ['usage', 'lpcAck'] as const;
export type ReportKind = (typeof reportKinds)[number];

/**
 * pending → sending → accepted | rejected (terminal); sending → pending on a retryable failure
 * (`markRetry`) or after a crash (`recoverInterrupted`). Nothing leaves `accepted` or `rejected`.
 */
export const reportStates = ['pending', 'sending', 'accepted', 'rejected'] as const;
export type ReportState = (typeof reportStates)[number];

export interface ReportInput {
  /** Unique per report, e.g. `${eventId}:${kind}`; enqueueing an existing key is a no-op. */
  idempotencyKey: string;
  /** Must be a stored event. */
  eventId: string;
  kind: ReportKind;
  /** The POST /reports body, any JSON-serialisable value. */
  body: unknown;
  nowMs: number;
  /** Defaults to `nowMs` (due at once). */
  nextAttemptMs?: number;
  /** When the report must be accepted by (e.g. the month-end deadline). */
  deadlineMs?: number | null;
}

export interface ReportRow {
  id: number;
  idempotencyKey: string;
  eventId: string;
  kind: ReportKind;
  body: unknown;
  state: ReportState;
  /** How many times it went to `sending`. */
  attempts: number;
  /** The last retryable error, or the rejection reason once rejected. */
  lastError: string | null;
  nextAttemptMs: number;
  deadlineMs: number | null;
  /** The API's report id, once accepted (when given). */
  remoteId: string | null;
  createdAtMs: number;
  updatedAtMs: number;
}

export interface EnqueueResult {
  report: ReportRow;
  /** False when a report with the same idempotency key already existed (it is returned as is). */
  created: boolean;
}

export interface ReportQuery {
  states?: readonly ReportState[];
  eventId?: string;
}

export interface OutboxSummary {
  pending: number;
  sending: number;
  accepted: number;
  rejected: number;
  /** The earliest deadline among reports not yet sent (pending or sending), or null. */
  oldestPendingDeadlineMs: number | null;
  /** The earliest `nextAttemptMs` among pending reports, or null. */
  nextAttemptMs: number | null;
}

// ---------------------------------------------------------------------------------------------
// Retention and maintenance

export interface RetentionDays {
  hourlyDays: number;
  /** Events, and their accepted/rejected reports; an event with an unsent report is kept. */
  eventsDays: number;
  /** Plans; the latest plan is always kept. */
  plansDays: number;
}

export interface PruneOptions extends RetentionDays {
  /** Give freed pages back to the file system (`PRAGMA incremental_vacuum`); default true. */
  vacuum?: boolean;
}

export interface PruneResult {
  hourly: number;
  events: number;
  reports: number;
  plans: number;
}

export interface StoreDiskUsage {
  pageSize: number;
  pageCount: number;
  freePages: number;
  dbBytes: number;
  walBytes: number;
}

// ---------------------------------------------------------------------------------------------

/**
 * The daemon's durable state. Every method is synchronous. Failures are `WattshiftError`s:
 * `STORE_FAILED` for SQLite errors (disk full, read-only, I/O) and corrupt rows, `INTERNAL` for
 * a caller bug (illegal outbox transition, unknown id, invalid input).
 */
export interface Store {
  readonly path: string;

  /**
   * Runs `fn` in one transaction; store methods called inside join it, and if `fn` throws,
   * everything is rolled back. Nesting is allowed (the outermost call decides durability).
   * By default the commit is durable (synchronous=FULL: the WAL is fsynced), as event and outbox
   * changes need. `durable: false` commits with synchronous=NORMAL (survives a process crash, a
   * power cut may undo it): use it for frequent writes such as hourly energy + meter checkpoints.
   */
  transaction<T>(fn: () => T, options?: { durable?: boolean }): T;

  /** Stores an event; returns true if it was new, false if its id was already stored. */
  saveEvent(event: EventInput): boolean;
  getEvent(eventId: string): EventRow | undefined;
  hasEvent(eventId: string): boolean;
  listEvents(query?: EventQuery): EventRow[];
  /** Sets an event's state; returns false if the event is unknown. */
  markEvent(eventId: string, state: EventState, detail?: string | null): boolean;

  /** Inserts or replaces hourly rows (keyed by subject and hour), all in one transaction. */
  upsertHourly(rows: readonly HourlyEnergyInput[]): void;
  /** Rows of `subject` with fromMs <= hourStartMs < toMs, in time order. */
  readHourly(subject: string, fromMs: number, toMs: number): HourlyEnergyRow[];
  /**
   * Sums of `subject`'s hours in each period (at most 400 periods), in the periods' order: kWh of
   * the hours with energy and the count of hours by coverage. One query, summed by SQLite.
   */
  energyTotals(subject: string, periods: ReadonlyArray<{ startMs: number; endMs: number }>): EnergyPeriodTotals[];

  /** Inserts or replaces the cost of hours (keyed by subject and hour), in one transaction. */
  upsertHourlyCost(rows: readonly HourlyCostInput[]): void;
  /** Cost rows of `subject` with fromMs <= hourStartMs < toMs, in time order. */
  readHourlyCost(subject: string, fromMs: number, toMs: number): HourlyCostRow[];
  /** Sums of `subject`'s priced hours in each period (at most 400 periods), in the order given. */
  costTotals(subject: string, periods: ReadonlyArray<{ startMs: number; endMs: number }>): CostPeriodTotals[];
  /** Sets the capacity-fee shares of `subject`'s priced hours in [fromMs, toMs); every other hour there gets 0. One transaction. */
  setCapacityShares(subject: string, fromMs: number, toMs: number, shares: readonly { hourStartMs: number; share: number }[]): void;

  saveCheckpoints(rows: readonly MeterCheckpoint[]): void;
  loadCheckpoints(): MeterCheckpoint[];

  savePlan(plan: PlanInput): SavePlanResult;
  latestPlan(): PlanRow | undefined;
  /** The ids of the stored plans whose horizon overlaps [fromMs, toMs), oldest first (at most KEEP_PLANS). */
  planIdsBetween(fromMs: number, toMs: number): number[];
  /** The stored plans of these ids that are still kept, oldest first (a stored plan never changes). */
  plansById(ids: readonly number[]): PlanRow[];

  enqueueReport(report: ReportInput): EnqueueResult;
  getReport(id: number): ReportRow | undefined;
  /** Pending reports with nextAttemptMs <= nowMs, earliest first. */
  dueReports(nowMs: number, limit?: number): ReportRow[];
  /** pending → sending, counting an attempt. */
  markSending(id: number, nowMs: number): ReportRow;
  /** sending → accepted (a repeated call on an accepted report is a no-op). */
  markAccepted(id: number, nowMs: number, remoteId?: string | null): ReportRow;
  /** sending → rejected, keeping the reason (a repeated call on a rejected report is a no-op). */
  markRejected(id: number, reason: string, nowMs: number): ReportRow;
  /** sending → pending after a retryable failure, due again at `nextAttemptMs`. */
  markRetry(id: number, error: string, nextAttemptMs: number): ReportRow;
  listReports(query?: ReportQuery): ReportRow[];
  outboxSummary(): OutboxSummary;
  /**
   * Puts reports left in `sending` (the process died while sending) back to `pending`, due at
   * once, and returns them. `openStore` calls it; call it again only when no send is in flight.
   */
  recoverInterrupted(): ReportRow[];
  /** What `recoverInterrupted` found when the store was opened. */
  readonly interruptedAtOpen: readonly ReportRow[];

  getState<T>(key: string, schema: z.ZodType<T>): T | undefined;
  setState(key: string, value: unknown): void;
  deleteState(key: string): void;

  /** Deletes rows older than the retention, in one transaction; never unsent reports. */
  prune(nowMs: number, options: PruneOptions): PruneResult;

  /** `PRAGMA integrity_check` (`ok` when the file is sound, else SQLite's messages), or with `quick` the cheaper `quick_check` (no index contents). */
  integrityCheck(mode?: 'full' | 'quick'): { ok: boolean; messages: string[] };
  diskUsage(): StoreDiskUsage;
  close(): void;
}
