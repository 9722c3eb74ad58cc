import { describe, expect, it } from 'vitest';
import { describeSchedule, faultKinds, faultSchedule } from './fault-schedule.js';

const H = 3_600_000;
const span = { fromMs: 0, toMs: 36 * H };

describe('faultSchedule', () => {
  it('gives the same schedule for the same seed and span, and another for another seed', () => {
    expect(faultSchedule({ seed: 7, ...span })).toEqual(faultSchedule({ seed: 7, ...span }));
    expect(faultSchedule({ seed: 8, ...span })).not.toEqual(faultSchedule({ seed: 7, ...span }));
  });

  it('keeps faults in time order inside the span, clear of the quiet start and end', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const steps = faultSchedule({ seed, ...span, quietStartMs: H, quietEndMs: 3 * H });
      expect(steps.length).toBeGreaterThanOrEqual(2);
      expect(steps.length).toBeLessThanOrEqual(8);
      for (const [i, s] of steps.entries()) {
        expect(s.atMs).toBeGreaterThanOrEqual(H);
        expect(s.atMs).toBeLessThan(33 * H);
        if (i > 0) expect(s.atMs).toBeGreaterThanOrEqual(steps[i - 1]!.atMs);
        if (s.kind === 'daemon-restart') expect(s.spanMs).toBe(0);
        else if (s.kind === 'clock-step') expect(Math.abs(s.spanMs)).toBeGreaterThanOrEqual(60_000);
        else expect(s.spanMs).toBeGreaterThanOrEqual(60_000);
      }
    }
  });

  it('draws every kind of fault and clock steps both ways over many seeds', () => {
    const steps = Array.from({ length: 100 }, (_, i) => faultSchedule({ seed: i + 1, ...span })).flat();
    expect(new Set(steps.map((s) => s.kind))).toEqual(new Set(faultKinds));
    const clockSteps = steps.filter((s) => s.kind === 'clock-step');
    expect(clockSteps.some((s) => s.spanMs < 0) && clockSteps.some((s) => s.spanMs > 0)).toBe(true);
  });

  it('has nothing to schedule when the quiet start and end cover the span', () => {
    expect(faultSchedule({ seed: 1, fromMs: 0, toMs: 3 * H })).toEqual([]);
  });

  it('describes each step by its hour into the run', () => {
    expect(
      describeSchedule(
        [
          { kind: 'api-down', atMs: 1.5 * H, spanMs: 20 * 60_000 },
          { kind: 'daemon-restart', atMs: 2 * H, spanMs: 0 },
          { kind: 'clock-step', atMs: 3 * H, spanMs: -5 * 60_000 },
        ],
        0,
      ),
    ).toEqual(['+1.50 h api-down 20 min', '+2.00 h daemon-restart', '+3.00 h clock-step -5 min']);
  });
});
