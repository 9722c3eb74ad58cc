import { defineConfig } from 'vitest/config';

/**
 * The week-long home (issue 17's done-when): the whole daemon against a home of real peers for a
 * simulated week. It runs on its own (`npm run test:week`), beside the fault suite in CI.
 */
export default defineConfig({
  test: {
    include: ['test/week/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 900_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
