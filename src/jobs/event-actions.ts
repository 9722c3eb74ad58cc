import type { Clock } from '../ports.js';
import type { Logger } from '../log.js';
import type { EventRow, Store } from '../store/types.js';
import { buildLpcAck, buildUsageReport, hourMs, reportDueAtMs, subjectOf, type LpcTarget, type UsageTarget } from '../core/reports.js';
import { codeOf } from '../errors.js';
import { parseIncoming, type HomeEvent, type Identity } from '../spark/event-normalise.js';
import { monthEndDeadlineMs } from '../spark/report-rules.js';

/** Metering subject of a report target (resource → its device's subject, location → main meter). */
export type SubjectResolver = (target: UsageTarget) => string | null;

export function homeEventOf(row: EventRow, me: Identity): HomeEvent | null {
  try {
    return parseIncoming(row.raw, row.notificationType ? 'notification' : 'event', me);
  } catch {
    return null;
  }
}

/** An `LPCReservation`: caps the plan keeps for, with no acknowledgement and no usage report. */
const isReservation = (e: HomeEvent): boolean => (e.lpcReservations?.length ?? 0) > 0;

/** Hour starts an event covers, from its incentive or cap points. */
export function eventHours(e: HomeEvent): number[] {
  const starts = [...e.priceDeltas.map((p) => p.startMs), ...e.lpcCaps.map((c) => c.startMs)];
  return [...new Set(starts.filter((s) => s % hourMs === 0))].sort((a, b) => a - b);
}

function usageTargets(e: HomeEvent, me: Identity): UsageTarget[] {
  if (e.lpcCaps.length > 0) {
    const seen = new Map<string, UsageTarget>();
    for (const c of e.lpcCaps) {
      const t: UsageTarget = c.resourceId
        ? { kind: 'resource', resourceId: c.resourceId, locationId: c.locationId, meterPointId: c.meterPointId }
        : { kind: 'location', locationId: c.locationId, meterPointId: c.meterPointId ?? me.meterPointIds[0] ?? '' };
      seen.set(subjectOf(t), t);
    }
    return [...seen.values()];
  }
  const resources = [...new Set(e.priceDeltas.map((p) => p.resourceId).filter((r): r is string => r !== null && me.resources.has(r)))];
  return resources.map((resourceId) => ({ kind: 'resource', resourceId, locationId: me.locationId ?? '', meterPointId: null }));
}

function lpcTargets(e: HomeEvent, me: Identity): LpcTarget[] {
  const seen = new Map<string, LpcTarget>();
  for (const c of e.lpcCaps) {
    const meterPointId = c.meterPointId ?? me.meterPointIds[0] ?? '';
    const t: LpcTarget = c.resourceId
      ? { kind: 'resource', resourceId: c.resourceId, locationId: c.locationId, meterPointId }
      : { kind: 'location', locationId: c.locationId, meterPointId };
    seen.set(t.kind === 'resource' ? t.resourceId : `location:${t.locationId}`, t);
  }
  return [...seen.values()];
}

/**
 * What happens to events after intake: an LPC event is acknowledged at once (declining targets
 * that cannot be held), and every acted-on event gets its usage report once its hours are over
 * and metered. A reservation is kept active until its window ends, then done. Reports go into the durable outbox in the same transaction that marks the event.
 */
