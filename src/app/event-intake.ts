/**
 * Events → actions → planning: the intake every event path feeds (deduplicated, stored, then acted
 * on), the actions (LPC acknowledgement, reports) and the events that shape prices and caps now.
 * The events loop itself (polling, webhook or the fleet broker) starts later, once the jobs it
 * wakes are running.
 */
import { moduleOf, type Module } from '../lifecycle.js';
import { createEventIntake } from '../jobs/event-intake.js';
import type { EventIntake } from '../upstream/port.js';
import { createEventActions, homeEventOf } from '../jobs/event-actions.js';
import type { HomeEvent, Identity } from '../spark/event-normalise.js';
import { vehicleSubject } from '../jobs/vehicle-metering.js';
import { canHoldLocationCap, canHoldResourceCap } from '../core/cap-hold.js';
import { deviceHoldOf } from '../devices/cap-hold.js';
import { jobHealth, type AppContext } from './context.js';

export interface EventState {
  intake: EventIntake;
  /** The relevant events active now or coming, with those the store could not take. */
  activeEvents(): HomeEvent[];
  /** Forgets the cached events: one may have changed. */
  changed(): void;
  /** Runs the event scan (reports of ended events) now. */
  scan(): void;
  /** Checks the enrollment's eligibility in the background (direct upstream only). */
  checkEligibility(): void;
}

export function eventIntakeModule(ctx: AppContext): Module {
  const { clock, deps, slotMs, counters, mainMeterId, subjectOfDevice } = ctx;
  return moduleOf('event-intake', () => {
    const s = ctx.part('store');
    const up = ctx.part('upstream');
    const tracker = ctx.part('tracker');
    const supervised = ctx.part('supervised');
    // Callbacks reach the jobs of later modules through `late`, once those have started.
    const late = ctx.parts;
    const me = ctx.me;
    const identity = (): Identity => me;
    const checkEligibility = (): void => {
      if (up.eligibility) void tracker.checkEligibility(up.eligibility, me, deps.logger);
    };
    // The events that shape prices and caps, read from the store when they may have changed (a
    // new event, a scan) or every few minutes as time moves on, not on every control tick.
    let eventsCache: { atMs: number; events: HomeEvent[] } | null = null;
    const activeEvents = (): HomeEvent[] => {
      const now = clock.nowMs();
      if (eventsCache && now >= eventsCache.atMs && now - eventsCache.atMs < 5 * 60_000) return eventsCache.events;
      const events = s
        .listEvents({ fromMs: now - slotMs, toMs: now + 8 * 86_400_000, states: ['received', 'active', 'reportQueued'] })
        .flatMap((row) => {
          const e = homeEventOf(row, me);
          return e && e.relevant ? [e] : [];
        });
      eventsCache = { atMs: now, events };
      return withUnstored(events);
    };
    const eventsChanged = (): void => {
      eventsCache = null;
    };
    // Events the store could not take: their caps and prices hold from memory until they end.
    const unstored = new Map<string, HomeEvent>();
    const withUnstored = (events: HomeEvent[]): HomeEvent[] => {
      if (unstored.size === 0) return events;
      const now = clock.nowMs();
      for (const [id, e] of unstored) if (e.endMs !== null && e.endMs < now - slotMs) unstored.delete(id);
      const stored = new Set(events.map((e) => e.id));
      return [...events, ...[...unstored.values()].filter((e) => !stored.has(e.id))];
    };
    const actions = createEventActions({
      store: s,
      identity,
      subjectOf: (t) => {
        if (t.kind === 'location') return mainMeterId ? 'location' : null;
        const deviceId = me.resources.get(t.resourceId);
        if (deviceId !== undefined && ctx.config.vehicles.some((v) => v.id === deviceId)) return vehicleSubject(deviceId);
        return deviceId ? subjectOfDevice(deviceId) : null;
      },
      // The rule of docs/caps.md: promise only what the home holds with wattshift gone.
      canHold: (t, e) => {
        const built = ctx.part('built');
        const holdOf = (deviceId: string) => {
          const d = ctx.config.devices.find((x) => x.id === deviceId);
          const b = built.get(deviceId);
          return d && b ? deviceHoldOf(d, b.capabilities, supervised.get(deviceId)?.health().state === 'up') : undefined;
        };
        if (t.kind === 'resource') {
          const deviceId = me.resources.get(t.resourceId);
          return (
            deviceId !== undefined &&
            canHoldResourceCap(
              holdOf(deviceId),
              e.lpcCaps.filter((c) => c.resourceId === t.resourceId),
            )
          );
        }
        const devices = ctx.config.devices.flatMap((d) => holdOf(d.id) ?? []);
        return canHoldLocationCap(
          tracker.baseLoadKw(),
          devices,
          e.lpcCaps.filter((c) => c.resourceId === null),
        );
      },
      clock,
      logger: deps.logger,
      onQueued: () => late.outbox?.flush(),
    });
    const intake = createEventIntake({
      store: s,
      identity,
      clock,
      logger: deps.logger,
      onEvent: (e, stored) => {
        if (!stored) {
          unstored.set(e.id, e);
          ctx.storeHealth.eventFailure({ code: 'STORE_FAILED', message: `event ${e.id} could not be stored; held in memory`, atMs: clock.nowMs() });
        } else {
          unstored.delete(e.id);
          ctx.storeHealth.eventFailure(null);
          actions.handle(e);
        }
        eventsChanged();
        if (e.priceDeltas.length > 0) late.prices?.wake();
        if (e.eligibility) checkEligibility();
        late.planning?.request(`event ${e.payloadType}`);
      },
      onRefused: () => counters.refused('event', 'EVENT_OUT_OF_RANGE'),
    });
    ctx.parts.events = {
      intake,
      activeEvents,
      changed: eventsChanged,
      scan: () => {
        actions.scan();
        eventsChanged();
      },
      checkEligibility,
    };
    return null;
  });
}

/** The event path (polling, webhook or the fleet broker) into the intake; eligibility looked at once. */
export function eventsModule(ctx: AppContext): Module {
  return moduleOf(
    'events',
    async () => {
      const s = ctx.part('store');
      const events = ctx.part('events');
      const prices = ctx.part('prices');
      const loop = await ctx.part('upstream').startEvents({
        intake: events.intake,
        isKnownEvent: (id) => s.hasEvent(id),
        pricesChanged: () => prices.wake(),
        onRefused: (input, code) => ctx.counters.refused(input, code),
      });
      // Eligibility can change while the daemon was down; look once at start, then on each event.
      events.checkEligibility();
      return loop;
    },
    () => [jobHealth('events', ctx.parts.upstream?.health())],
  );
}
