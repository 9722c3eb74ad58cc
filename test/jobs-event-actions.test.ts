import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { openStore, type Store } from '../src/store/index.js';
import { createEventIntake } from '../src/jobs/event-intake.js';
import { createEventActions } from '../src/jobs/event-actions.js';
import type { Identity } from '../src/spark/event-normalise.js';
import type { LpcTarget } from '../src/core/reports.js';

const hourMs = 3_600_000;
const t0 = Date.UTC(2026, 0, 14, 10);
const me: Identity = {
  userId: 'u1',
  locationId: 'home',
  resources: new Map([
    ['res-tank', 'tank'],
    ['res-car', 'car'],
  ]),
  meterPointIds: ['mp1'],
};
const iso = (ms: number): string => new Date(ms).toISOString();

const priceCurve = (id: string, hours: number[]) => ({
  id,
  createdAt: iso(t0),
  payload: {
    payloadType: 'PriceCurve',
    priceArea: 'NO1',
    targets: [{ resourceId: 'res-tank', locationId: 'home' }],
    priceCurveDelta: { currency: 'NOK', energyUnit: 'kWh', resolution: '01:00:00', points: hours.map((h) => ({ timestamp: iso(h), price: -0.5 })) },
  },
});
const resourceLpc = (id: string, resourceIds: string[], hours: number[]) => ({
  id,
  createdAt: iso(t0),
  payload: {
    payloadType: 'ResourceLPC',
    targets: resourceIds.map((resourceId) => ({
      resourceId,
      locationId: 'home',
      meterPointId: 'mp1',
      resolution: '01:00:00',
      points: hours.map((h) => ({ timestamp: iso(h), maxPowerInKiloWatts: 0 })),
    })),
  },
});