export function createEventActions(deps: {
  store: Pick<Store, 'transaction' | 'listEvents' | 'markEvent' | 'enqueueReport' | 'readHourly'>;
  identity: () => Identity;
  subjectOf: SubjectResolver;
  /**
   * Whether an LPC target's caps can be held (e.g. base load below a location cap; device
   * controllable); 'unheard' when that depends on a device that has not answered since the start.
   */
  canHold: (target: LpcTarget, event: HomeEvent) => boolean | 'unheard';
  clock: Clock;
  logger: Logger;
  /** Time after the last event hour before the report is built, so metering has closed it. */
  reportGraceMs?: number;
  /** How long an answer waits for a device not heard from since the start (a charge point reconnecting after a restart). */
  unheardWaitMs?: number;
  onQueued: () => void;
}): { handle(event: HomeEvent): void; scan(): void; answerWaiting(): void } {
  const log = deps.logger.child({ component: 'event-actions' });
  const graceMs = deps.reportGraceMs ?? 20 * 60_000;
  const unheardWaitMs = deps.unheardWaitMs ?? 10 * 60_000;
  /** LPC events whose answer waits for a device to be heard: since when (clock ms). */
  const waiting = new Map<string, { sinceMs: number; event: HomeEvent }>();

  /**
   * Acknowledges or declines each target. A target that depends on a device not heard from since
   * the start is not judged on an assumed state: the answer waits for it, up to `unheardWaitMs`
   * and never past the event's start, and then counts it as one that cannot hold the cap.
   */
  function acknowledge(e: HomeEvent): void {
    const targets = lpcTargets(e, deps.identity());
    const now = deps.clock.nowMs();
    const answers = new Map(targets.map((t) => [t, deps.canHold(t, e)] as const));
    const unheard = targets.filter((t) => answers.get(t) === 'unheard');
    if (unheard.length > 0) {
      const sinceMs = waiting.get(e.id)?.sinceMs ?? now;
      // An answer due at the event's start is not made late by the wait; one already late may wait.
      const startMs = e.startMs ?? Number.POSITIVE_INFINITY;
      const answerByMs = startMs > sinceMs ? Math.min(sinceMs + unheardWaitMs, startMs) : sinceMs + unheardWaitMs;
      if (now < answerByMs) {
        if (!waiting.has(e.id)) log.info({ eventId: e.id, targets: unheard.length }, 'LPC answer waits for devices not heard from since the start');
        waiting.set(e.id, { sinceMs, event: e });
        return;
      }
      log.warn(
        { code: 'LPC_DEVICE_UNHEARD', eventId: e.id, targets: unheard.length, waitedMs: now - sinceMs },
        'LPC targets declined: their devices were not heard from in time',
      );
    }
    waiting.delete(e.id);
    const ack = buildLpcAck(e.id, targets, (t) => answers.get(t) === true);
    deps.store.transaction(() => {
      deps.store.enqueueReport({ idempotencyKey: `${e.id}:lpcAck`, eventId: e.id, kind: 'lpcAck', body: ack, nowMs: now, deadlineMs: e.startMs });
      deps.store.markEvent(e.id, 'active');
    });
    const declined = ack.payloads.reduce((n, p) => n + p.declinedTargets.length, 0);
    log.info({ eventId: e.id, targets: targets.length, declined }, 'LPC acknowledgement queued');
  }

  function queueUsage(row: EventRow, e: HomeEvent, now: number): void {
    const me = deps.identity();
    const hours = eventHours(e);
    const targets = usageTargets(e, me);
    const metered = new Map<string, ReturnType<typeof deps.store.readHourly>>();
    for (const t of targets) {
      const subject = deps.subjectOf(t);
      if (subject) metered.set(subjectOf(t), deps.store.readHourly(subject, hours[0] ?? 0, (hours.at(-1) ?? 0) + hourMs));
    }
    const { report, gaps } = buildUsageReport({ eventId: e.id, eventHoursMs: hours, targets, metered });
    if (gaps.length > 0) log.warn({ eventId: e.id, gaps: gaps.length }, 'event hours without metering are left out of the report');
    deps.store.transaction(() => {
      if (report) {
        deps.store.enqueueReport({
          idempotencyKey: `${e.id}:usage`,
          eventId: e.id,
          kind: 'usage',
          body: report,
          nowMs: now,
          deadlineMs: monthEndDeadlineMs(hours.at(-1) ?? now),
        });
        deps.store.markEvent(row.eventId, 'reportQueued');
      } else {
        deps.store.markEvent(row.eventId, 'done', 'no consumption in the event hours');
      }
    });
    if (report) log.info({ eventId: e.id, payloads: report.payloads.length }, 'usage report queued');
  }

  return {
    handle(e) {
      try {
        if (e.lpcCaps.length > 0) acknowledge(e);
        else if (e.priceDeltas.length > 0 || isReservation(e)) deps.store.markEvent(e.id, 'active');
        else deps.store.markEvent(e.id, 'done');
        deps.onQueued();
      } catch (err) {
        log.error({ code: codeOf(err), eventId: e.id, err }, 'event action failed; retried on the next scan');
      }
    },
    scan() {
      const now = deps.clock.nowMs();
      const me = deps.identity();
      let queued = false;
      for (const row of deps.store.listEvents({ states: ['received', 'active'] })) {
        const e = homeEventOf(row, me);
        if (!e || !e.relevant) {
          deps.store.markEvent(row.eventId, 'ignored', e ? 'not for this home' : 'unreadable');
          continue;
        }
        if (row.state === 'received' && e.lpcCaps.length > 0) {
          // Stored but not acknowledged (crash between intake and action).
          acknowledge(e);
          queued = true;
          continue;
        }
        if (isReservation(e)) {
          // Nothing was asked, so nothing is reported: it shapes the plan until its window ends.
          if (e.endMs !== null && now >= e.endMs) deps.store.markEvent(row.eventId, 'done', 'reservation ended');
          else if (row.state === 'received') deps.store.markEvent(row.eventId, 'active');
          continue;
        }
        const hours = eventHours(e);
        if (hours.length === 0) {
          deps.store.markEvent(row.eventId, 'done', 'no hourly points');
          continue;
        }
        if (now < reportDueAtMs(hours, graceMs)) continue;
        try {
          queueUsage(row, e, now);
          queued = true;
        } catch (err) {
          log.error({ code: codeOf(err), eventId: row.eventId, err }, 'usage report not built; retried on the next scan');
        }
      }
      if (queued) deps.onQueued();
    },
    /** Answers the events waiting for devices, once they are heard or the wait is over (called as devices are read). */
    answerWaiting() {
      if (waiting.size === 0) return;
      for (const { event } of [...waiting.values()]) {
        try {
          acknowledge(event);
          if (!waiting.has(event.id)) deps.onQueued();
        } catch (err) {
          log.error({ code: codeOf(err), eventId: event.id, err }, 'event action failed; retried on the next scan');
        }
      }
    },
  };
}
