import { defineConfig } from 'vitest/config';

/**
 * Whole homes, each the whole daemon against real peers on an accelerated clock: two
 * cars swapping chargers, the SG Ready heat pump and phase switching. They run on their own
 * (`npm run test:homes`), one at a time, beside the fault suite in CI.
 */
export const homeRuns = ['test/vehicle-swap.test.ts', 'test/heat-pump-daemon.test.ts', 'test/phase-switch-daemon.test.ts'];

export default defineConfig({
  test: {
    include: homeRuns,
    testTimeout: 60_000,
    hookTimeout: 300_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
