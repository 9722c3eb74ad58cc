import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { isWattshiftError } from '../src/errors.js';
import { openStore, type ReportInput, type ReportRow, type Store } from '../src/store/index.js';
import { DAY_MS, eventInput, T0 } from './fixtures/store/helpers.js';
import { tempDir } from './helpers/temp-dir.js';

let dir: string;
let clock: ManualClock;
let store: Store;

beforeEach(() => {
  dir = tempDir('wattshift-store-');
  clock = new ManualClock(T0);
  store = openStore({ path: join(dir, 'w.db'), clock });
  store.saveEvent(eventInput('e1'));
  store.saveEvent(eventInput('e2'));
});
afterEach(() => {
  store.close();
});

function report(key: string, overrides: Partial<ReportInput> = {}): ReportInput {
  return { idempotencyKey: key, eventId: 'e1', kind: 'usage', body: { eventId: 'e1', payloads: [] }, nowMs: T0, ...overrides };
}

function expectCode(fn: () => unknown, code: string): void {
  try {
    fn();
  } catch (err) {
    expect(isWattshiftError(err) ? err.code : err).toBe(code);
    return;
  }
  throw new Error(`expected ${code}, nothing was thrown`);
}

describe('outbox: enqueue', () => {
  it('is idempotent on the key and returns the existing row untouched', () => {
    const first = store.enqueueReport(report('e1:usage', { deadlineMs: T0 + 30 * DAY_MS }));
    expect(first.created).toBe(true);
    expect(first.report).toMatchObject({ state: 'pending', attempts: 0, nextAttemptMs: T0, deadlineMs: T0 + 30 * DAY_MS });
    expect(first.report.body).toEqual({ eventId: 'e1', payloads: [] });
    store.markSending(first.report.id, T0 + 1);
    const again = store.enqueueReport(report('e1:usage', { body: { other: true } }));
    expect(again.created).toBe(false);
    expect(again.report.id).toBe(first.report.id);
    expect(again.report.state).toBe('sending');
    expect(again.report.body).toEqual({ eventId: 'e1', payloads: [] });
    expect(store.listReports()).toHaveLength(1);
  });

  it('refuses a report for an event that is not stored', () => {
    expectCode(() => store.enqueueReport(report('x:usage', { eventId: 'nope' })), 'INTERNAL');
    expect(store.listReports()).toEqual([]);
  });

  it('refuses a body that is not JSON', () => {
    expectCode(() => store.enqueueReport(report('e1:usage', { body: undefined })), 'INTERNAL');
    expectCode(() => store.enqueueReport(report('e1:usage', { kind: 'other' as 'usage' })), 'INTERNAL');
  });

  it('returns due reports earliest first and not those waiting for a retry time', () => {
    const a = store.enqueueReport(report('a', { nextAttemptMs: T0 + 50 })).report;
    const b = store.enqueueReport(report('b', { nextAttemptMs: T0 + 10 })).report;
    store.enqueueReport(report('c', { nextAttemptMs: T0 + 500 }));
    expect(store.dueReports(T0 + 100).map((r) => r.id)).toEqual([b.id, a.id]);
    expect(store.dueReports(T0 + 100, 1).map((r) => r.id)).toEqual([b.id]);
    expect(store.dueReports(T0)).toEqual([]);
  });
});

describe('outbox: transitions', () => {
  let r: ReportRow;
  beforeEach(() => {
    r = store.enqueueReport(report('e1:usage')).report;
  });

  it('goes pending → sending → accepted, counting attempts and keeping the remote id', () => {
    expect(store.markSending(r.id, T0 + 1)).toMatchObject({ state: 'sending', attempts: 1, updatedAtMs: T0 + 1 });
    expect(store.dueReports(T0 + 10)).toEqual([]);
    expect(store.markAccepted(r.id, T0 + 2, 'rep-9')).toMatchObject({ state: 'accepted', remoteId: 'rep-9' });
    // a repeated acceptance is harmless
    expect(store.markAccepted(r.id, T0 + 3).state).toBe('accepted');
    expect(store.getReport(r.id)?.remoteId).toBe('rep-9');
  });

  it('goes back to pending on a retryable failure, due at the given time', () => {
    store.markSending(r.id, T0 + 1);
    clock.set(T0 + 5);
    expect(store.markRetry(r.id, 'HTTP 503', T0 + 60_000)).toMatchObject({
      state: 'pending',
      lastError: 'HTTP 503',
      nextAttemptMs: T0 + 60_000,
      updatedAtMs: T0 + 5,
    });
    expect(store.dueReports(T0 + 59_999)).toEqual([]);
    expect(store.dueReports(T0 + 60_000).map((x) => x.id)).toEqual([r.id]);
    expect(store.markSending(r.id, T0 + 60_000).attempts).toBe(2);
  });

  it('keeps the reason of a rejection', () => {
    store.markSending(r.id, T0 + 1);
    expect(store.markRejected(r.id, '400: timestamps do not match', T0 + 2)).toMatchObject({
      state: 'rejected',
      lastError: '400: timestamps do not match',
    });
  });

  it('refuses illegal transitions and leaves the row as it was', () => {
    expectCode(() => store.markAccepted(r.id, T0), 'INTERNAL'); // pending → accepted
    expectCode(() => store.markRejected(r.id, 'x', T0), 'INTERNAL'); // pending → rejected
    expectCode(() => store.markRetry(r.id, 'x', T0), 'INTERNAL'); // pending → pending
    store.markSending(r.id, T0 + 1);
    expectCode(() => store.markSending(r.id, T0 + 2), 'INTERNAL'); // sending → sending
    store.markAccepted(r.id, T0 + 3);
    const accepted = store.getReport(r.id);
    expectCode(() => store.markSending(r.id, T0 + 4), 'INTERNAL'); // never back from accepted
    expectCode(() => store.markRetry(r.id, 'x', T0 + 4), 'INTERNAL');
    expectCode(() => store.markRejected(r.id, 'x', T0 + 4), 'INTERNAL');
    expect(store.getReport(r.id)).toEqual(accepted);
    expect(store.recoverInterrupted()).toEqual([]);
    expect(store.getReport(r.id)?.state).toBe('accepted');

    const other = store.enqueueReport(report('e1:lpcAck', { kind: 'lpcAck' })).report;
    store.markSending(other.id, T0);
    store.markRejected(other.id, 'no', T0);
    expectCode(() => store.markAccepted(other.id, T0), 'INTERNAL'); // never from rejected
    expectCode(() => store.markSending(other.id, T0), 'INTERNAL');
  });

  it('rounds fractional milliseconds (an accelerated clock) instead of failing', () => {
    const other = store.enqueueReport(report('frac', { nowMs: T0 + 0.4, nextAttemptMs: T0 + 10.5 })).report;
    expect(other).toMatchObject({ createdAtMs: T0, nextAttemptMs: T0 + 11 });
    expect(store.markSending(other.id, T0 + 20.7).updatedAtMs).toBe(T0 + 21);
    clock.set(T0 + 30.2);
    expect(store.markRetry(other.id, 'x', T0 + 99.9)).toMatchObject({ updatedAtMs: T0 + 30, nextAttemptMs: T0 + 100 });
  });

  it('refuses an unknown report id', () => {
    expectCode(() => store.markSending(999, T0), 'INTERNAL');
    expect(store.getReport(999)).toBeUndefined();
  });
});