describe('event actions with the real store', () => {
  let dir: string;
  let store: Store;
  let clock: ManualClock;
  let queued: number;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wattshift-actions-'));
    store = openStore({ path: join(dir, 'db.sqlite') });
    clock = new ManualClock(t0);
    queued = 0;
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function wire(canHold: (t: LpcTarget) => boolean | 'unheard' = () => true) {
    const actions = createEventActions({
      store,
      identity: () => me,
      clock,
      logger: silentLogger(),
      subjectOf: (t) => (t.kind === 'resource' ? `device:${me.resources.get(t.resourceId)}` : null),
      canHold,
      reportGraceMs: 10 * 60_000,
      onQueued: () => void queued++,
    });
    const intake = createEventIntake({ store, identity: () => me, clock, logger: silentLogger(), onEvent: (e) => actions.handle(e) });
    return { actions, intake };
  }

  it('keeps a reservation active until its window ends, with no acknowledgement and no usage report', () => {
    const { intake, actions } = wire();
    const hours = [t0 + 3 * hourMs, t0 + 4 * hourMs];
    intake.accept(
      {
        id: 'res-1',
        createdAt: iso(t0),
        payload: {
          payloadType: 'LPCReservation',
          targets: [
            {
              locationId: 'home',
              meterPointId: 'mp1',
              resolution: '01:00:00',
              points: hours.map((h) => ({ timestamp: iso(h), maxPowerInKiloWatts: 1 })),
            },
          ],
        },
      },
      'event',
    );
    expect(store.getEvent('res-1')?.state).toBe('active');
    actions.scan();
    clock.set(t0 + 5 * hourMs - 1);
    actions.scan();
    expect(store.getEvent('res-1')?.state).toBe('active');
    clock.set(t0 + 5 * hourMs + hourMs);
    actions.scan();
    expect(store.getEvent('res-1')).toMatchObject({ state: 'done', stateDetail: 'reservation ended' });
    expect(store.listReports()).toEqual([]);
  });

  it('acknowledges an LPC at once, declining the targets it cannot hold', () => {
    const { intake } = wire((t) => t.kind === 'resource' && t.resourceId === 'res-tank');
    intake.accept(resourceLpc('lpc-1', ['res-tank', 'res-car'], [t0 + 5 * hourMs]), 'event');
    const [ack] = store.listReports();
    expect(ack).toMatchObject({ kind: 'lpcAck', eventId: 'lpc-1', state: 'pending', deadlineMs: t0 + 5 * hourMs });
    expect(ack!.body).toEqual({
      eventId: 'lpc-1',
      payloads: [
        {
          payloadType: 'ResourceLPCAcknowledgement',
          acknowledgedTargets: [{ meterPointId: 'mp1', locationId: 'home', resourceId: 'res-tank' }],
          declinedTargets: [{ meterPointId: 'mp1', locationId: 'home', resourceId: 'res-car' }],
        },
      ],
    });
    expect(store.getEvent('lpc-1')?.state).toBe('active');
    expect(queued).toBe(1);
  });

  it('queues the usage report only after the last hour and the grace, leaving gap hours out', () => {
    const { intake, actions } = wire();
    const hours = [t0 + hourMs, t0 + 2 * hourMs, t0 + 3 * hourMs];
    intake.accept(priceCurve('pc-1', hours), 'event');
    store.upsertHourly([
      { subject: 'device:tank', hourStartMs: hours[0]!, kwh: 1.2, quality: 'measured', samples: 60 },
      { subject: 'device:tank', hourStartMs: hours[1]!, kwh: 0, quality: 'gap', samples: 0 },
      { subject: 'device:tank', hourStartMs: hours[2]!, kwh: 0.4, quality: 'partial', samples: 20 },
    ]);
    clock.set(hours[2]! + hourMs + 9 * 60_000);
    actions.scan();
    expect(store.listReports()).toEqual([]);
    clock.set(hours[2]! + hourMs + 10 * 60_000);
    actions.scan();
    const [report] = store.listReports();
    expect(report?.kind).toBe('usage');
    expect((report!.body as { payloads: { points: unknown[] }[] }).payloads[0]!.points).toEqual([
      { timestamp: iso(hours[0]!), kiloWattHours: 1.2 },
      { timestamp: iso(hours[2]!), kiloWattHours: 0.4 },
    ]);
    expect(store.getEvent('pc-1')?.state).toBe('reportQueued');
    // A second scan queues nothing more.
    actions.scan();
    expect(store.listReports()).toHaveLength(1);
  });

  it('marks an event without consumption done instead of sending an empty report', () => {
    const { intake, actions } = wire();
    intake.accept(priceCurve('pc-2', [t0 + hourMs]), 'event');
    clock.set(t0 + 3 * hourMs);
    actions.scan();
    expect(store.listReports()).toEqual([]);
    expect(store.getEvent('pc-2')).toMatchObject({ state: 'done', stateDetail: 'no consumption in the event hours' });
  });

  it('acknowledges on the next scan an LPC stored before a crash cut its action short', () => {
    // Stored by an intake whose action never ran (the process died in between).
    const crashed = createEventIntake({ store, identity: () => me, clock, logger: silentLogger(), onEvent: () => undefined });
    crashed.accept(resourceLpc('lpc-2', ['res-tank'], [t0 + 5 * hourMs]), 'event');
    expect(store.listReports()).toEqual([]);
    wire().actions.scan();
    expect(store.listReports().map((r) => [r.kind, r.eventId])).toEqual([['lpcAck', 'lpc-2']]);
  });

  const ackOf = (eventId: string) => {
    const body = store.listReports().find((r) => r.kind === 'lpcAck' && r.eventId === eventId)?.body as
      { payloads: { acknowledgedTargets: { resourceId: string }[]; declinedTargets: { resourceId: string }[] }[] } | undefined;
    return (
      body && {
        acknowledged: body.payloads[0]!.acknowledgedTargets.map((t) => t.resourceId),
        declined: body.payloads[0]!.declinedTargets.map((t) => t.resourceId),
      }
    );
  };

  it('waits to answer for a device not heard from since the start, and answers once it is', () => {
    let carHeard = false;
    const { intake, actions } = wire((t) => (t.kind === 'resource' && t.resourceId === 'res-car' && !carHeard ? 'unheard' : true));
    intake.accept(resourceLpc('lpc-3', ['res-tank', 'res-car'], [t0 + 5 * hourMs]), 'event');
    expect(store.listReports()).toEqual([]);
    // The caps are kept meanwhile: the event is stored as received.
    expect(store.getEvent('lpc-3')?.state).toBe('received');
    clock.advance(60_000);
    actions.answerWaiting();
    actions.scan();
    expect(store.listReports()).toEqual([]);
    carHeard = true;
    clock.advance(60_000);
    actions.answerWaiting();
    expect(ackOf('lpc-3')).toEqual({ acknowledged: ['res-tank', 'res-car'], declined: [] });
    expect(store.getEvent('lpc-3')?.state).toBe('active');
    actions.answerWaiting();
    expect(store.listReports()).toHaveLength(1);
  });

  it('declines a target whose device stays unheard for ten minutes, or until the event starts if that is sooner', () => {
    const { intake, actions } = wire((t) => (t.kind === 'resource' && t.resourceId === 'res-car' ? 'unheard' : true));
    intake.accept(resourceLpc('lpc-4', ['res-tank', 'res-car'], [t0 + 5 * hourMs]), 'event');
    intake.accept(resourceLpc('lpc-5', ['res-car'], [t0 + 4 * 60_000]), 'event');
    clock.advance(4 * 60_000 - 1);
    actions.answerWaiting();
    expect(store.listReports()).toEqual([]);
    clock.advance(1);
    actions.answerWaiting();
    expect(ackOf('lpc-5')).toEqual({ acknowledged: [], declined: ['res-car'] });
    expect(ackOf('lpc-4')).toBeUndefined();
    clock.set(t0 + 10 * 60_000);
    actions.answerWaiting();
    expect(ackOf('lpc-4')).toEqual({ acknowledged: ['res-tank'], declined: ['res-car'] });
  });
});
