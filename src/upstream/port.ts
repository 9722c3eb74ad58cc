/**
 * The daemon's upstream port: where events and prices come from and where reports and LPC
 * acknowledgements go. Two adapters: `direct` (the API itself, with the partner's credentials)
 * and `fleet` (the partner's hub over its MQTT broker). Planning, control, metering and the
 * report contents are the same code behind either.
 */
import type { SparkClient } from '../spark/client.js';
import type { EventIntake } from '../jobs/event-intake.js';
import type { PriceSource } from '../jobs/price-refresh.js';
import type { ReportSender } from '../jobs/report-outbox.js';
import type { LoopHandle } from '../timing/loop.js';

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
