import { describe, expect, it } from 'vitest';
import type { OutboxSummary } from '../../store/types.js';
import { checkInvariants, floorGraceMs, storeBytesPerDay, type HomeSample, type RunRecord } from './invariants.js';

const H = 3_600_000;
const quietOutbox: OutboxSummary = { pending: 0, sending: 0, accepted: 2, rejected: 0, oldestPendingDeadlineMs: null, nextAttemptMs: null };
const sample = (atMs: number, extra: Partial<HomeSample> = {}): HomeSample => ({
  atMs,
  linesA: [10, 12, 11],
  tankC: 55,
  tankBlocked: false,
  ...extra,
});
const everyMinute = (fromMs: number, toMs: number, extra: Partial<HomeSample> = {}): HomeSample[] =>
  Array.from({ length: Math.floor((toMs - fromMs) / 60_000) + 1 }, (_, i) => sample(fromMs + i * 60_000, extra));

const run = (over: Partial<RunRecord> = {}): RunRecord => ({
  startMs: 0,
  endMs: 24 * H,
  fuseA: 25,
  tankFloorC: 45,
  samples: everyMinute(0, 2 * H),
  handovers: [],
  errors: [],
  uncaught: [],
  reports: [{ eventId: 'e1', createdAtMs: 20 * H, subjects: ['Consumption tank', 'Consumption goe'] }],
  outbox: quietOutbox,
  storeBytes: 1024 * 1024,
  ...over,
});

describe('checkInvariants', () => {
  it('finds nothing in a home that kept everything', () => {
    expect(checkInvariants(run())).toEqual([]);
  });

  it("finds a line over the fuse while the daemon was in control, not during a restart's handover", () => {
    const samples = [...everyMinute(0, H), sample(H + 60_000, { linesA: [25.4, 20, 20] })];
    expect(checkInvariants(run({ samples }))).toEqual([{ invariant: 'fuse', atMs: H + 60_000, detail: 'line at 25.40 A over the 25 A fuse' }]);
    expect(checkInvariants(run({ samples, handovers: [{ fromMs: H, toMs: H + 120_000 }] }))).toEqual([]);
  });

  it('finds a tank held off under its floor for longer than the grace, not for less', () => {
    const cold = { tankC: 44.5, tankBlocked: true };
    const short = [...everyMinute(0, H), ...everyMinute(H + 60_000, H + floorGraceMs, cold), ...everyMinute(H + floorGraceMs + 60_000, 2 * H)];
    expect(checkInvariants(run({ samples: short }))).toEqual([]);
    const long = [...everyMinute(0, H), ...everyMinute(H + 60_000, H + floorGraceMs + 120_000, cold)];
    expect(checkInvariants(run({ samples: long })).map((v) => [v.invariant, v.atMs])).toEqual([['comfort-floor', H + 60_000]]);
    // Cold but free to heat is the tank's own business.
    expect(checkInvariants(run({ samples: everyMinute(0, 2 * H, { tankC: 40, tankBlocked: false }) }))).toEqual([]);
  });

  it('counts an uncaught error and an error line of no known cause as a crash, a known outage as none', () => {
    const found = checkInvariants(
      run({
        uncaught: ['TypeError: x is undefined'],
        errors: [
          { code: 'INTERNAL', msg: 'tick failed', time: 5 },
          { msg: 'no code', time: 6 },
          { code: 'API_UNAVAILABLE', msg: 'the API is away', time: 7 },
        ],
      }),
    );
    expect(found.map((v) => v.invariant)).toEqual(['crash', 'crash', 'crash']);
  });

  it('finds a report accepted twice for one subject of one event', () => {
    const reports = [
      { eventId: 'e1', createdAtMs: 20 * H, subjects: ['Consumption tank'] },
      { eventId: 'e1', createdAtMs: 21 * H, subjects: ['Consumption tank'] },
      { eventId: 'e2', createdAtMs: 21 * H, subjects: ['Consumption tank'] },
    ];
    expect(checkInvariants(run({ reports }))).toEqual([
      { invariant: 'report-twice', atMs: 21 * H, detail: 'event e1 reported twice for Consumption tank' },
    ]);
  });

  it('finds a report rejected or still unsent past its deadline at the end, not one still within it', () => {
    expect(checkInvariants(run({ outbox: { ...quietOutbox, rejected: 1 } })).map((v) => v.invariant)).toEqual(['report-lost']);
    const twoRejected = [
      { code: 'REPORT_REJECTED', msg: 'report rejected', time: 9 },
      { code: 'REPORT_REJECTED', msg: 'report rejected', time: 10 },
    ];
    expect(checkInvariants(run({ errors: twoRejected }))).toEqual([
      { invariant: 'report-lost', atMs: 9, detail: 'the API rejected 2 report(s), the first: report rejected' },
    ]);
    const late = { ...quietOutbox, pending: 1, oldestPendingDeadlineMs: 23 * H };
    expect(checkInvariants(run({ outbox: late })).map((v) => v.invariant)).toEqual(['report-lost']);
    expect(checkInvariants(run({ outbox: { ...late, oldestPendingDeadlineMs: 30 * H } }))).toEqual([]);
  });

  it('finds a store grown past its budget for the days run', () => {
    expect(checkInvariants(run({ storeBytes: storeBytesPerDay + 1 })).map((v) => v.invariant)).toEqual(['store-growth']);
    expect(checkInvariants(run({ endMs: 48 * H, storeBytes: storeBytesPerDay + 1 }))).toEqual([]);
  });
});