describe('outbox: listing and summary', () => {
  it('filters by state and event, and summarises counts and the earliest unsent deadline', () => {
    const a = store.enqueueReport(report('a', { deadlineMs: T0 + 9 * DAY_MS })).report;
    const b = store.enqueueReport(report('b', { deadlineMs: T0 + 3 * DAY_MS, eventId: 'e2' })).report;
    const c = store.enqueueReport(report('c', { deadlineMs: T0 + 1 * DAY_MS })).report;
    store.enqueueReport(report('d', { nextAttemptMs: T0 + 7 }));
    store.markSending(b.id, T0);
    store.markSending(c.id, T0);
    store.markAccepted(c.id, T0);
    expect(store.outboxSummary()).toEqual({
      pending: 2,
      sending: 1,
      accepted: 1,
      rejected: 0,
      oldestPendingDeadlineMs: T0 + 3 * DAY_MS, // c is accepted, so b's deadline is the earliest
      nextAttemptMs: T0,
    });
    expect(store.listReports({ states: ['pending'] }).map((x) => x.idempotencyKey)).toEqual(['a', 'd']);
    expect(store.listReports({ eventId: 'e2' }).map((x) => x.id)).toEqual([b.id]);
    expect(store.listReports({ states: ['accepted', 'sending'] }).map((x) => x.id)).toEqual([b.id, c.id]);
    expect(a.state).toBe('pending');
  });

  it('summarises an empty outbox', () => {
    expect(store.outboxSummary()).toEqual({
      pending: 0,
      sending: 0,
      accepted: 0,
      rejected: 0,
      oldestPendingDeadlineMs: null,
      nextAttemptMs: null,
    });
  });
});

describe('store.transaction', () => {
  it('commits an enqueue and its event mark together', () => {
    store.transaction(() => {
      store.enqueueReport(report('e1:usage'));
      store.markEvent('e1', 'reportQueued');
    });
    expect(store.getEvent('e1')?.state).toBe('reportQueued');
    expect(store.listReports()).toHaveLength(1);
  });

  it('marks the event done when the last of its reports is accepted, not before', () => {
    store.transaction(() => {
      store.enqueueReport(report('e1:a'));
      store.enqueueReport(report('e1:b'));
      store.markEvent('e1', 'reportQueued');
    });
    const [a, b] = store.listReports();
    store.markSending(a!.id, T0);
    store.markAccepted(a!.id, T0);
    expect(store.getEvent('e1')?.state).toBe('reportQueued'); // e1:b is still pending
    store.markSending(b!.id, T0);
    store.markRetry(b!.id, 'API_UNAVAILABLE: down', T0 + 60_000);
    expect(store.getEvent('e1')?.state).toBe('reportQueued');
    store.markSending(b!.id, T0 + 60_000);
    store.markAccepted(b!.id, T0 + 60_000);
    expect(store.getEvent('e1')?.state).toBe('done');
  });

  it('rolls both back when the function throws, passing the error through unchanged', () => {
    const boom = new Error('boom');
    let thrown: unknown;
    try {
      store.transaction(() => {
        store.enqueueReport(report('e1:usage'));
        store.markEvent('e1', 'reportQueued');
        throw boom;
      });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBe(boom);
    expect(store.getEvent('e1')?.state).toBe('received');
    expect(store.listReports()).toEqual([]);
    // and the store still works afterwards
    expect(store.enqueueReport(report('e1:usage')).created).toBe(true);
  });

  it('rolls back a non-durable transaction too', () => {
    expect(() =>
      store.transaction(
        () => {
          store.upsertHourly([{ subject: 'tank', hourStartMs: T0, kwh: 1, quality: 'measured', samples: 1 }]);
          store.saveCheckpoints([{ deviceId: 'm', valueKwh: 5, atMs: T0 }]);
          throw new Error('boom');
        },
        { durable: false },
      ),
    ).toThrow('boom');
    expect(store.readHourly('tank', T0, T0 + DAY_MS)).toEqual([]);
    expect(store.loadCheckpoints()).toEqual([]);
  });
});
