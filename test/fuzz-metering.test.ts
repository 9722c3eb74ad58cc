/**
 * Property-based fuzzing of the pure energy code: `accumulate` (hourly energy from counter
 * readings) with NaN, negative, out-of-order (clock steps), repeated and large readings, and
 * `buildUsageReport` with arbitrary metered rows. No exception, no negative or NaN energy, and a
 * report only ever speaks about the event's own hours.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HOUR_MS, accumulate, initialMeteringState, type HourEnergy, type MeteringOptions, type MeteringState } from '../src/core/metering.js';
import { apiTimestamp, buildUsageReport, subjectOf, type HourQuality, type MeteredHour, type UsageTarget } from '../src/core/reports.js';

const y2000 = Date.UTC(2000, 0, 1);
const y2100 = Date.UTC(2100, 0, 1);
/** Valid JS dates end at ±8.64e15 ms; later stamps (1e25) are refused as invalid readings. */
const maxDateMs = 8.64e15;

/** Counter values: ordinary, tiny, negative, huge (refused above 1e12 kWh), non-finite. */
const kwhArb = fc.oneof(
  { weight: 5, arbitrary: fc.double({ min: 0, max: 100_000, noNaN: true }) },
  { weight: 1, arbitrary: fc.double({ noNaN: true }) },
  { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, 0, Number.MIN_VALUE, 999_999.99, 1e12, 1e308) },
);
/** Time steps: mostly seconds to minutes, sometimes hours or days, sometimes backwards or none. */
const stepArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 20 * 60_000 }) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 3 * HOUR_MS }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 * 24 * HOUR_MS }) },
  { weight: 1, arbitrary: fc.integer({ min: -2 * HOUR_MS, max: 0 }) },
);
const optionsArb: fc.Arbitrary<MeteringOptions> = fc.oneof(
  fc.constant({}),
  fc.record({ maxPowerKw: fc.double({ min: 0.1, max: 100, noNaN: true }) }),
  fc.record({ wrapKwh: fc.constantFrom(10_000, 100_000, 1e6), jitterKwh: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ maxGapMs: fc.integer({ min: 1, max: 6 * HOUR_MS }), maxGapHours: fc.integer({ min: 1, max: 48 }) }),
);

function checkHours(hours: readonly HourEnergy[], lastStart: { ms: number }): void {
  for (const h of hours) {
    expect(Number.isNaN(h.kwh), `NaN kWh in ${JSON.stringify(h)}`).toBe(false);
    expect(h.kwh, `negative kWh in ${JSON.stringify(h)}`).toBeGreaterThanOrEqual(0);
    expect(Number.isFinite(h.kwh)).toBe(true);
    expect(h.hourStartMs % HOUR_MS === 0).toBe(true);
    expect(h.hourStartMs).toBeGreaterThan(lastStart.ms);
    lastStart.ms = h.hourStartMs;
    expect(h.coveredMs).toBeGreaterThanOrEqual(0);
    expect(h.coveredMs).toBeLessThanOrEqual(HOUR_MS);
    if (h.quality === 'gap') expect(h.kwh === 0).toBe(true);
  }
}

function checkState(state: MeteringState): void {
  if (state.open) {
    expect(Number.isFinite(state.open.kwh)).toBe(true);
    expect(state.open.kwh).toBeGreaterThanOrEqual(0);
  }
  if (state.last) {
    expect(Number.isFinite(state.last.value)).toBe(true);
    expect(state.last.value).toBeGreaterThanOrEqual(0);
  }
}

/** Feeds the readings in turn; checks every step. */
function feed(samples: readonly { atMs: number; kwh: number }[], options: MeteringOptions): { ignored: number } {
  let state = initialMeteringState('counter');
  const lastStart = { ms: -Infinity };
  let ignored = 0;
  for (const s of samples) {
    const before = JSON.stringify(state);
    const r = accumulate(state, s, options);
    if (r.ignored) {
      ignored++;
      // A rejected reading changes nothing.
      expect(r.closedHours).toEqual([]);
      expect(JSON.stringify(r.state)).toBe(before);
    }
    if (!Number.isFinite(s.kwh) || s.kwh < 0 || !Number.isFinite(s.atMs)) expect(r.ignored).toBe('invalid');
    checkHours(r.closedHours, lastStart);
    // After a clock step back, hours start again from the hour of the new reading.
    if (r.discontinuity?.kind === 'clock-back') lastStart.ms = Math.floor(s.atMs / HOUR_MS) * HOUR_MS - 1;
    checkState(r.state);
    // The input state is never mutated.
    expect(JSON.stringify(state)).toBe(before);
    state = r.state;
  }
  return { ignored };
}

