/**
 * The daemon's upstream port: where events and prices come from and where reports and LPC
 * acknowledgements go. Two adapters: `direct` (the API itself, with the partner's credentials)
 * and `fleet` (the partner's hub over its MQTT broker). Planning, control, metering and the
 * report contents are the same code behind either.
 */
import type { SparkClient } from '../spark/client.js';
import type { ForecastClient } from '../spark/forecast-client.js';
import type { HomeEvent } from '../spark/event-normalise.js';
import type { LoopHandle } from '../timing/loop.js';

/**
 * `refused`: stored but out of bounds, never acted on; `unstored`: the store failed, so the event
 * was acted on in memory only and its sender must deliver it again.
 */
export type IntakeOutcome = 'new' | 'duplicate' | 'ignored' | 'refused' | 'invalid' | 'unstored';

/** The daemon's one event intake (jobs/event-intake.ts), fed by every event source of an upstream. */
export interface EventIntake {
  /**
   * Parses, stores and (when new and relevant) hands an event on. Every event is stored before it
   * is acted on; an event that targets someone else, or of an unknown type, is stored as ignored.
   */
  accept(raw: unknown, kind: 'event' | 'notification', rawJson?: string): { outcome: IntakeOutcome; event?: HomeEvent };
}

/** The forecast price service, as the price refresh job uses it: an upstream that only relays the advice leaves the rest out. */
export type PriceSource = Pick<ForecastClient, 'advice'> & Partial<Pick<ForecastClient, 'forecast' | 'actualPrices'>>;

/** What the report outbox (jobs/report-outbox.ts) sends through. */
export interface ReportSender {
  /**
   * Resolves with the API's report id (none when the upstream does not pass it on). `meta` names
   * the outbox row: an upstream that forwards the report keys it with `idempotencyKey`.
   */
  postReport(body: unknown, signal: AbortSignal, meta: { idempotencyKey: string; createdAtMs: number }): Promise<{ id?: string | undefined }>;
}

export interface UpstreamHealth {
  ok: boolean;
  lastError: { code: string; message: string; atMs: number } | null;
}

/** What the daemon hands the upstream once its jobs exist. */
export interface UpstreamSinks {
  /** Every event, from wherever it came, goes through the one intake. */
  intake: EventIntake;
  isKnownEvent: (eventId: string) => boolean;
  /** New prices are there: refresh now rather than at the next hour. */
  pricesChanged: () => void;
  /** An event source refused an input (a webhook call, a fleet message), for metrics. */
  onRefused: (input: 'webhook' | 'event', code: string) => void;
}

export interface Upstream {
  readonly mode: 'direct' | 'fleet';
  /** Connects and, where it can, checks the credentials (a rejected login throws AUTH_REJECTED). */
  open(): Promise<void>;
  /** The price source of the price refresh job. */
  readonly prices: PriceSource;
  /** The report outbox's sender: resolves once the report is accepted for good. */
  readonly reports: ReportSender;
  /** The API's eligibility calls, when this upstream can make them (the hub checks them in fleet mode). */
  readonly eligibility: Pick<SparkClient, 'getEligibility' | 'getEnrollment'> | null;
  /** Starts delivering events into the sinks; the handle stops delivery (not the connection). */
  startEvents(sinks: UpstreamSinks): Promise<LoopHandle>;
  /** The event path's health (the `events` job on /healthz and the status page). */
  health(): UpstreamHealth;
  /** Closes connections; after every job has stopped. */
  close(): Promise<void>;
}
