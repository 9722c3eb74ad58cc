/**
 * The fault explorer in CI: a fixed set of seeds, each a day and a half of the week-long home under
 * its own schedule of outages, restarts and clock steps, must keep every invariant. (A seed's
 * schedule is the same every run; with restarts in it the run itself is not yet: see
 * docs/architecture.md, "The simulation kernel".)
 */
import { describe, expect, it } from 'vitest';
import { exploreSeed, seedReport } from '../../src/simulation/explore/explore-seed.js';

/** Long enough for the first price-curve event's report (a day and a half in). */
const hours = 36;

describe('the fault explorer', () => {
  it.each([1, 2])(
    'seed %i keeps every invariant over a day and a half',
    async (seed) => {
      const result = await exploreSeed(seed, hours);
      expect(result.violations, seedReport(result).join('\n')).toEqual([]);
      expect(result.schedule.length).toBeGreaterThanOrEqual(2);
      expect(result.figures.reportsAccepted).toBeGreaterThan(0);
    },
    600_000,
  );
});
