/**
 * Events → actions → planning: the intake every event path feeds (deduplicated, stored, then acted
 * on), the actions (LPC acknowledgement, reports) and the events that shape prices and caps now.
 * The events loop itself (polling, webhook or the fleet broker) starts later, once the jobs it
 * wakes are running.
 */
import { moduleOf, providing, type Module, type Part } from '../lifecycle.js';
import { createEventIntake } from '../jobs/event-intake.js';
import type { EventIntake } from '../upstream/port.js';
import type { Upstream } from '../upstream/index.js';
import type { Store } from '../store/types.js';
import type { HomeTracker } from '../jobs/home-tracker.js';
import type { PriceRefresh } from './pricing.js';
import { createEventActions, homeEventOf } from '../jobs/event-actions.js';
import type { HomeEvent, Identity } from '../spark/event-normalise.js';
import { vehicleSubject } from '../jobs/vehicle-metering.js';
import { canHoldLocationCap, canHoldResourceCap } from '../core/cap-hold.js';
import { deviceHoldOf } from '../devices/cap-hold.js';
import { jobHealth, type AppContext } from './context.js';
import type { DeviceParts } from './devices.js';

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

export interface EventIntakeNeeds {
  store: Store;
  upstream: Upstream;
  me: Identity;
  tracker: HomeTracker;
  devices: Pick<DeviceParts, 'built' | 'supervised'>;
}

export function eventIntakeModule(ctx: AppContext, needs: EventIntakeNeeds): Part<EventState> {
  const { clock, deps, slotMs, counters, mainMeterId, subjectOfDevice, bus } = ctx;
  return providing('event-intake', () => {
    const { store: s, upstream: up, tracker, me } = needs;
    const { built, supervised } = needs.devices;
    // The jobs these callbacks wake (outbox, prices, planning) start later: they listen on the bus.
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
      // A device not heard from since the start is neither up nor down yet: the answer waits for it.
      canHold: (t, e) => {
        // The device's stand toward a cap, and whether it has answered since the start (health read once).
        const standOf = (deviceId: string) => {
          const d = ctx.config.devices.find((x) => x.id === deviceId);
          const b = built.get(deviceId);
          const health = supervised.get(deviceId)?.health();
          const hold = d && b ? deviceHoldOf(d, b.capabilities, health?.state === 'up') : undefined;
          return hold && { hold, unheard: health?.unheard === true };
        };
        if (t.kind === 'resource') {
          const deviceId = me.resources.get(t.resourceId);
          const stand = deviceId === undefined ? undefined : standOf(deviceId);
          const points = e.lpcCaps.filter((c) => c.resourceId === t.resourceId);
          // Declined on the device's own terms needs no answer from it.
          if (!stand || !canHoldResourceCap({ ...stand.hold, up: true }, points)) return false;
          return stand.unheard ? 'unheard' : canHoldResourceCap(stand.hold, points);
        }
        const points = e.lpcCaps.filter((c) => c.resourceId === null);
        const stands = ctx.config.devices.flatMap((d) => standOf(d.id) ?? []);
        // With every unheard device up, the best case: if even that cannot hold, nothing is waited for.
        const best = canHoldLocationCap(
          tracker.baseLoadKw(),
          stands.map((s) => (s.unheard ? { ...s.hold, up: true } : s.hold)),
          points,
        );
        return best && stands.some((s) => s.unheard) ? 'unheard' : best;
      },
      clock,
      logger: deps.logger,
      onQueued: () => bus.emit('reportQueued'),
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
        if (e.priceDeltas.length > 0) bus.emit('pricesChanged');
        if (e.eligibility) checkEligibility();
        bus.emit('replanWanted', { reason: `event ${e.payloadType}` });
      },
      onRefused: () => counters.refused('event', 'EVENT_OUT_OF_RANGE'),
    });
    // Answers waiting for a device are looked at again once the devices have been read.
    const offTicked = bus.on('controlTicked', () => actions.answerWaiting());
    const events: EventState = {
      intake,
      activeEvents,
      changed: eventsChanged,
      scan: () => {
        actions.scan();
        eventsChanged();
      },
      checkEligibility,
    };
    return { made: { stop: async () => offTicked() }, provides: events };
  });
}

/** The event path (polling, webhook or the fleet broker) into the intake; eligibility looked at once. */
export function eventsModule(ctx: AppContext, needs: { store: Store; upstream: Upstream; events: EventState; prices: PriceRefresh }): Module {
  return moduleOf(
    'events',
    async () => {
      const { store: s, events, prices } = needs;
      const loop = await needs.upstream.startEvents({
        intake: events.intake,
        isKnownEvent: (id) => s.hasEvent(id),
        pricesChanged: () => prices.wake(),
        onRefused: (input, code) => ctx.counters.refused(input, code),
      });
      // Eligibility can change while the daemon was down; look once at start, then on each event.
      events.checkEligibility();
      return loop;
    },
    () => [jobHealth('events', needs.upstream.health())],
  );
}
