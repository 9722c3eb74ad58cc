import { randomUUID } from 'node:crypto';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import type { NotificationType } from '../spark/wire.js';
import { neighbourhoodOf, type Neighbourhood } from './neighbourhoods.js';
import { dailyIncentiveCurve, priceCurveDelta } from './price-curves.js';
import { PartnerState, type EventRec } from './state.js';
import { WebhookDelivery } from './webhook-delivery.js';
import { HOUR_MS, isoUtc, localDateString, localDayStartMs, localParts, localTimeToUtcMs, OSLO } from '../core/zoned-time.js';
import { rng } from '../core/prng.js';

/**
 * The moving parts of the sandbox, all on the injected clock: partner state, event creation and
 * webhook delivery, the eligibility batch (at most one `UserEligibilityUpdated` per partner per
 * batch window) and the daily price curves at 13:00 Europe/Oslo for the next local day.
 */

export interface EngineOptions {
  clock: Clock;
  seed: number;
  neighbourhoods: Neighbourhood[];
  logger: Logger;
  webhookRetryDelaysMs: readonly number[];
  webhookTimeoutMs: number;
  eligibilityBatchMs: number;
  /** From this instant price curves use the area's local currency instead of EUR. */
  localCurrencyFromMs: number;
  /** Local hour (Europe/Oslo) at which the daily curves are created. */
  dailyCurveHour: number;
}

export class SandboxEngine {
  readonly partners = new Map<string, PartnerState>();
  readonly delivery: WebhookDelivery;
  neighbourhoods: Neighbourhood[];
  private seq = 0;
  private lastCurveDay: string | undefined;
  private readonly batchDue = new Map<string, number>();
  private readonly nextRandom: () => number;
  private chain: Promise<void> = Promise.resolve();
  private readonly inflight = new Set<Promise<void>>();

  constructor(readonly options: EngineOptions) {
    this.neighbourhoods = options.neighbourhoods;
    this.nextRandom = rng(options.seed >>> 0 || 1);
    this.delivery = new WebhookDelivery({
      clock: options.clock,
      logger: options.logger,
      retryDelaysMs: options.webhookRetryDelaysMs,
      timeoutMs: options.webhookTimeoutMs,
      nextSeq: () => this.nextSeq(),
    });
  }

  get clock(): Clock {
    return this.options.clock;
  }

  nextSeq(): number {
    return ++this.seq;
  }

  /** A seeded uniform number in [0, 1) (mulberry32), for simulation choices. */
  random(): number {
    return this.nextRandom();
  }

  partner(clientId: string): PartnerState {
    let p = this.partners.get(clientId);
    if (!p) {
      p = new PartnerState(clientId);
      this.partners.set(clientId, p);
    }
    return p;
  }

  /** Creates an event for the partner, stores it and starts delivering it. */
  createEvent(
    partner: PartnerState,
    notificationType: NotificationType,
    payload: Record<string, unknown>,
    cover?: { fromMs: number; toMs: number },
  ): EventRec {
    const now = this.clock.nowMs();
    const event: EventRec = {
      id: randomUUID(),
      createdAtMs: now,
      notificationType,
      payload,
      coverFromMs: cover?.fromMs ?? now,
      coverToMs: cover?.toMs ?? now,
      seq: this.nextSeq(),
    };
    partner.events.push(event);
    this.track(this.delivery.deliver(partner, event));
    return event;
  }

