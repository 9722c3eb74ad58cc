/**
 * What the API's usage-report contract says, shared by the gateway's outbox and the partner's hub:
 * a report is due by the UTC month end after its last hour, and the API's answer to a report it
 * already holds.
 */
import { isWattshiftError } from '../errors.js';
import type { CronSpec } from '../timing/cron.js';
import { energyUsagePoints, type ReportRequest } from './wire.js';

const dayMs = 86_400_000;

/** An unsent report this close to its month-end deadline is warned about (here and in the partner's hub). */
export const reportDeadlineWarningMs = 2 * dayMs;

/**
 * The API refuses a second usage report for the same event and target (the sandbox with a 400
 * "duplicate: ... was already accepted (report ...)"). After a crash or a timeout between sending
 * and marking, that answer means the earlier send arrived. A report that names a target twice
 * ("duplicate: the report names target ... twice") is malformed, not a duplicate of ours.
 */
export function isDuplicateRejection(err: unknown): boolean {
  if (!isWattshiftError(err) || err.code !== 'API_REJECTED') return false;
  const server = err.details?.['serverMessage'];
  const text = typeof server === 'string' ? server : err.message;
  return /duplicate/i.test(text) && /already (been )?accepted/i.test(text);
}

/** When the month-end deadline of unsent reports is checked (UTC: deadlines are UTC month ends). */
export const deadlineCheckCron: CronSpec = { cron: '0 */6 * * *', timezone: 'UTC' };

/**
 * The month-end deadline of a report body: the UTC month end after its last metered hour; null for
 * a body with no hours (an acknowledgement is due at once and carries no deadline of its own).
 */
export function reportDeadlineMs(body: ReportRequest): number | null {
  const hours = body.payloads
    .flatMap((p) => {
      if (p.payloadType === 'EnergyUsage') return energyUsagePoints(p);
      if (p.payloadType === 'LocationEnergyUsage') return p.points;
      return [];
    })
    .map((point) => Date.parse(point.timestamp));
  return hours.length === 0 ? null : monthEndDeadlineMs(Math.max(...hours));
}

/** The end of the month (UTC) an event's hours belong to: reports later than this earn nothing. */
export function monthEndDeadlineMs(lastHourStartMs: number): number {
  const d = new Date(lastHourStartMs);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}
