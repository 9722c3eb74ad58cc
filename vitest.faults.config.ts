import { defineConfig } from 'vitest/config';

/** The fault suite: the real daemon process against the demo world, one scenario per file. */
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Scenarios run on an accelerated clock where the daemon's CPU stalls become simulated minutes
    // without readings: one at a time, so that a scenario does not starve another.
    maxWorkers: 1,
    fileParallelism: false,
  },
});