  /** Waits for every delivery started so far (first attempts). */
  async settle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.all([...this.inflight]);
  }

  private track(p: Promise<void>): void {
    const wrapped = p
      .catch((err: unknown) => this.options.logger.error({ err: String(err) }, 'delivery failed'))
      .finally(() => this.inflight.delete(wrapped));
    this.inflight.add(wrapped);
  }

  // ------------------------------------------------------------------------------- eligibility

  /** True when one of the user's locations lies in a neighbourhood (instant view). */
  computeEligible(partner: PartnerState, userId: string): boolean {
    return partner.locationsOf(userId).some((l) => neighbourhoodOf(l, this.neighbourhoods) !== undefined);
  }

  /** Something changed that may change eligibility: the next batch re-evaluates the partner. */
  markEligibilityDirty(partner: PartnerState): void {
    partner.eligibilityDirty = true;
    if (!this.batchDue.has(partner.clientId)) {
      const w = this.options.eligibilityBatchMs;
      this.batchDue.set(partner.clientId, Math.floor(this.clock.nowMs() / w) * w + w);
    }
  }

  setNeighbourhoods(areas: Neighbourhood[]): void {
    this.neighbourhoods = areas;
    for (const p of this.partners.values()) this.markEligibilityDirty(p);
  }

  /** Re-evaluates, publishes and (on any change) emits one `UserEligibilityUpdated` event. */
  runEligibilityBatch(partner: PartnerState): void {
    this.batchDue.delete(partner.clientId);
    partner.eligibilityDirty = false;
    const next = new Set([...partner.users.keys()].filter((u) => this.computeEligible(partner, u)));
    const added = [...next].filter((u) => !partner.published.has(u));
    const removed = [...partner.published].filter((u) => !next.has(u));
    partner.published = next;
    if (added.length === 0 && removed.length === 0) return;
    this.createEvent(partner, 'UserEligibilityUpdated', {
      lastUpdated: isoUtc(this.clock.nowMs()),
      addedUsers: added,
      removedUsers: removed,
      payloadType: 'UserEligibility',
    });
  }

  // ------------------------------------------------------------------------------ price curves

  /** One PriceCurve event per neighbourhood with targets, for the local day at `dayStartMs`. */
  createDailyCurves(partner: PartnerState, dayStartMs: number): EventRec[] {
    const created: EventRec[] = [];
    for (const area of this.neighbourhoods) {
      const targets: { resourceId: string; locationId: string }[] = [];
      for (const userId of partner.published) {
        const user = partner.users.get(userId);
        if (!user?.enrollment) continue;
        const inArea = partner.locationsOf(userId).filter((l) => neighbourhoodOf(l, this.neighbourhoods)?.id === area.id);
        for (const loc of inArea) {
          const bound = partner.resourcesOfLocation(loc.locationId);
          // A location without resources is behind-the-meter: the target names the location
          // itself (resourceId = locationId, since the document requires both members).
          if (bound.length === 0) targets.push({ resourceId: loc.locationId, locationId: loc.locationId });
          for (const r of bound) targets.push({ resourceId: r.resourceId, locationId: loc.locationId });
        }
        const home = inArea[0];
        if (home) {
          for (const v of partner.resourcesOfUser(userId).filter((r) => r.locationId === null)) {
            targets.push({ resourceId: v.resourceId, locationId: home.locationId });
          }
        }
      }
      if (targets.length === 0) continue;
      const curve = dailyIncentiveCurve(this.options.seed, area.priceArea, dayStartMs, this.options.localCurrencyFromMs);
      if (curve.points.length === 0) continue;
      created.push(
        this.createEvent(
          partner,
          'PriceCurveCreated',
          { targets, priceCurveDelta: priceCurveDelta(curve), priceArea: area.priceArea, payloadType: 'PriceCurve' },
          { fromMs: curve.fromMs, toMs: curve.toMs },
        ),
      );
    }
    return created;
  }

  // --------------------------------------------------------------------------------- scheduler

  /** Runs everything that is due at the clock's current time; serialised; awaits deliveries. */
  tick(): Promise<void> {
    const run = this.chain.then(() => this.tickOnce());
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async tickOnce(): Promise<void> {
    const now = this.clock.nowMs();
    for (const [clientId, due] of [...this.batchDue]) {
      const p = this.partners.get(clientId);
      if (p && now >= due) this.runEligibilityBatch(p);
    }
    const local = localParts(now, OSLO);
    const today = localDateString(now, OSLO);
    if (local.hour >= this.options.dailyCurveHour && this.lastCurveDay !== today) {
      this.lastCurveDay = today;
      const tomorrow = localDayStartMs(now, OSLO, 1);
      for (const p of this.partners.values()) this.createDailyCurves(p, tomorrow);
    }
    await this.delivery.runDueRetries();
    await this.settle();
  }

  /** Clock time of the next scheduled job (batch, daily curve, retry). */
  nextDueMs(): number {
    const now = this.clock.nowMs();
    const candidates: number[] = [...this.batchDue.values()];
    const retry = this.delivery.nextDueMs();
    if (retry !== undefined) candidates.push(retry);
    const p = localParts(now, OSLO);
    let curveAt = localTimeToUtcMs(p.year, p.month, p.day, this.options.dailyCurveHour, OSLO);
    if (this.lastCurveDay === localDateString(now, OSLO) || curveAt <= now) {
      if (this.lastCurveDay === localDateString(now, OSLO)) {
        const t = new Date(localDayStartMs(now, OSLO, 1) + 12 * HOUR_MS);
        const q = localParts(t.getTime(), OSLO);
        curveAt = localTimeToUtcMs(q.year, q.month, q.day, this.options.dailyCurveHour, OSLO);
      } else {
        curveAt = now;
      }
    }
    candidates.push(curveAt);
    return Math.min(...candidates);
  }
}