describe('accumulate under fuzzing', () => {
  it('realistic timelines with bad readings: no throw, no negative or NaN energy, hours in order', () => {
    const sequenceArb = fc.tuple(
      fc.integer({ min: y2000, max: y2100 }),
      fc.array(fc.tuple(stepArb, kwhArb), { minLength: 1, maxLength: 40 }),
      fc.boolean(),
    );
    fc.assert(
      fc.property(sequenceArb, optionsArb, ([start, steps, rising], options) => {
        let t = start;
        let base = 0;
        const samples = steps.map(([dt, kwh]) => {
          t += dt;
          // Half the sequences are a mostly rising counter (the realistic case) with noise on top.
          base += rising && Number.isFinite(kwh) ? Math.abs(kwh) / 1000 : 0;
          return { atMs: t, kwh: rising && Number.isFinite(kwh) && kwh >= 0 ? base : kwh };
        });
        feed(samples, options);
      }),
      { numRuns: 200 },
    );
  });

  it('arbitrary timestamps across the whole date range (few readings): same guarantees', () => {
    const atArb = fc.oneof(
      fc.integer({ min: -maxDateMs, max: maxDateMs }),
      fc.constantFrom(Number.NaN, Infinity, -Infinity, 0, -1, HOUR_MS - 1, HOUR_MS, 1e25, 1e25 + 2 ** 40),
    );
    fc.assert(
      fc.property(fc.array(fc.record({ atMs: atArb, kwh: kwhArb }), { maxLength: 4 }), optionsArb, (samples, options) => {
        feed(samples, { ...options, maxGapHours: Math.min(options.maxGapHours ?? 48, 48) });
      }),
      { numRuns: 200 },
    );
  });

  it('a steadily rising counter read every minute yields complete hours summing to the rise', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: y2000, max: y2100 }),
        fc.double({ min: 0, max: 10, noNaN: true }),
        fc.integer({ min: 61, max: 400 }),
        (start, kwhPerMin, n) => {
          let state = initialMeteringState('counter');
          const hours: HourEnergy[] = [];
          for (let i = 0; i < n; i++) {
            const r = accumulate(state, { atMs: start + i * 60_000, kwh: i * kwhPerMin });
            state = r.state;
            hours.push(...r.closedHours);
          }
          const total = hours.reduce((s, h) => s + h.kwh, 0) + (state.open?.kwh ?? 0);
          expect(total).toBeCloseTo((n - 1) * kwhPerMin, 6);
          for (const h of hours.slice(1)) expect(h.quality).toBe('complete');
        },
      ),
      { numRuns: 100 },
    );
  });
});

// ---------------------------------------------------------------------------------------------

const hourArb = fc.integer({ min: y2000 / HOUR_MS, max: y2100 / HOUR_MS }).map((h) => h * HOUR_MS);
const idArb = fc.constantFrom('res-a', 'res-b', 'loc-1', 'x');
const targetArb: fc.Arbitrary<UsageTarget> = fc.oneof(
  fc.record({ kind: fc.constant('resource' as const), resourceId: idArb, locationId: idArb, meterPointId: fc.option(idArb) }),
  fc.record({ kind: fc.constant('location' as const), locationId: idArb, meterPointId: idArb }),
);
/** Metered kWh: negative, tiny, huge, non-finite (insane values are left out like gaps). */
const meteredKwhArb = fc.oneof(
  fc.double({ noNaN: true }),
  fc.constantFrom(Number.NaN, Infinity, -Infinity, 0, -0, 0.0004, 0.0005, 1e-12, -1, 1e300, 1e308),
);
const qualityArb = fc.constantFrom<HourQuality>('measured', 'estimated', 'partial', 'gap');

describe('buildUsageReport under fuzzing', () => {
  it('points only at event hours, sorted and unique, kWh positive and finite; gaps are event hours', () => {
    const inputArb = fc
      .record({
        eventHours: fc.array(fc.oneof({ weight: 4, arbitrary: hourArb }, { weight: 1, arbitrary: fc.integer({ min: y2000, max: y2100 }) }), {
          maxLength: 30,
        }),
        targets: fc.array(targetArb, { maxLength: 3 }),
        extraRowHours: fc.array(hourArb, { maxLength: 10 }),
      })
      .chain(({ eventHours, targets, extraRowHours }) => {
        const rowHoursArb = fc.subarray([...eventHours, ...extraRowHours]);
        const rowsArb = fc.array(fc.tuple(rowHoursArb, fc.array(fc.tuple(meteredKwhArb, qualityArb), { minLength: 40, maxLength: 40 })), {
          minLength: targets.length,
          maxLength: targets.length,
        });
        return fc.tuple(fc.constant(eventHours), fc.constant(targets), rowsArb);
      });
    fc.assert(
      fc.property(inputArb, fc.string({ minLength: 1, maxLength: 8 }), ([eventHours, targets, rows], eventId) => {
        const metered = new Map<string, MeteredHour[]>();
        targets.forEach((t, i) => {
          const [hours, values] = rows[i]!;
          metered.set(
            subjectOf(t),
            hours.map((h, j) => ({ hourStartMs: h, kwh: values[j % values.length]![0], quality: values[j % values.length]![1] })),
          );
        });
        const { report, gaps } = buildUsageReport({ eventId, eventHoursMs: eventHours, targets, metered });
        const eventHourSet = new Set(eventHours.filter((h) => h % HOUR_MS === 0));
        const eventStamps = new Set([...eventHourSet].map(apiTimestamp));
        for (const g of gaps) expect(eventHourSet.has(g.hourStartMs)).toBe(true);
        if (report === null) return;
        expect(report.eventId).toBe(eventId);
        expect(report.payloads.length).toBeGreaterThan(0);
        expect(report.payloads.length).toBeLessThanOrEqual(targets.length);
        for (const p of report.payloads) {
          expect(p.points.length).toBeGreaterThan(0);
          expect(p.resolution).toBe('01:00:00');
          const stamps = p.points.map((x) => x.timestamp);
          expect([...stamps].sort()).toEqual(stamps);
          expect(new Set(stamps).size).toBe(stamps.length);
          for (const pt of p.points) {
            expect(eventStamps.has(pt.timestamp)).toBe(true);
            expect(Number.isNaN(pt.kiloWattHours)).toBe(false);
            expect(Number.isFinite(pt.kiloWattHours)).toBe(true);
            expect(pt.kiloWattHours).toBeGreaterThan(0);
          }
        }
        // The report round-trips through JSON unchanged (nothing becomes null).
        expect(JSON.parse(JSON.stringify(report))).toEqual(report);
      }),
      { numRuns: 300 },
    );
  });
});
